// DiagnoseOptions::drawn_facts (issue 50): what the reports draw beside the findings (DiagnosisResult::drawn)
// is measured only when asked for (the HTML report, the Perfetto export) and changes nothing else of the
// result: on an op table (../shared/datasets/straggler-whatif, skipped when absent) and on a simulated trace
// job, the facts are absent without the option and present with it, and the stragglers, findings, what-if,
// JSON and text are the same either way. The trace job's KS scores drawn are its straggler evidence's.
#include <gtest/gtest.h>

#include <string>

#include "analysis/diagnosis/diagnose.h"
#include "analysis/diagnosis/report_facts.h"
#include "analysis/job_summary.h"
#include "diag_test_util.h"
#include "reports/diagnosis_report.h"
#include "whatif_test_util.h"

namespace strata::diagtest {
namespace {

using diagnosis::Diagnose;
using diagnosis::DiagnosisResult;
using diagnosis::DrawnFacts;

bool Absent(const DrawnFacts& d) {
  return d.latest_arrival.empty() && d.busy_ns.empty() && !d.busy_is_compute && d.stages.empty() &&
         !d.timeline.has_value() && !d.ks.has_value();
}

// Everything of the result but the drawn facts is the same with and without them.
void ExpectSameBesideTheFacts(const DiagnosisResult& plain, const DiagnosisResult& drawn) {
  ASSERT_EQ(plain.stragglers.size(), drawn.stragglers.size());
  for (size_t i = 0; i < plain.stragglers.size(); ++i) EXPECT_EQ(plain.stragglers[i].rank, drawn.stragglers[i].rank);
  ASSERT_EQ(plain.findings.size(), drawn.findings.size());
  for (size_t i = 0; i < plain.findings.size(); ++i) {
    EXPECT_EQ(plain.findings[i].cause, drawn.findings[i].cause);
    EXPECT_EQ(plain.findings[i].rank, drawn.findings[i].rank);
    EXPECT_EQ(plain.findings[i].impact_pct, drawn.findings[i].impact_pct);
  }
  EXPECT_EQ(plain.whatif.slowdown, drawn.whatif.slowdown);
  EXPECT_EQ(plain.status, drawn.status);
  EXPECT_EQ(plain.recording_offsets_ns, drawn.recording_offsets_ns);
  EXPECT_EQ(plain.critical_path.has_value(), drawn.critical_path.has_value());
  // The whole contract and the text report, byte for byte.
  EXPECT_EQ(DiagnosisToJson(plain).dump(), DiagnosisToJson(drawn).dump());
  EXPECT_EQ(DiagnosisToText(plain, 100), DiagnosisToText(drawn, 100));
}

TEST(DiagDrawnFacts, OpTableMeasuresThemOnlyWhenAsked) {
  for (const char* name : {"AR", "ST"}) {
    const TraceStore* store = whatif::testing::LoadDataset(name);
    if (store == nullptr) GTEST_SKIP() << whatif::testing::DatasetPath(name) << " is absent (../shared)";
    SCOPED_TRACE(name);
    const DiagnosisResult plain = Diagnose(*store);
    const DiagnosisResult drawn = Diagnose(*store, {.drawn_facts = true});
    EXPECT_TRUE(Absent(plain.drawn));
    EXPECT_FALSE(Absent(drawn.drawn));
    EXPECT_TRUE(drawn.drawn.busy_is_compute);
    EXPECT_EQ(drawn.drawn.busy_ns.size(), store->ranks.size());
    EXPECT_TRUE(drawn.drawn.timeline.has_value());
    EXPECT_TRUE(drawn.drawn.ks.has_value());
    ASSERT_FALSE(plain.findings.empty());
    ExpectSameBesideTheFacts(plain, drawn);
  }
}

// A simulated 4-rank trace job of `steps` steps whose rank 2 computes three times as long as the others.
TraceStore RankTwoSlowJob(int steps) {
  DdpSpec spec;
  spec.ranks = 4;
  spec.steps = steps;
  spec.plan = [](int r, int) {
    RankStep st;
    st.segs = {{Op("aten::mm", (r == 2 ? 90 : 30) * kMs)}, {Op("aten::conv2d", 15 * kMs)}};
    st.tail = {Op("aten::add_", 4 * kMs)};
    return st;
  };
  return LoadDdp(spec);
}

TEST(DiagDrawnFacts, TraceJobMeasuresThemOnlyWhenAsked) {
  const TraceStore store = RankTwoSlowJob(6);
  const DiagnosisResult plain = Diagnose(store);
  const DiagnosisResult drawn = Diagnose(store, {.drawn_facts = true});
  EXPECT_TRUE(Absent(plain.drawn));
  EXPECT_FALSE(Absent(drawn.drawn));
  EXPECT_EQ(drawn.drawn.busy_ns.size(), store.ranks.size());
  EXPECT_TRUE(drawn.drawn.latest_arrival.count(2));
  ASSERT_FALSE(plain.stragglers.empty());
  EXPECT_EQ(plain.stragglers.front().rank, RankNumber(2));
  ExpectSameBesideTheFacts(plain, drawn);
  // The KAIR panel draws the diagnosis's own KS scores (ks_divergence.h): the straggler's is its evidence's,
  // and its group leads the ranking.
  ASSERT_TRUE(drawn.drawn.ks.has_value());
  const diagnosis::KsDivergence& ks = *drawn.drawn.ks;
  EXPECT_EQ(ks.of, diagnosis::KsSample::kOwnWorkPhases);
  const auto* evidence = std::get_if<diagnosis::TraceStragglerEvidence>(&plain.stragglers.front().evidence.kind);
  ASSERT_NE(evidence, nullptr);
  ASSERT_EQ(ks.score.size(), store.ranks.size());
  EXPECT_EQ(ks.score[2], evidence->ks_score);
  EXPECT_EQ(ks.lead[ks.ranking.front()], 2u);
}

// The layers panel draws the peers' median each layer metric of the finding's rank was compared with
// (cross_layer.h, PeersMedianMetrics: the one peer rule, field by field): the first finding with a layer
// comparison, each field its peers' median (an unknown traffic, -1, counts as it is), and none without one.
TEST(DiagDrawnFacts, LayersPanelDrawsThePeersMedianTheRankWasComparedWith) {
  const TraceStore store = RankTwoSlowJob(4);
  const std::vector<SliceRows> rows = SlicesByRank(store);
  const model::JobModel job = model::BuildJobModel(store, rows);
  DiagnosisResult result = Diagnose(store);
  ASSERT_FALSE(result.findings.empty());
  EXPECT_FALSE(diagnosis::MeasureDrawnFacts(store, rows, job, result).layers.has_value());
  diagnosis::CrossLayerComparison c;
  c.straggler.runq_share = 0.09;
  for (const int r : {0, 1, 3}) {
    diagnosis::RankLayerMetrics m;
    m.runq_share = 0.01 * (r + 1);
    m.majflt_per_s = 10.0 * r;
    m.net_bytes_per_s = r == 3 ? -1 : 1e6 * r;
    m.gc_count = static_cast<uint64_t>(r);
    c.peers.emplace_back(r, m);
  }
  result.findings.insert(result.findings.begin(), diagnosis::Finding{});  // one without a comparison first
  result.findings.back().evidence.cross_layer = c;
  const DrawnFacts facts = diagnosis::MeasureDrawnFacts(store, rows, job, result);
  ASSERT_TRUE(facts.layers.has_value());
  EXPECT_EQ(facts.layers->finding, result.findings.size() - 1);
  const diagnosis::RankLayerMetrics& median = facts.layers->peers_median;
  EXPECT_DOUBLE_EQ(median.runq_share, 0.02);      // of 0.01, 0.02, 0.04
  EXPECT_DOUBLE_EQ(median.majflt_per_s, 10.0);    // of 0, 10, 30
  EXPECT_DOUBLE_EQ(median.net_bytes_per_s, 0.0);  // of -1 (unknown), 0, 1e6
  EXPECT_EQ(median.gc_count, 1u);
  EXPECT_TRUE(median.top_foreign.empty());
}

}  // namespace
}  // namespace strata::diagtest
