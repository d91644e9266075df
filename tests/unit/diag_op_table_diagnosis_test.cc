// Op-table diagnosis (analysis/diagnosis/op_table_diagnosis) through Diagnose() on the three jobs of
// ../shared/datasets/straggler-whatif (skipped when absent):
//  - AR (one worker slowed artificially): the top straggler is that worker (dp 0, stage 0), the first
//    finding slow_compute on it;
//  - ST (the last pipeline stage is slower): the first finding is stage_imbalance of stage 3, no straggler;
//  - SE (sequence-length imbalance across dp ranks, plus a long last stage): the first finding is
//    data_imbalance, no straggler.
#include "analysis/diagnosis/op_table_diagnosis.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <variant>
#include <vector>

#include "analysis/diagnosis/diagnose.h"
#include "analysis/job_summary.h"
#include "importers/byte_source.h"
#include "importers/job_loader.h"
#include "reports/summary_report.h"
#include "test_util.h"
#include "whatif_test_util.h"

namespace strata::diagnosis {
namespace {

using whatif::testing::DatasetPath;
const TraceStore* Load(const std::string& name) { return whatif::testing::LoadDataset(name); }

int32_t RankOf(const TraceStore& store, int32_t dp, int32_t stage) {
  for (const RankInfo& r : store.ranks)
    if (r.dp_rank == dp && r.pp_stage == stage) return r.rank;
  ADD_FAILURE() << "no worker at dp " << dp << " stage " << stage;
  return -1;
}

TEST(DiagOpTableDiagnosis, ArOneSlowWorker) {
  const TraceStore* store = Load("AR");
  if (store == nullptr) {
    GTEST_SKIP() << DatasetPath("AR") << " is absent (../shared)";
  }
  const DiagnosisResult r = Diagnose(*store);
  EXPECT_EQ(model::StepSourceName(r.step_source), "op-table");
  EXPECT_EQ(r.whatif.model, WhatIfModel::kOpGraphReplay);
  EXPECT_NEAR(r.whatif.slowdown, 1.973, 0.01);
  ASSERT_TRUE(r.layout.op_table.has_value());
  EXPECT_EQ(r.layout.op_table->dp, 4);
  EXPECT_EQ(r.layout.op_table->pp, 4);
  const int32_t slowed = RankOf(*store, 0, 0);
  ASSERT_FALSE(r.stragglers.empty());
  EXPECT_EQ(r.stragglers[0].rank, RankNumber(slowed));
  EXPECT_TRUE(r.stragglers[0].persistent);
  ASSERT_FALSE(r.findings.empty());
  const Finding& f = r.findings[0];
  EXPECT_EQ(f.cause, Cause::kSlowCompute);
  EXPECT_EQ(f.rank, RankNumber(slowed));
  EXPECT_EQ(f.stage, 0);
  EXPECT_EQ(f.layer, Layer::kGpu);
  ASSERT_TRUE(f.op.has_value());
  EXPECT_TRUE(*f.op == "forward-compute" || *f.op == "backward-compute") << *f.op;
  EXPECT_GT(f.impact_pct, 30.0);  // S ≈ 1.97: about half the step
  // No other worker is named.
  for (const auto& st : r.stragglers) EXPECT_EQ(st.rank, RankNumber(slowed));
  for (size_t i = 1; i < r.findings.size(); ++i) EXPECT_LE(r.findings[i].impact_pct, f.impact_pct);
}

TEST(DiagOpTableDiagnosis, StLastStageSlower) {
  const TraceStore* store = Load("ST");
  if (store == nullptr) {
    GTEST_SKIP() << DatasetPath("ST") << " is absent (../shared)";
  }
  const DiagnosisResult r = Diagnose(*store);
  EXPECT_TRUE(r.stragglers.empty());
  ASSERT_FALSE(r.findings.empty());
  const Finding& f = r.findings[0];
  EXPECT_EQ(f.cause, Cause::kStageImbalance);
  EXPECT_EQ(f.stage, 3);
  EXPECT_FALSE(f.rank.has_value());  // not a single worker
  EXPECT_EQ(std::set<RankNumber>(f.ranks.begin(), f.ranks.end()),
            (std::set<RankNumber>{RankNumber(RankOf(*store, 0, 3)), RankNumber(RankOf(*store, 1, 3))}));
  EXPECT_GT(f.impact_pct, 3.0);
  EXPECT_GT(r.whatif.by_stage.at("3"), r.whatif.by_stage.at("0") + 0.1);
  for (const auto& other : r.findings) EXPECT_NE(other.cause, Cause::kSlowCompute);
}

TEST(DiagOpTableDiagnosis, SeDataImbalance) {
  const TraceStore* store = Load("SE");
  if (store == nullptr) {
    GTEST_SKIP() << DatasetPath("SE") << " is absent (../shared)";
  }
  const DiagnosisResult r = Diagnose(*store);
  EXPECT_TRUE(r.stragglers.empty());
  ASSERT_FALSE(r.findings.empty());
  const Finding& f = r.findings[0];
  EXPECT_EQ(f.cause, Cause::kDataImbalance);
  EXPECT_FALSE(f.rank.has_value());
  EXPECT_GE(f.ranks.size(), 4u);  // many dp ranks take turns
  EXPECT_GT(f.impact_pct, 3.0);
  // Named by the one rule: its evidence covers at least half of the loss no stage finding explains.
  EXPECT_GE(f.confidence, 0.5);
  // The long last stage (stage 1 of 2) is reported too, after it.
  bool last_stage = false;
  for (size_t i = 1; i < r.findings.size(); ++i)
    last_stage |= r.findings[i].cause == Cause::kStageImbalance && r.findings[i].stage == 1;
  EXPECT_TRUE(last_stage);
}

}  // namespace
}  // namespace strata::diagnosis

namespace strata::diagnosis {
namespace {

/// The decompressed text of a dataset file.
std::string DatasetText(const std::string& path) {
  auto src = ByteSource::Open(path);
  if (!src.ok()) return "";
  std::string text, chunk(1 << 20, '\0');
  while (true) {
    auto got = src.value()->Read(chunk.data(), chunk.size());
    if (!got.ok() || got.value() == 0) break;
    text.append(chunk.data(), got.value());
  }
  return text;
}

DiagnosisResult DiagnoseText(const std::string& text) {
  ::strata::testing::TempFile f(text, ".csv");
  auto job = LoadJob({f.path()}, LoadOptions{});
  EXPECT_TRUE(job.ok()) << job.error();
  return job.ok() ? Diagnose(job.value().store) : DiagnosisResult{};
}

TEST(DiagOpTableDiagnosis, BadRowsDoNotChangeTheVerdictOfTheGoodOnes) {
  const std::string text = DatasetText(DatasetPath("AR"));
  if (text.empty()) GTEST_SKIP() << DatasetPath("AR") << " is absent (../shared)";
  std::vector<std::string> lines;
  for (size_t at = 0; at < text.size();) {
    const size_t nl = text.find('\n', at);
    lines.emplace_back(text.substr(at, nl - at));
    at = nl == std::string::npos ? text.size() : nl + 1;
  }
  while (!lines.empty() && lines.back().empty()) lines.pop_back();
  auto join = [](const std::vector<std::string>& v) {
    std::string s;
    for (const auto& l : v) s += l + "\n";
    return s;
  };
  const DiagnosisResult clean = DiagnoseText(join(lines));
  ASSERT_FALSE(clean.findings.empty());
  // Every 1,000th row: a duplicate, a NaN duration (the duration is the 7th column), or a field too many;
  // and the very first row (in the template step) gets a NaN too.
  std::vector<std::string> bad = lines;
  size_t changed = 0;
  for (size_t i = 1001; i < lines.size(); i += 1000, ++changed) {
    if (changed % 3 == 0) bad.push_back(lines[i]);
    if (changed % 3 == 1) {
      size_t comma = 0;
      for (int k = 0; k < 6; ++k) comma = bad[i].find(',', comma) + 1;
      bad[i] = bad[i].substr(0, comma) + "NaN" + bad[i].substr(bad[i].find(',', comma));
    }
    if (changed % 3 == 2) bad[i] += ",extra";
  }
  ASSERT_EQ(bad[1].find("0,0,0,16,"), 0u) << bad[1];  // the template step's first row
  bad[1] = "0,0,0,16,backward-compute,NaN,0.85,0,0,0,0";
  const DiagnosisResult r = DiagnoseText(join(bad));
  ASSERT_FALSE(r.findings.empty());
  EXPECT_EQ(r.findings[0].cause, clean.findings[0].cause);
  EXPECT_EQ(r.findings[0].rank, clean.findings[0].rank);
  EXPECT_NEAR(r.findings[0].impact_pct, clean.findings[0].impact_pct, 1.0);
  EXPECT_EQ(r.steps, clean.steps);
  EXPECT_NEAR(r.step_time_median_ms, clean.step_time_median_ms, 0.01 * clean.step_time_median_ms);
  uint64_t skipped = 0;
  for (const auto& in : r.inputs) skipped += in.skipped.Total();
  EXPECT_EQ(skipped, changed + 1);
  bool noted = false;
  for (const std::string& c : NoteTexts(r.verdict_notes, NoteEffect::kCaveatOnly))
    noted |= c.find("were filled with the median") != std::string::npos;
  EXPECT_TRUE(noted);
}

/// ST with its op types renamed to names the what-if does not know (issue 23: it was called healthy).
std::string RenamedSt(const std::string& text) {
  static const std::pair<const char*, const char*> kRenames[] = {
      {",forward-compute,", ",fwd,"},    {",backward-compute,", ",bwd,"},  {",grads-reduce-scatter,", ",rs,"},
      {",params-all-gather,", ",ag,"},   {",forward-send,", ",fwd_send,"}, {",forward-recv,", ",fwd_recv,"},
      {",backward-send,", ",bwd_send,"}, {",backward-recv,", ",bwd_recv,"}};
  std::string out = text;
  for (const auto& [from, to] : kRenames)
    for (size_t at = out.find(from); at != std::string::npos; at = out.find(from, at + 1))
      out.replace(at, std::string(from).size(), to);
  return out;
}

// The slow worker's compute excess is the one peer comparison (peer_difference.h) over its compute per step:
// its forward and backward compute summed per step, minus the median of the same sum over its stage's other
// dp ranks — a median of totals, not a sum of per-op medians. AR with dp 1's forward and dp 2's backward
// compute of stage 0 made 30 % longer: per op the median peer is the unchanged dp 3, by totals it is dp 1
// (F and B the ops' times: F+B < 1.3F+B < F+1.3B), so the two rules differ by 0.3F. Computed here from the
// table's rows.
TEST(DiagOpTableDiagnosis, TheWorkerComputeExcessIsItsComputeAgainstItsStagePeersMedian) {
  const std::string text = DatasetText(DatasetPath("AR"));
  if (text.empty()) GTEST_SKIP() << DatasetPath("AR") << " is absent (../shared)";
  std::string changed;
  std::map<std::pair<int, int>, double> compute_s;  // (dp, stage) -> forward + backward compute, seconds
  for (size_t at = 0; at < text.size();) {
    const size_t nl = std::min(text.find('\n', at), text.size());
    std::string line = text.substr(at, nl - at);
    at = nl + 1;
    std::vector<std::string> f;
    for (size_t p = 0;;) {
      const size_t c = line.find(',', p);
      f.push_back(line.substr(p, c == std::string::npos ? std::string::npos : c - p));
      if (c == std::string::npos) break;
      p = c + 1;
    }
    if (f.size() == 11 && f[0] != "dp_rank" && (f[4] == "forward-compute" || f[4] == "backward-compute")) {
      const int dp = std::stoi(f[0]), stage = std::stoi(f[1]);
      double dur = std::stod(f[6]);
      if (stage == 0 && ((dp == 1 && f[4] == "forward-compute") || (dp == 2 && f[4] == "backward-compute"))) {
        dur *= 1.3;
        f[6] = fmt::format("{:.9f}", dur);
        line = fmt::format("{}", fmt::join(f, ","));
      }
      compute_s[{dp, stage}] += dur;
    }
    if (!line.empty()) changed += line + "\n";
  }
  const DiagnosisResult r = DiagnoseText(changed);
  ASSERT_FALSE(r.findings.empty());
  ASSERT_EQ(r.findings[0].rank, RankNumber(0)) << "the slowed worker (dp 0, stage 0) is still the one named";
  const auto* e = std::get_if<WorkerEvidence>(&r.findings[0].evidence.kind);
  ASSERT_NE(e, nullptr);
  std::vector<double> peers = {compute_s[{1, 0}], compute_s[{2, 0}], compute_s[{3, 0}]};
  std::sort(peers.begin(), peers.end());
  ASSERT_GT(r.matched, 0u);
  const double steps = static_cast<double>(r.matched);
  EXPECT_NEAR(e->compute_excess_ms_per_step, (compute_s[{0, 0}] - peers[1]) / steps * 1e3, 1e-3);
  EXPECT_GT(e->compute_excess_ms_per_step, 0);
}

TEST(DiagOpTableDiagnosis, TheWhatIfByRankIsKeyedByTheJobsRanksAndDpRanksAreLabelled) {
  const TraceStore* store = Load("AR");
  ASSERT_NE(store, nullptr) << DatasetPath("AR") << " is absent (../shared)";
  const DiagnosisResult r = Diagnose(*store);
  ASSERT_EQ(r.whatif.by_rank.size(), store->ranks.size());
  for (const RankInfo& rank : store->ranks) EXPECT_TRUE(r.whatif.by_rank.count(std::to_string(rank.rank))) << rank.rank;
  EXPECT_TRUE(r.whatif.by_rank.count("60"));  // AR's ranks are 0, 4, ..., 60: not dp ranks 0-3
  EXPECT_EQ(r.whatif.by_dp_rank.size(), 4u);
  // The slow worker (rank 0) stands out in by_rank, as it does in its dp rank.
  std::string top;
  double best = 0;
  for (const auto& [k, v] : r.whatif.by_rank)
    if (v > best) best = v, top = k;
  EXPECT_EQ(top, std::to_string(RankOf(*store, 0, 0)));
}

TEST(DiagOpTableDiagnosis, SummaryComparesComputeTimeAndNeverClaimsGpuMetricsAbsent) {
  const TraceStore* store = Load("AR");
  ASSERT_NE(store, nullptr) << DatasetPath("AR") << " is absent (../shared)";
  const JobSummary summary = Summarize(*store, BreakdownOptions());
  const std::string text = SummaryToText(*store, summary);
  EXPECT_NE(text.find("op compute/step"), std::string::npos) << text;
  EXPECT_EQ(text.find("no outlier rank"), std::string::npos) << text;
  // Rank 0 (2.5x slower forward-compute) is the outlier, on its compute.
  EXPECT_NE(text.find("outlier ranks (1 of 16"), std::string::npos) << text;
  EXPECT_NE(text.find("op compute/step 45.3 s vs median"), std::string::npos) << text;
  const std::string per_rank = SummaryToText(*store, summary, {.per_rank = true});
  EXPECT_EQ(per_rank.find("GPU metrics absent"), std::string::npos);
  EXPECT_NE(per_rank.find("op table: compute"), std::string::npos);
}

TEST(DiagOpTableDiagnosis, UnknownOpTypesAreNamedAndMakeTheJobInconclusiveUntilMapped) {
  const std::string text = DatasetText(DatasetPath("ST"));
  ASSERT_FALSE(text.empty()) << DatasetPath("ST") << " is absent (../shared)";
  const std::string renamed = RenamedSt(text);
  const DiagnosisResult r = DiagnoseText(renamed);
  EXPECT_EQ(r.status, diagnosis::Verdict::kInconclusive);
  ASSERT_FALSE(r.status_reasons.empty());
  EXPECT_NE(r.status_reasons[0].find("op types the what-if does not know"), std::string::npos) << r.status_reasons[0];
  EXPECT_NE(r.status_reasons[0].find("bwd_recv"), std::string::npos);
  EXPECT_NE(r.status_reasons[0].find("--op-map"), std::string::npos);

  ::strata::testing::TempFile f(renamed, ".csv");
  LoadOptions load;
  load.import.op_table.op_map = {{"fwd", "forward-compute"},     {"bwd", "backward-compute"},
                                 {"rs", "grads-reduce-scatter"}, {"ag", "params-all-gather"},
                                 {"fwd_send", "forward-send"},   {"fwd_recv", "forward-recv"},
                                 {"bwd_send", "backward-send"},  {"bwd_recv", "backward-recv"}};
  auto job = LoadJob({f.path()}, load);
  ASSERT_TRUE(job.ok()) << job.error();
  const DiagnosisResult mapped = Diagnose(job.value().store);
  EXPECT_EQ(mapped.status, diagnosis::Verdict::kFindings);
  ASSERT_FALSE(mapped.findings.empty());
  EXPECT_EQ(mapped.findings[0].cause, Cause::kStageImbalance);
  EXPECT_EQ(mapped.findings[0].stage, 3);
}

// A table without the dp_rank and stage columns (ST with its first two columns cut): the what-if finds no step
// to replay, and the note names the missing columns and their options (issue 51: it said only "has a
// embedding-grads-all-reduce op number 0 that the template step lacks").
TEST(DiagOpTableDiagnosis, MissingLayoutColumnsAreNamed) {
  const std::string text = DatasetText(DatasetPath("ST"));
  if (text.empty()) GTEST_SKIP() << DatasetPath("ST") << " is absent (../shared)";
  std::string cut;
  for (size_t at = 0; at < text.size();) {
    const size_t nl = std::min(text.find('\n', at), text.size());
    const std::string line = text.substr(at, nl - at);
    const size_t second = line.find(',', line.find(',') + 1);
    if (second != std::string::npos) cut += line.substr(second + 1) + "\n";
    at = nl + 1;
  }
  ASSERT_EQ(cut.rfind("rank,step,optype,", 0), 0u) << cut.substr(0, 80);
  const DiagnosisResult r = DiagnoseText(cut);
  EXPECT_EQ(r.status, diagnosis::Verdict::kInconclusive);
  const bool named = std::any_of(r.notes.begin(), r.notes.end(), [](const std::string& n) {
    return n.find("the op table has no dp_rank and no stage column (--col-dp-rank and --col-stage name them)") !=
           std::string::npos;
  });
  EXPECT_TRUE(named) << fmt::format("{}", fmt::join(r.notes, "\n"));
}

TEST(DiagOpTableDiagnosis, AFewUnknownRowsAreACaveatNotAVerdict) {
  const std::string text = DatasetText(DatasetPath("ST"));
  ASSERT_FALSE(text.empty()) << DatasetPath("ST") << " is absent (../shared)";
  std::string renamed = text;  // only gc (a small share of the time) renamed
  for (size_t at = renamed.find(",gc,"); at != std::string::npos; at = renamed.find(",gc,", at + 1))
    renamed.replace(at, 4, ",garbage,");
  const DiagnosisResult r = DiagnoseText(renamed);
  EXPECT_EQ(r.status, diagnosis::Verdict::kFindings);
  bool caveat = false;
  for (const std::string& reason : r.status_reasons)
    caveat |= reason.find("op types the what-if does not know") != std::string::npos &&
              reason.find("garbage") != std::string::npos;
  EXPECT_TRUE(caveat);
}

}  // namespace
}  // namespace strata::diagnosis
