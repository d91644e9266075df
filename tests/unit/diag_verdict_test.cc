// Status of a diagnosis (analysis/diagnosis/status): "healthy" only for a job that was examined (2+ ranks,
// 2+ common steps, collectives matched, nothing doubtful); "inconclusive" with a reason for one rank, no
// common steps, no collectives, inputs of different runs or world sizes, missing ranks, left-out inputs,
// many skipped events, large clock residuals; "findings" keeps the reasons as caveats.
#include "analysis/diagnosis/verdict.h"

#include <gtest/gtest.h>

#include <regex>
#include <string>
#include <string_view>
#include <vector>

#include "diag_test_util.h"

namespace strata::diagnosis {
namespace {

using namespace strata::diagtest;  // NOLINT(google-build-using-namespace)

// A regular expression that matches `text` and nothing else.
std::string Literal(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (std::string_view("^$\\.*+?()[]{}|/").find(c) != std::string_view::npos) out += '\\';
    out += c;
  }
  return out;
}

// Whether `text` is the sentence of an entry of the one table (verdict_notes.h): its wording with each "{}"
// standing for any text.
bool IsATableEntry(const std::string& text) {
  for (const NoteReason& row : kNoteReasons) {
    std::string pattern;
    const std::string_view w = row.wording;
    size_t from = 0;
    for (size_t at = w.find("{}"); at != std::string_view::npos; at = w.find("{}", from)) {
      pattern += Literal(w.substr(from, at - from)) + "(.*)";
      from = at + 2;
    }
    pattern += Literal(w.substr(from));
    if (std::regex_match(text, std::regex(pattern))) return true;
  }
  return false;
}

// Whether a reason of `r` holds `part`; every reason of `r` must be an entry of the one table, never a free
// sentence (issue 50), which every test of the status checks through here.
bool HasReason(const DiagnosisResult& r, const std::string& part) {
  for (const std::string& s : r.status_reasons) EXPECT_TRUE(IsATableEntry(s)) << "not a table entry: " << s;
  for (const std::string& s : r.status_reasons)
    if (s.find(part) != std::string::npos) return true;
  return false;
}

std::string Reasons(const DiagnosisResult& r) {
  std::string s;
  for (const std::string& x : r.status_reasons) s += "\n  " + x;
  return s;
}

DdpSpec Clean(int ranks, int steps) {
  DdpSpec spec;
  spec.ranks = ranks;
  spec.steps = steps;
  spec.plan = [](int r, int s) { return BasicStep((80 + (r + s) % 2) * kMs); };
  return spec;
}

DdpSpec Slow(int ranks, int steps) {
  DdpSpec spec = Clean(ranks, steps);
  spec.plan = [](int r, int) { return BasicStep((80 + (r == 1 ? 25 : 0)) * kMs); };
  return spec;
}

TEST(DiagStatus, CleanJobExaminedIsHealthyWithoutReasons) {
  const DiagnosisResult r = DiagnoseDdp(Clean(4, 5));
  EXPECT_EQ(r.status, diagnosis::Verdict::kHealthy) << Reasons(r);
  EXPECT_TRUE(r.status_reasons.empty()) << Reasons(r);
  EXPECT_GT(r.matched, 0u);
}

TEST(DiagStatus, AStragglerWhoseFindingIsBelowTheMinimumEffectKeepsIt) {
  // Rank 1 is 10 ms (12.5 %) late in 3 of 30 steps: a straggler in those steps, but fixing it saves ~1.3 %.
  // Its finding is its cause and stays under the minimum effect (shown_findings.h); no reason then says that
  // a finding is missing.
  DdpSpec spec = Clean(4, 30);
  spec.plan = [](int r, int s) { return BasicStep((80 + (r == 1 && s % 10 == 5 ? 10 : 0)) * kMs); };
  const DiagnosisResult r = DiagnoseDdp(spec);
  ASSERT_FALSE(r.stragglers.empty()) << Reasons(r);
  EXPECT_EQ(r.stragglers.front().rank, RankNumber(1));
  ASSERT_EQ(r.findings.size(), 1u);
  EXPECT_EQ(r.findings[0].rank, RankNumber(1));
  EXPECT_LT(r.findings[0].impact_pct, 100.0 * diagnosis::thresholds::kMinEffect);
  EXPECT_EQ(r.status, diagnosis::Verdict::kFindings);
  EXPECT_FALSE(HasReason(r, "cause not determined")) << Reasons(r);
}

TEST(DiagStatus, OneRankIsInconclusive) {
  const DiagnosisResult r = DiagnoseDdp(Clean(1, 5));
  EXPECT_EQ(r.status, diagnosis::Verdict::kInconclusive);
  EXPECT_TRUE(HasReason(r, "only 1 rank")) << Reasons(r);
}

TEST(DiagStatus, RanksWithNoStepInCommonAreInconclusive) {
  DdpSpec a = Clean(2, 4);
  DdpSpec b = Clean(2, 4);
  b.first_step = 100;
  const std::vector<std::string> ja = JobJsons(a, SimulateDdp(a));
  const std::vector<std::string> jb = JobJsons(b, SimulateDdp(b));
  const TraceStore store = LoadRankJsons({ja[0], jb[1]});
  const DiagnosisResult r = Diagnose(store);
  EXPECT_EQ(r.status, diagnosis::Verdict::kInconclusive);
  EXPECT_TRUE(r.steps.empty());
  EXPECT_TRUE(HasReason(r, "no step is present on every rank")) << Reasons(r);
}

TEST(DiagStatus, OneCommonStepIsInconclusive) {
  const DiagnosisResult r = DiagnoseDdp(Clean(2, 1));
  EXPECT_EQ(r.status, diagnosis::Verdict::kInconclusive);
  EXPECT_TRUE(HasReason(r, "only 1 step is common")) << Reasons(r);
}

TEST(DiagStatus, NoCollectivesIsInconclusive) {
  DdpSpec spec = Clean(2, 4);
  spec.collective = "aten::copy_";  // not a collective: nothing to match across ranks
  const DiagnosisResult r = DiagnoseDdp(spec);
  EXPECT_EQ(r.status, diagnosis::Verdict::kInconclusive);
  EXPECT_EQ(r.matched, 0u);
  EXPECT_TRUE(HasReason(r, "no collective operation was matched")) << Reasons(r);
}

/// Rewrites the world size every rank's trace states.
std::vector<std::string> WithWorld(std::vector<std::string> jsons, const std::vector<int>& world) {
  for (size_t r = 0; r < jsons.size(); ++r) {
    const std::string from = "\"world_size\": " + std::to_string(jsons.size());
    const size_t at = jsons[r].find(from);
    EXPECT_NE(at, std::string::npos);
    jsons[r].replace(at, from.size(), "\"world_size\": " + std::to_string(world[r]));
  }
  return jsons;
}

TEST(DiagStatus, InputsThatDisagreeOnTheWorldSizeAreInconclusive) {
  const DdpSpec spec = Clean(2, 4);
  const DiagnosisResult r = Diagnose(LoadRankJsons(WithWorld(JobJsons(spec, SimulateDdp(spec)), {2, 8})));
  EXPECT_EQ(r.status, diagnosis::Verdict::kInconclusive);
  EXPECT_TRUE(HasReason(r, "disagree on the world size")) << Reasons(r);
}

TEST(DiagStatus, MissingRanksOfTheWorldAreInconclusiveAndACaveatBesideFindings) {
  const DdpSpec clean = Clean(2, 4);
  const DiagnosisResult r = Diagnose(LoadRankJsons(WithWorld(JobJsons(clean, SimulateDdp(clean)), {128, 128})));
  EXPECT_EQ(r.status, diagnosis::Verdict::kInconclusive);
  EXPECT_TRUE(HasReason(r, "2 of the job's 128 ranks were given")) << Reasons(r);

  const DdpSpec slow = Slow(2, 4);
  const DiagnosisResult s = Diagnose(LoadRankJsons(WithWorld(JobJsons(slow, SimulateDdp(slow)), {8, 8})));
  EXPECT_EQ(s.status, diagnosis::Verdict::kFindings);
  ASSERT_FALSE(s.stragglers.empty());
  EXPECT_EQ(s.stragglers[0].rank, RankNumber(1));
  EXPECT_TRUE(HasReason(s, "2 of the job's 8 ranks were given")) << Reasons(s);
}

TEST(DiagStatus, MixedRunsAreInconclusiveEvenWithFindings) {
  // A slow rank beside a file of another run (world sizes 2 and 8): findings, but the comparison is void.
  const DdpSpec slow = Slow(2, 4);
  const DiagnosisResult r = Diagnose(LoadRankJsons(WithWorld(JobJsons(slow, SimulateDdp(slow)), {2, 8})));
  EXPECT_FALSE(r.stragglers.empty());
  EXPECT_EQ(r.status, diagnosis::Verdict::kInconclusive) << Reasons(r);
  ASSERT_FALSE(r.status_reasons.empty());
  EXPECT_NE(r.status_reasons[0].find("disagree on the world size"), std::string::npos) << Reasons(r);
  // Recorded hours apart, same verdict.
  DdpSpec apart = Slow(2, 4);
  const int64_t epoch = 1'700'000'000 * kSec;
  apart.clock_offset = {epoch, epoch + 3 * 3600 * kSec};
  EXPECT_EQ(DiagnoseDdp(apart).status, diagnosis::Verdict::kInconclusive);
}

TEST(DiagStatus, ALargeUnexplainedOpTableWhatIfSlowdownIsNeverHealthy) {
  DiagnosisResult r = DiagnoseDdp(Clean(4, 5));
  ASSERT_EQ(r.status, diagnosis::Verdict::kHealthy);
  const TraceStore store = LoadDdp(Clean(4, 5));
  r.whatif.slowdown = 1.0 / (1.0 - thresholds::kMaxUnexplainedWaste - 0.05);
  // The phase replay of traces: a large S on a clean job is the jitter of many ranks, not a verdict.
  AssessStatus(store, &r);
  EXPECT_EQ(r.status, diagnosis::Verdict::kHealthy) << Reasons(r);
  r.whatif.model = WhatIfModel::kOpGraphReplay;
  AssessStatus(store, &r);
  EXPECT_EQ(r.status, diagnosis::Verdict::kInconclusive);
  EXPECT_TRUE(HasReason(r, "no finding explains it")) << Reasons(r);
  r.whatif.slowdown = 1.0 / (1.0 - thresholds::kMaxUnexplainedWaste + 0.05);  // within the jitter allowance
  AssessStatus(store, &r);
  EXPECT_EQ(r.status, diagnosis::Verdict::kHealthy) << Reasons(r);
}

TEST(DiagStatus, InputsRecordedFarApartInTimeAreInconclusive) {
  DdpSpec spec = Clean(2, 4);
  const int64_t epoch = 1'700'000'000 * kSec;            // Kineto's clock: time since 1970 (here Nov 2023)
  spec.clock_offset = {epoch, epoch + 3 * 3600 * kSec};  // three hours apart: not one run
  const DiagnosisResult r = DiagnoseDdp(spec);
  EXPECT_EQ(r.status, diagnosis::Verdict::kInconclusive);
  EXPECT_TRUE(HasReason(r, "recorded at different times")) << Reasons(r);
  EXPECT_TRUE(HasReason(r, "to compare two runs: strata diff BASE TEST")) << Reasons(r);
  // Seconds apart is clock skew within one run, not two runs.
  spec.clock_offset = {epoch, epoch + 2 * kSec};
  EXPECT_EQ(DiagnoseDdp(spec).status, diagnosis::Verdict::kHealthy);
  // Clocks that are not epoch-based (PyTorch 1.x: each process from its own start) are never compared.
  spec.clock_offset = {0, 3 * 3600 * kSec};
  EXPECT_EQ(DiagnoseDdp(spec).status, diagnosis::Verdict::kHealthy);
}

TEST(DiagStatus, LeftOutInputsMakeAHealthyLookingJobInconclusive) {
  const TraceStore store = LoadDdp(Clean(2, 4));
  DiagnoseOptions options;
  options.left_out.push_back({"/x/rank-2.json", "/x/rank-2.json: truncated at byte 10"});
  const DiagnosisResult r = Diagnose(store, options);
  EXPECT_EQ(r.status, diagnosis::Verdict::kInconclusive);
  EXPECT_TRUE(HasReason(r, "/x/rank-2.json was left out")) << Reasons(r);
  ASSERT_EQ(r.left_out.size(), 1u);
}

TEST(DiagStatus, ManySkippedEventsAreInconclusiveAFewAreNot) {
  TraceStore store = LoadDdp(Clean(2, 4));
  const uint64_t events = store.inputs[0].events;
  store.inputs[0].skipped.Add(SkipId::kNegativeDuration, events / 200);  // 0.5 %: fine
  EXPECT_EQ(Diagnose(store).status, diagnosis::Verdict::kHealthy);
  store.inputs[0].skipped.Add(SkipId::kNegativeDuration, events / 20 - events / 200);  // 5 %
  const DiagnosisResult r = Diagnose(store);
  EXPECT_EQ(r.status, diagnosis::Verdict::kInconclusive);
  EXPECT_TRUE(HasReason(r, "were skipped (most: negative_duration")) << Reasons(r);
}

// Events skipped as expected and harmless (info severity in the skip-reason table: phases strata does not
// use, duplicated rows) do not mean missed work; malformed or lost events do.
TEST(DiagStatus, InfoSkipsDoNotMakeAJobInconclusive) {
  TraceStore store = LoadDdp(Clean(2, 4));
  const uint64_t events = store.inputs[0].events;
  store.inputs[0].skipped.Add(SkipId::kUnsupportedPhase, events / 2, "P");
  store.inputs[0].skipped.Add(SkipId::kDuplicateRow, events / 10);
  EXPECT_EQ(Diagnose(store).status, diagnosis::Verdict::kHealthy) << Reasons(Diagnose(store));
  store.inputs[0].skipped.Add(SkipId::kBeginWithoutEnd, events / 20);  // data loss, 5 %
  const DiagnosisResult r = Diagnose(store);
  EXPECT_EQ(r.status, diagnosis::Verdict::kInconclusive);
  EXPECT_TRUE(HasReason(r, "were skipped (most: begin_without_end")) << Reasons(r);
}

TEST(DiagStatus, LargeClockResidualAgainstTheStepBlocksHealthy) {
  const TraceStore store = LoadDdp(Clean(2, 4));
  DiagnosisResult r = Diagnose(store);
  ASSERT_EQ(r.status, diagnosis::Verdict::kHealthy);
  r.clock_residual_us = 0.2 * r.step_time_median_ms * 1000.0;
  AssessStatus(store, &r);
  EXPECT_EQ(r.status, diagnosis::Verdict::kInconclusive);
  EXPECT_TRUE(HasReason(r, "collective completions still differ")) << Reasons(r);
}

TEST(DiagStatus, ManyUnmatchedCollectiveCallsBlockHealthyAFewAreACaveat) {
  const TraceStore store = LoadDdp(Clean(2, 4));
  DiagnosisResult r = Diagnose(store);
  r.unmatched_collective_calls = 1;
  r.matched = 20;
  AssessStatus(store, &r);
  EXPECT_EQ(r.status, diagnosis::Verdict::kHealthy);
  EXPECT_TRUE(HasReason(r, "1 collective calls")) << Reasons(r);
  r.unmatched_collective_calls = 30;
  AssessStatus(store, &r);
  EXPECT_EQ(r.status, diagnosis::Verdict::kInconclusive);
}

TEST(DiagStatus, BlockingReasonsComeFirst) {
  const TraceStore store = LoadDdp(Clean(2, 4));
  DiagnosisResult r = Diagnose(store);
  r.unmatched_collective_calls = 1;
  r.matched = 20;
  r.left_out.push_back({"/x/a.json", "bad"});
  AssessStatus(store, &r);
  ASSERT_EQ(r.status_reasons.size(), 2u);
  EXPECT_NE(r.status_reasons[0].find("left out"), std::string::npos);
  EXPECT_NE(r.status_reasons[1].find("collective calls"), std::string::npos);
}

}  // namespace
}  // namespace strata::diagnosis
