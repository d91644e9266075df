// Diagnosis report (reports/diagnosis_report): the strata.diagnosis/1 JSON shape (required keys, nulls for
// absent optional fields, rank-keyed objects, order of stragglers and findings kept), the one-line verdict
// for a healthy job, a rank, a stage and a group of ranks, and the text report's order (verdict first).
// The JSON of real runs is validated against ../shared/spec/diagnosis.schema.json by the CTest test
// diagnosis_schema (tests/schema/check_diagnosis_schema.sh).
#include "reports/diagnosis_report.h"

#include <gtest/gtest.h>

#include <sstream>
#include <string>

#include "diag_test_util.h"
#include "reports/text_format.h"

namespace strata::diagnosis {
namespace {

DiagnosisResult Sample() {
  DiagnosisResult r;
  r.status = Verdict::kFindings;  // as AssessStatus would say of it (unjudged, a result reads as inconclusive)
  InputSummary in;
  in.path = "/x/rank-3.json";
  in.rank = 3;
  in.format = InputFormat::kKineto;
  in.events = 1234;
  in.skipped.Add(SkipId::kNegativeDuration, 2);
  r.inputs.push_back(in);
  InputSummary merged;
  merged.path = "/x/table.csv";
  merged.format = InputFormat::kOpTable;
  merged.events = 10;
  r.inputs.push_back(merged);
  r.ranks = 4;
  r.steps = {5, 6, 7};
  r.step_source = model::StepSource::kProfilerStep;
  r.step_time_median_ms = 120.5;
  r.step_time_p90_ms = 121.25;
  r.clock_offsets_us = {{0, 0.0}, {1, -12000.5}, {3, 3700000.0}};
  r.clock_residual_us = 0.25;
  r.collective_source = model::CollectiveSource::kCpuOps;
  Straggler st;
  st.rank = RankNumber(3);
  st.score = 0.16;
  st.late_ms_per_step = 20.0;
  st.steps = {5, 6, 7};
  st.persistent = true;
  r.stragglers.push_back(st);
  Finding f;
  f.cause = Cause::kSlowCompute;
  f.rank = RankNumber(3);
  f.ranks = RankNumbers({3});
  f.op = "aten::mm";
  f.layer = Layer::kCpu;
  f.impact_pct = 12.5;
  f.confidence = 0.9;
  f.summary = "rank 3 is slow";
  f.evidence.kind = DpImbalanceEvidence{{{0, 1.25}}, {0, 1}};
  r.findings.push_back(f);
  Finding g;
  g.cause = Cause::kUnknown;
  g.impact_pct = 4.0;
  g.confidence = 0.3;
  g.summary = "something";
  r.findings.push_back(g);
  r.whatif.slowdown = 1.1416;
  r.whatif.ideal_step_ms = 105.9;
  r.whatif.model = WhatIfModel::kPhaseReplay;
  r.whatif.by_rank = {{"3", 1.14}, {"0", 1.0}};
  r.whatif.by_op_type = {{"compute", 1.14}};
  r.notes = {"a note"};
  return r;
}

TEST(DiagReport, JsonShape) {
  nlohmann::ordered_json j = DiagnosisToJson(Sample());
  EXPECT_EQ(j["schema"], "strata.diagnosis/1");
  for (const char* key : {"schema", "inputs", "job", "stragglers", "findings", "whatif"})
    EXPECT_TRUE(j.contains(key)) << key;
  ASSERT_EQ(j["inputs"].size(), 2u);
  EXPECT_EQ(j["inputs"][0]["rank"], 3);
  EXPECT_EQ(j["inputs"][0]["events"], 1234);
  EXPECT_EQ(j["inputs"][0]["skipped"]["negative_duration"], 2);
  EXPECT_TRUE(j["inputs"][1]["rank"].is_null());
  EXPECT_TRUE(j["inputs"][1]["skipped"].is_object());
  EXPECT_EQ(j["job"]["ranks"], 4);
  EXPECT_EQ(j["job"]["steps"], nlohmann::ordered_json({5, 6, 7}));
  EXPECT_EQ(j["job"]["step_time_ms"]["median"], 120.5);
  EXPECT_EQ(j["job"]["step_time_ms"]["p90"], 121.25);
  EXPECT_EQ(j["job"]["clock_offsets_us"]["1"], -12000.5);  // keys are rank numbers as strings
  EXPECT_EQ(j["job"]["clock_offsets_us"]["3"], 3700000.0);
  EXPECT_EQ(j["job"]["clock_residual_us"], 0.25);
  EXPECT_TRUE(j["job"]["layout"].is_object());
  ASSERT_EQ(j["stragglers"].size(), 1u);
  EXPECT_EQ(j["stragglers"][0]["rank"], 3);
  EXPECT_EQ(j["stragglers"][0]["steps"], nlohmann::ordered_json({5, 6, 7}));
  EXPECT_EQ(j["stragglers"][0]["late_ms_per_step"], 20.0);
  ASSERT_EQ(j["findings"].size(), 2u);
  auto& f = j["findings"][0];
  EXPECT_EQ(f["cause"], "slow_compute");
  EXPECT_EQ(f["rank"], 3);
  EXPECT_EQ(f["ranks"], nlohmann::ordered_json({3}));
  EXPECT_TRUE(f["stage"].is_null());
  EXPECT_TRUE(f["step"].is_null());
  EXPECT_EQ(f["op"], "aten::mm");
  EXPECT_EQ(f["layer"], "cpu");
  EXPECT_EQ(f["impact_pct"], 12.5);
  EXPECT_EQ(f["evidence"]["by_dp_rank"]["0"], 1.25);
  EXPECT_EQ(f["evidence"]["dp_ranks_slowest_in_some_step"], nlohmann::ordered_json({0, 1}));
  // Absent optional fields are null, an empty layer too; the order of findings is kept.
  auto& g = j["findings"][1];
  EXPECT_EQ(g["cause"], "unknown");
  for (const char* key : {"rank", "stage", "step", "op", "layer"}) EXPECT_TRUE(g[key].is_null()) << key;
  EXPECT_TRUE(g["ranks"].is_array());
  EXPECT_TRUE(g["evidence"].is_object());
  EXPECT_EQ(j["whatif"]["slowdown"], 1.1416);
  EXPECT_EQ(j["whatif"]["by_rank"]["3"], 1.14);
  EXPECT_TRUE(j["whatif"]["by_stage"].is_object());
  EXPECT_TRUE(j["whatif"]["by_stage"].empty());
  EXPECT_EQ(j["notes"], nlohmann::ordered_json({"a note"}));
}

TEST(DiagReport, HealthyJobJson) {
  DiagnosisResult r;
  r.ranks = 2;
  nlohmann::ordered_json j = DiagnosisToJson(r);
  EXPECT_TRUE(j["stragglers"].is_array());
  EXPECT_TRUE(j["stragglers"].empty());
  EXPECT_TRUE(j["findings"].is_array());
  EXPECT_TRUE(j["findings"].empty());
  EXPECT_TRUE(j["inputs"].is_array());
  EXPECT_TRUE(j["job"]["steps"].is_array());
  EXPECT_TRUE(j["job"]["clock_offsets_us"].is_object());
  EXPECT_TRUE(j["whatif"]["by_rank"].is_object());
  EXPECT_EQ(j["whatif"]["slowdown"], 1.0);
}

TEST(DiagReport, Verdict) {
  DiagnosisResult r = Sample();
  EXPECT_EQ(strata::Verdict(r), "slow_compute: rank 3 (aten::mm) costs 12.5% of step time");
  // Ranks slowed alike: one finding whose saving is fixing all of them, so the verdict names them all.
  r.findings[0].ranks = RankNumbers({3, 0, 2});
  EXPECT_EQ(strata::Verdict(r), "slow_compute: ranks 3, 0, 2 (aten::mm) cost 12.5% of step time");
  r.findings[0].ranks = RankNumbers({3, 0, 2, 4, 6, 8});
  EXPECT_EQ(strata::Verdict(r), "slow_compute: ranks 3, 0, 2, 4, ... (6 ranks) (aten::mm) cost 12.5% of step time");
  r.findings[0].ranks = RankNumbers({3});
  r.findings[0].rank.reset();
  r.findings[0].op.reset();
  r.findings[0].cause = Cause::kStageImbalance;
  r.findings[0].stage = 3;
  EXPECT_EQ(strata::Verdict(r), "stage_imbalance: stage 3 costs 12.5% of step time");
  r.findings[0].stage.reset();
  r.findings[0].cause = Cause::kDataImbalance;
  r.findings[0].ranks = RankNumbers({0, 1, 2, 3});
  EXPECT_EQ(strata::Verdict(r), "data_imbalance: 4 ranks cost 12.5% of step time");
  r.findings.clear();
  r.stragglers.clear();
  r.status = Verdict::kHealthy;
  EXPECT_EQ(strata::Verdict(r).rfind("healthy: no straggler and no finding", 0), 0u) << strata::Verdict(r);
  EXPECT_NE(strata::Verdict(r).find("4 ranks and 3 steps"), std::string::npos) << strata::Verdict(r);
  r.status = Verdict{};  // never judged: inconclusive, in the text as in the JSON
  EXPECT_EQ(strata::Verdict(r), "inconclusive: the job could not be examined");
  EXPECT_EQ(DiagnosisToJson(r)["status"], "inconclusive");
}

TEST(DiagReport, TextStartsWithTheVerdict) {
  const DiagnosisResult r = Sample();
  const std::string text = DiagnosisToText(r);
  EXPECT_EQ(text.rfind("verdict: " + strata::Verdict(r) + "\n", 0), 0u) << text;
  const size_t stragglers = text.find("straggler: rank 3 late 20.0 ms/step in every step, persistent");
  const size_t findings = text.find("findings (by time saved):");
  const size_t whatif = text.find("what-if (collective-phases model)");
  ASSERT_NE(stragglers, std::string::npos);
  ASSERT_NE(findings, std::string::npos);
  ASSERT_NE(whatif, std::string::npos);
  EXPECT_LT(stragglers, findings);
  EXPECT_LT(findings, whatif);
  EXPECT_LT(text.find("[slow_compute]"), text.find("[unknown]"));
  EXPECT_NE(text.find("note: a note"), std::string::npos);
}

// The text fits the width it is given (a terminal's COLUMNS, issue 26): every line, and no number cut in half
// (a clipped line ends at a space with " ...", a wrapped one carries the whole number to the next line).
TEST(DiagReport, TextFitsTheWidthWithoutCuttingNumbers) {
  DiagnosisResult r = Sample();
  r.findings[0].summary =
      "rank 3 arrives 184.123 ms late at collectives in 5 of 6 steps (its compute takes longer); fixing it saves "
      "64.4% of step time";
  r.notes.push_back("a long note that says what the recording could not show about the job's last 12.5 seconds");
  for (const size_t width : {60u, 72u, 100u, 140u}) {
    const std::string text = DiagnosisToText(r, width);
    std::istringstream lines(text);
    std::string joined;
    for (std::string line; std::getline(lines, line);) {
      size_t columns = 0;
      for (unsigned char c : line) columns += (c & 0xC0) != 0x80;
      EXPECT_LE(columns, width) << "width " << width << ": " << line;
      joined += line + " ";
    }
    // Every figure of the summary survives whole, whichever line it landed on.
    for (const char* figure : {"184 ms", "64.4%", "12.5 seconds", "20.0 ms/step"})
      EXPECT_NE(joined.find(figure), std::string::npos) << "width " << width << ": " << text;
  }
  // Narrower than the minimum is raised to it.
  EXPECT_EQ(DiagnosisToText(r, 10), DiagnosisToText(r, kMinTextWidth));
}

// Degenerate jobs read as a person would write them (issue 51): no "1 ranks, 0 steps (none, from none), step
// time median 0 ms", "1.00× the ideal step of 0 ms", "aligned by none to within 0 ms", "saves -0.0%".
TEST(DiagReport, DegenerateCasesAreWrittenAsAPersonWould) {
  DiagnosisResult r = Sample();
  r.ranks = 1;
  r.steps.clear();
  r.step_time_median_ms = r.step_time_p90_ms = 0;
  r.whatif.ideal_step_ms = 0;
  r.collective_source = model::CollectiveSource::kNone;
  r.stragglers.clear();
  r.findings[1].impact_pct = -0.01;
  std::string text = DiagnosisToText(r);
  EXPECT_NE(text.find("job: 1 rank, no steps found: no step time to compare\n"), std::string::npos) << text;
  EXPECT_NE(text.find("what-if: not run (no step to replay)"), std::string::npos) << text;
  EXPECT_NE(text.find("clocks: one rank, nothing to align"), std::string::npos) << text;
  EXPECT_NE(text.find("something (confidence 0.30); saves less than 0.1% of step time"), std::string::npos) << text;
  for (const char* wrong : {"1 ranks", "0 steps", "of 0 ms", "within 0 ms", "-0.0", "none, from none"})
    EXPECT_EQ(text.find(wrong), std::string::npos) << wrong << " in:\n" << text;
  // Ranks but no collective to align their clocks by; steps whose time was not measured.
  r.ranks = 4;
  r.steps = {1, 2};
  text = DiagnosisToText(r);
  EXPECT_NE(text.find("clocks: not aligned (no collective call common to the ranks to align by)"), std::string::npos)
      << text;
  EXPECT_NE(text.find("job: 4 ranks, 2 steps (1-2, from profiler-step), step time not measured"), std::string::npos)
      << text;
  // A residual under 1 µs in ns, none as "exactly".
  r.collective_source = model::CollectiveSource::kCpuOps;
  r.clock_residual_us = 0.001;
  EXPECT_NE(DiagnosisToText(r).find("clocks: aligned by cpu-ops to within 1.00 ns"), std::string::npos);
  r.clock_residual_us = 0;
  EXPECT_NE(DiagnosisToText(r).find("clocks: aligned by cpu-ops exactly"), std::string::npos);
}

// A kernel name longer than the line keeps its figure (issue 51: "ampere_bf16_..._64x3_nn ..." lost "+2.63 ms"):
// the name is shortened in the middle, both its ends and the figure printed.
TEST(DiagReport, LongOpNamesKeepTheirFigures) {
  DiagnosisResult r = Sample();
  const std::string kernel =
      "ampere_bf16_s16816gemm_bf16_128x128_ldg8_relu_f2f_stages_32x5_tn_cutlass_sm80_kernel_with_a_long_tail_64x3_nn";
  TraceRankEvidence e;
  e.op_excess_per_step = {{kernel, 2.63}, {"aten::mm", 1.0}};
  r.findings[0].evidence.kind = e;
  for (const size_t width : {60u, 100u}) {
    const std::string text = DiagnosisToText(r, width);
    const size_t line = text.find("top ops over peers, per step:");
    ASSERT_NE(line, std::string::npos) << text;
    const std::string row = text.substr(line, text.find('\n', line) - line);
    EXPECT_NE(row.find("+2.63 ms"), std::string::npos) << row;
    EXPECT_NE(row.find(": ampere_b"), std::string::npos) << row;
    EXPECT_NE(row.find("64x3_nn +2.63 ms"), std::string::npos) << row;
    EXPECT_NE(row.find("…"), std::string::npos) << row;
  }
}

TEST(DiagReport, TextScalesUnitsAndSaysTheSavingOnce) {
  DiagnosisResult r = Sample();
  r.stragglers[0].late_ms_per_step = 22995.936;
  r.clock_residual_us = 1616.0;
  r.whatif.slowdown = 1.4885;
  r.whatif.ideal_step_ms = 186.491;
  r.findings[0].summary = "rank 3 runs aten::mm 151% slower; fixing it saves 51.4% of step time";
  TraceRankEvidence e;
  e.excess_ms.compute = 222.488;
  e.blame = "late arrival <- 22995.936 ms more before arrival";
  e.op_excess_per_step = {{"aten::mm", 0.4124}};
  e.window_ms = 300;
  e.peer_window_ms = 77.5;
  r.findings[0].evidence.kind = e;
  const std::string text = DiagnosisToText(r);
  EXPECT_NE(text.find("straggler: rank 3 late 23.0 s/step"), std::string::npos) << text;
  EXPECT_NE(text.find("     excess over peers by class: compute +222 ms\n"), std::string::npos) << text;
  EXPECT_NE(text.find("     top ops over peers, per step: aten::mm +412 µs\n"), std::string::npos) << text;
  EXPECT_NE(text.find("     before the collective 300 ms vs peers 77.5 ms"), std::string::npos) << text;
  EXPECT_NE(text.find("     blame: late arrival <- 23.0 s more before arrival\n"), std::string::npos) << text;
  EXPECT_NE(text.find("steps take 1.49× the ideal step of 186 ms"), std::string::npos) << text;
  EXPECT_NE(text.find("clocks: aligned by cpu-ops to within 1.62 ms"), std::string::npos) << text;
  EXPECT_EQ(text.find("saves 51.4%"), text.rfind("saves 51.4%")) << text;  // said once
  EXPECT_EQ(text.find("{\""), std::string::npos) << text;                  // no JSON dump
  // A finding whose summary does not say the saving gets it after the confidence.
  EXPECT_NE(text.find("[unknown]"), std::string::npos);
  EXPECT_NE(text.find("saves 4.0% of step time"), std::string::npos) << text;  // as the summaries write it
  // The skipped events and notes come last, after the what-if and clocks.
  EXPECT_LT(text.find("clocks:"), text.find("skipped events:"));
  EXPECT_LT(text.find("skipped events:"), text.find("note: a note"));
  size_t start = 0;
  for (size_t end; (end = text.find('\n', start)) != std::string::npos; start = end + 1)
    EXPECT_LE(text::Columns(text.substr(start, end - start)), 100u) << text.substr(start, end - start);
}

TEST(DiagReport, StatusAndLeftOutInputsInJson) {
  DiagnosisResult r = Sample();
  r.status = diagnosis::Verdict::kFindings;
  r.status_reasons = {"2 of the job's 8 ranks were given"};
  r.left_out.push_back({"/x/rank-5.json", "/x/rank-5.json: truncated"});
  nlohmann::ordered_json j = DiagnosisToJson(r);
  EXPECT_EQ(j["status"], "findings");
  EXPECT_EQ(j["status_reasons"], nlohmann::ordered_json({"2 of the job's 8 ranks were given"}));
  ASSERT_EQ(j["inputs"].size(), 3u);
  EXPECT_EQ(j["inputs"][2]["path"], "/x/rank-5.json");
  EXPECT_EQ(j["inputs"][2]["format"], "unreadable");
  EXPECT_EQ(j["inputs"][2]["events"], 0);
  EXPECT_EQ(j["inputs"][2]["error"], "/x/rank-5.json: truncated");
  // A result nobody assessed is never rendered healthy.
  EXPECT_EQ(DiagnosisToJson(DiagnosisResult{})["status"], "inconclusive");
}

TEST(DiagReport, TextSaysTheStatusFirstAndListsSkippedEvents) {
  DiagnosisResult r = Sample();
  r.stragglers.clear();
  r.findings.clear();
  r.status = diagnosis::Verdict::kInconclusive;
  r.status_reasons = {"only 1 rank was given", "12 collective calls have no counterpart"};
  const std::string text = DiagnosisToText(r);
  EXPECT_EQ(text.rfind("verdict: inconclusive: only 1 rank was given\n  also: 12 collective calls", 0), 0u) << text;
  EXPECT_NE(text.find("skipped events: 2 of 1246 (0.16%):\n  negative_duration 2 (error): a slice whose duration is "
                      "negative\n"),
            std::string::npos)
      << text;
  r.status = diagnosis::Verdict::kHealthy;
  r.status_reasons = {"12 collective calls have no counterpart"};
  EXPECT_NE(DiagnosisToText(r).find("  caveat: 12 collective calls"), std::string::npos);
  EXPECT_EQ(strata::Verdict(r).rfind("healthy:", 0), 0u);
}

TEST(DiagReport, EndToEndJsonOfAConstructedJob) {
  using namespace strata::diagtest;  // NOLINT(google-build-using-namespace)
  DdpSpec spec;
  spec.ranks = 3;
  spec.steps = 4;
  spec.clock_offset = {0, 2 * kSec, -5 * kMs};
  spec.plan = [](int r, int) { return BasicStep((80 + (r == 1 ? 20 : 0)) * kMs); };
  nlohmann::ordered_json j = DiagnosisToJson(Diagnose(LoadDdp(spec)));
  EXPECT_EQ(j["job"]["ranks"], 3);
  EXPECT_EQ(j["job"]["steps"], nlohmann::ordered_json({1, 2, 3, 4}));
  EXPECT_EQ(j["job"]["step_source"], "profiler-step");
  EXPECT_EQ(j["job"]["clock_offsets_us"].size(), 3u);
  ASSERT_EQ(j["stragglers"].size(), 1u);
  EXPECT_EQ(j["stragglers"][0]["rank"], 1);
  ASSERT_EQ(j["findings"].size(), 1u);
  EXPECT_EQ(j["findings"][0]["cause"], "slow_compute");
  EXPECT_EQ(j["findings"][0]["layer"], "cpu");
  EXPECT_GE(j["findings"][0]["confidence"].get<double>(), 0.0);
  EXPECT_LE(j["findings"][0]["confidence"].get<double>(), 1.0);
  EXPECT_EQ(j["whatif"]["by_rank"].size(), 3u);
  // Round trip through text.
  EXPECT_EQ(nlohmann::ordered_json::parse(j.dump()), j);
}

}  // namespace
}  // namespace strata::diagnosis
