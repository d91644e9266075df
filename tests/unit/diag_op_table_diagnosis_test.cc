// Op-table diagnosis (analysis/diagnosis/op_table_diagnosis) through Diagnose() on the three jobs of
// ../shared/datasets/straggler-whatif (skipped when absent):
//  - AR (one worker slowed artificially): the top straggler is that worker (dp 0, stage 0), the first
//    finding slow_compute on it;
//  - ST (the last pipeline stage is slower): the first finding is stage_imbalance of stage 3, no straggler;
//  - SE (sequence-length imbalance across dp ranks, plus a long last stage): the first finding is
//    data_imbalance, no straggler.
#include "analysis/diagnosis/op_table_diagnosis.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <memory>
#include <set>
#include <string>

#include "analysis/diagnosis/diagnose.h"
#include "importers/job_loader.h"
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
  EXPECT_EQ(r.step_source, "op-table");
  EXPECT_EQ(r.whatif.model, "op-table-dependency-graph");
  EXPECT_NEAR(r.whatif.slowdown, 1.973, 0.01);
  EXPECT_EQ(r.layout["dp"], 4);
  EXPECT_EQ(r.layout["pp"], 4);
  const int32_t slowed = RankOf(*store, 0, 0);
  ASSERT_FALSE(r.stragglers.empty());
  EXPECT_EQ(r.stragglers[0].rank, slowed);
  EXPECT_TRUE(r.stragglers[0].persistent);
  ASSERT_FALSE(r.findings.empty());
  const Finding& f = r.findings[0];
  EXPECT_EQ(f.cause, "slow_compute");
  EXPECT_EQ(f.rank, slowed);
  EXPECT_EQ(f.stage, 0);
  EXPECT_EQ(f.layer, "gpu");
  ASSERT_TRUE(f.op.has_value());
  EXPECT_TRUE(*f.op == "forward-compute" || *f.op == "backward-compute") << *f.op;
  EXPECT_GT(f.impact_pct, 30.0);  // S ≈ 1.97: about half the step
  // No other worker is named.
  for (const auto& st : r.stragglers) EXPECT_EQ(st.rank, slowed);
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
  EXPECT_EQ(f.cause, "stage_imbalance");
  EXPECT_EQ(f.stage, 3);
  EXPECT_FALSE(f.rank.has_value());  // not a single worker
  EXPECT_EQ(std::set<int32_t>(f.ranks.begin(), f.ranks.end()),
            (std::set<int32_t>{RankOf(*store, 0, 3), RankOf(*store, 1, 3)}));
  EXPECT_GT(f.impact_pct, 3.0);
  EXPECT_GT(r.whatif.by_stage.at("3"), r.whatif.by_stage.at("0") + 0.1);
  for (const auto& other : r.findings) EXPECT_NE(other.cause, "slow_compute");
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
  EXPECT_EQ(f.cause, "data_imbalance");
  EXPECT_FALSE(f.rank.has_value());
  EXPECT_GE(f.ranks.size(), 4u);  // many dp ranks take turns
  EXPECT_GT(f.impact_pct, 3.0);
  // The long last stage (stage 1 of 2) is reported too, after it.
  bool last_stage = false;
  for (size_t i = 1; i < r.findings.size(); ++i)
    last_stage |= r.findings[i].cause == "stage_imbalance" && r.findings[i].stage == 1;
  EXPECT_TRUE(last_stage);
}

}  // namespace
}  // namespace strata::diagnosis
