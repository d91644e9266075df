// What-if analysis on a constructed pipeline whose replays were computed by hand: 2 stages x 2
// microbatches (1F1B) x 2 dp ranks, with worker (dp 1, stage 1) computing twice as slowly.
//
// Recorded per worker: forward 2 ms, backward 4 ms (dp 1 stage 1: 4 and 8); p2p transfer 0; params-all-
// gather, grads-reduce-scatter and optimizer-clip-main-grad transfer 1 ms; optimizer 1 ms; no launch delay.
// The timelines below follow the model (op_graph.h) step by step, e.g. for dp 1:
//   stage 0: AG 0-1, F0 1-3, F1 3-5, B0 waits for stage 1's backward-send (15) 15-19, B1 27-31,
//   stage 1: F0 3-7, B0 7-15, F1 15-19, B1 19-27; reduce-scatter of stage 0 ends at max(19, 31) + 1 = 32
//   (dp-synced), the clip at 32 + 1 = 33, the optimizer at 34: step time 34 ms on both dp ranks.
// Ideal (forward 2.5 = mean of 2,2,2,2,2,2,4,4; backward 5; medians of transfers 0 / 1): 26.5 ms, so
// S = 34 / 26.5. Restoring (from the ideal):
//   dp 0 -> 26.5, dp 1 -> 34, stage 0 -> 25 (its recorded 2/4 ms beat the 2.5/5 ms means),
//   stage 1 -> 35.5 (dp 1 stage 1 at 4/8 behind a stage 0 at the 2.5/5 means), worker (1,1) -> 35.5,
//   other workers -> 26.5, forward-compute -> 29, backward-compute -> 31.5, other types -> 26.5.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "analysis/whatif/op_graph.h"
#include "analysis/whatif/whatif.h"
#include "whatif_test_util.h"

namespace strata::whatif {
namespace {

using testing::OpTableBuilder;

/// One recorded op of one dp rank's step, times in ms from the step's start.
struct Row {
  int32_t stage;
  const char* type;
  int32_t seq;
  double start, end;
};

// dp 0: every worker at 2/4 ms.
const std::vector<Row> kDp0 = {
    {0, "params-all-gather", 0, 0, 1},
    {0, "forward-compute", 0, 1, 3},
    {0, "forward-send", 0, 3, 3},
    {0, "forward-compute", 1, 3, 5},
    {0, "forward-send", 1, 5, 5},
    {0, "backward-recv", 0, 3, 9},
    {0, "backward-compute", 0, 9, 13},
    {0, "backward-recv", 1, 13, 15},
    {0, "backward-compute", 1, 15, 19},
    {0, "grads-reduce-scatter", 0, 19, 32},
    {0, "optimizer-clip-main-grad", 0, 32, 33},
    {0, "optimizer", 0, 33, 34},
    {1, "params-all-gather", 0, 0, 1},
    {1, "forward-recv", 0, 0, 3},
    {1, "forward-compute", 0, 3, 5},
    {1, "backward-compute", 0, 5, 9},
    {1, "backward-send", 0, 9, 9},
    {1, "forward-recv", 1, 5, 5},
    {1, "forward-compute", 1, 9, 11},
    {1, "backward-compute", 1, 11, 15},
    {1, "backward-send", 1, 15, 15},
    {1, "grads-reduce-scatter", 0, 15, 28},
    {1, "optimizer-clip-main-grad", 0, 28, 33},
    {1, "optimizer", 0, 33, 34},
};

// dp 1: stage 1 at 4/8 ms.
const std::vector<Row> kDp1 = {
    {0, "params-all-gather", 0, 0, 1},
    {0, "forward-compute", 0, 1, 3},
    {0, "forward-send", 0, 3, 3},
    {0, "forward-compute", 1, 3, 5},
    {0, "forward-send", 1, 5, 7},
    {0, "backward-recv", 0, 3, 15},
    {0, "backward-compute", 0, 15, 19},
    {0, "backward-recv", 1, 19, 27},
    {0, "backward-compute", 1, 27, 31},
    {0, "grads-reduce-scatter", 0, 31, 32},
    {0, "optimizer-clip-main-grad", 0, 32, 33},
    {0, "optimizer", 0, 33, 34},
    {1, "params-all-gather", 0, 0, 1},
    {1, "forward-recv", 0, 0, 3},
    {1, "forward-compute", 0, 3, 7},
    {1, "backward-compute", 0, 7, 15},
    {1, "backward-send", 0, 15, 15},
    {1, "forward-recv", 1, 7, 7},
    {1, "forward-compute", 1, 15, 19},
    {1, "backward-compute", 1, 19, 27},
    {1, "backward-send", 1, 27, 27},
    {1, "grads-reduce-scatter", 0, 27, 28},
    {1, "optimizer-clip-main-grad", 0, 28, 33},
    {1, "optimizer", 0, 33, 34},
};

/// Adds one step of both dp ranks at `offset_ms`; `optimizer_gap_ms` delays dp 0's optimizers.
void AddStep(OpTableBuilder& b, int32_t step, double offset_ms, double optimizer_gap_ms = 0, bool with_seq = true) {
  for (int dp = 0; dp < 2; ++dp) {
    for (const Row& r : dp == 0 ? kDp0 : kDp1) {
      const double gap = dp == 0 && std::string(r.type) == "optimizer" ? optimizer_gap_ms : 0;
      const bool chunked = std::string(r.type).find("compute") != std::string::npos ||
                           std::string(r.type) == "params-all-gather" || std::string(r.type) == "grads-reduce-scatter";
      b.Op(step, dp, r.stage, r.type, with_seq ? r.seq : -1, offset_ms + r.start + gap, offset_ms + r.end + gap,
           chunked ? 0 : -1);
    }
  }
}

constexpr double kEps = 1e-9;
constexpr double kIdeal = 26.5;

TEST(WhatIfPipeline, SlowdownAndAttributionMatchHandComputation) {
  OpTableBuilder b;
  AddStep(b, 10, 0);
  AddStep(b, 11, 100);
  const TraceStore store = b.Take();
  auto res = ComputeWhatIf(store);
  ASSERT_TRUE(res.ok()) << res.error();
  const WhatIfResult& r = res.value();

  EXPECT_EQ(r.num_dp, 2);
  EXPECT_EQ(r.num_stages, 2);
  ASSERT_EQ(r.steps.size(), 2u);
  EXPECT_TRUE(r.skipped_steps.empty());
  for (const StepTimes& s : r.steps) {
    EXPECT_NEAR(s.recorded_ms, 34, kEps);
    EXPECT_NEAR(s.replayed_ms, 34, kEps);
    EXPECT_NEAR(s.no_delay_ms, 34, kEps);
    EXPECT_NEAR(s.ideal_ms, kIdeal, kEps);
  }
  EXPECT_EQ(r.negative_launch_delays, 0u);
  EXPECT_EQ(r.negative_transfers, 0u);
  EXPECT_NEAR(r.ideal_step_ms, kIdeal, kEps);
  EXPECT_NEAR(r.slowdown, 34 / kIdeal, kEps);
  EXPECT_NEAR(r.waste, 1 - kIdeal / 34, kEps);
  EXPECT_NEAR(r.launch_slowdown, 1.0, kEps);

  EXPECT_NEAR(r.ideal_cost_ms.at("forward-compute"), 2.5, kEps);
  EXPECT_NEAR(r.ideal_cost_ms.at("backward-compute"), 5, kEps);
  EXPECT_NEAR(r.ideal_cost_ms.at("forward-send"), 0, kEps);
  EXPECT_NEAR(r.ideal_cost_ms.at("params-all-gather"), 1, kEps);
  EXPECT_NEAR(r.ideal_cost_ms.at("grads-reduce-scatter"), 1, kEps);
  EXPECT_NEAR(r.ideal_cost_ms.at("optimizer-clip-main-grad"), 1, kEps);
  EXPECT_NEAR(r.ideal_cost_ms.at("optimizer"), 1, kEps);

  ASSERT_EQ(r.by_rank.size(), 2u);
  EXPECT_NEAR(r.by_rank.at(0).ratio, 1.0, kEps);
  EXPECT_NEAR(r.by_rank.at(1).ratio, 34 / kIdeal, kEps);
  EXPECT_NEAR(r.by_rank.at(1).excess_ms, 34 - kIdeal, kEps);
  ASSERT_EQ(r.by_rank.at(1).step_ratio.size(), 2u);
  EXPECT_NEAR(r.by_rank.at(1).step_ratio[1], 34 / kIdeal, kEps);
  ASSERT_EQ(r.by_stage.size(), 2u);
  EXPECT_NEAR(r.by_stage.at(0).ratio, 25 / kIdeal, kEps);
  EXPECT_NEAR(r.by_stage.at(1).ratio, 35.5 / kIdeal, kEps);

  EXPECT_NEAR(r.by_op_type.at("forward-compute").ratio, 29 / kIdeal, kEps);
  EXPECT_NEAR(r.by_op_type.at("backward-compute").ratio, 31.5 / kIdeal, kEps);
  for (const char* t : {"forward-send", "forward-recv", "backward-send", "backward-recv", "params-all-gather",
                        "grads-reduce-scatter", "optimizer-clip-main-grad", "optimizer"})
    EXPECT_NEAR(r.by_op_type.at(t).ratio, 1.0, kEps) << t;
  EXPECT_EQ(r.by_op_type.count("gc"), 0u);  // not recorded, not reported
  EXPECT_NEAR(r.by_op_group.at("forward-pp-comm").ratio, 1.0, kEps);
  EXPECT_NEAR(r.by_op_group.at("backward-compute").ratio, 31.5 / kIdeal, kEps);

  ASSERT_EQ(r.by_worker.size(), 4u);
  for (const WorkerAttribution& w : r.by_worker) {
    const double want = w.dp_rank == 1 && w.stage == 1 ? 35.5 : kIdeal;
    EXPECT_NEAR(w.attribution.ratio, want / kIdeal, kEps) << "dp " << w.dp_rank << " stage " << w.stage;
  }

  // The slowed worker is the top finding by time saved.
  const auto ranked = RankAttributions(r);
  ASSERT_FALSE(ranked.empty());
  EXPECT_EQ(ranked[0].kind, AttributionKind::kWorker);
  EXPECT_EQ(ranked[0].key, "dp1/stage1");
  EXPECT_NEAR(ranked[0].excess_ms, 35.5 - kIdeal, kEps);
}

TEST(WhatIfPipeline, LaunchDelayIsReplayedThenRemoved) {
  OpTableBuilder b;
  AddStep(b, 3, 0, /*optimizer_gap_ms=*/1);  // dp 0 launches both optimizers 1 ms late: step 35 ms
  const TraceStore store = b.Take();
  auto res = ComputeWhatIf(store);
  ASSERT_TRUE(res.ok()) << res.error();
  const WhatIfResult& r = res.value();
  ASSERT_EQ(r.steps.size(), 1u);
  EXPECT_NEAR(r.steps[0].recorded_ms, 35, kEps);
  EXPECT_NEAR(r.steps[0].replayed_ms, 35, kEps);
  EXPECT_NEAR(r.steps[0].no_delay_ms, 34, kEps);
  EXPECT_NEAR(r.launch_slowdown, 35.0 / 34, kEps);
  EXPECT_NEAR(r.slowdown, 34 / kIdeal, kEps);

  auto steps = ReplayRecordedSteps(store);
  ASSERT_TRUE(steps.ok()) << steps.error();
  ASSERT_EQ(steps.value().size(), 1u);
  EXPECT_EQ(steps.value()[0].step, 3);
  EXPECT_NEAR(steps.value()[0].replayed_ms, 35, kEps);
}

TEST(WhatIfPipeline, ClockJitterIsClampedAndCounted) {
  OpTableBuilder b;
  AddStep(b, 0, 0);
  TraceStore store = b.Take();
  // Stage 1's first forward-compute of dp 0 starts 0.1 ms before the recv that feeds it ended.
  for (size_t i = 0; i < store.slices.size(); ++i) {
    const auto& layout = store.op_layout[store.slices.args[i]];
    const RankInfo& rank = store.ranks[store.track(store.slices.track[i]).rank];
    if (store.strings.view(store.slices.name[i]) == "forward-compute" && layout.seq_id == 0 && rank.dp_rank == 0 &&
        rank.pp_stage == 1) {
      store.slices.ts_ns[i] -= 100'000;
      store.slices.dur_ns[i] += 100'000;
    }
  }
  auto res = ComputeWhatIf(store);
  ASSERT_TRUE(res.ok()) << res.error();
  EXPECT_EQ(res.value().negative_launch_delays, 1u);
  EXPECT_NEAR(res.value().most_negative_launch_delay_ms, -0.1, 1e-9);
}

TEST(WhatIfPipeline, StepNotMatchingTheTemplateIsSkipped) {
  OpTableBuilder b;
  AddStep(b, 1, 0);
  AddStep(b, 2, 100);
  b.Op(2, 1, 0, "forward-compute", 2, 150, 151, 0);  // an extra microbatch on one worker
  const TraceStore store = b.Take();
  auto res = ComputeWhatIf(store);
  ASSERT_TRUE(res.ok()) << res.error();
  ASSERT_EQ(res.value().steps.size(), 1u);
  EXPECT_EQ(res.value().steps[0].step, 1);
  EXPECT_EQ(res.value().skipped_steps, std::vector<int32_t>{2});
  EXPECT_NE(res.value().skip_example.find("forward-compute"), std::string::npos) << res.value().skip_example;
}

TEST(WhatIfPipeline, WithoutSeqIdsOpsAreNumberedByStartTime) {
  OpTableBuilder b;
  AddStep(b, 10, 0, 0, /*with_seq=*/false);
  AddStep(b, 11, 100, 0, /*with_seq=*/false);
  const TraceStore store = b.Take();
  auto res = ComputeWhatIf(store);
  ASSERT_TRUE(res.ok()) << res.error();
  EXPECT_EQ(res.value().steps.size(), 2u);
  EXPECT_NEAR(res.value().slowdown, 34 / kIdeal, kEps);
  EXPECT_NEAR(res.value().by_stage.at(1).ratio, 35.5 / kIdeal, kEps);
}

TEST(WhatIfPipeline, DuplicateSeqIdSkipsTheStep) {
  OpTableBuilder b;
  AddStep(b, 1, 0);
  AddStep(b, 2, 100);
  b.Op(2, 0, 1, "forward-recv", 1, 105, 105);  // a second forward-recv number 1 on dp 0 stage 1
  const TraceStore store = b.Take();
  auto res = ComputeWhatIf(store);
  ASSERT_TRUE(res.ok()) << res.error();
  EXPECT_EQ(res.value().skipped_steps, std::vector<int32_t>{2});
  EXPECT_NE(res.value().skip_example.find("two forward-recv"), std::string::npos) << res.value().skip_example;
}

TEST(WhatIfPipeline, UnknownOpTypesAreCountedNotModelled) {
  OpTableBuilder b;
  AddStep(b, 1, 0);
  b.Op(1, 0, 0, "data-loader", 0, 0, 0.5);
  const TraceStore store = b.Take();
  auto res = ComputeWhatIf(store);
  ASSERT_TRUE(res.ok()) << res.error();
  EXPECT_EQ(res.value().ignored_op_types.at("data-loader"), 1u);
  EXPECT_NEAR(res.value().slowdown, 34 / kIdeal, kEps);
}

TEST(WhatIfPipeline, ErrorsAreStatusesWithAMessage) {
  TraceStore empty;
  auto none = ComputeWhatIf(empty);
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.error().find("op-table"), std::string::npos) << none.error();

  // Two recorded ranks claiming the same (dp rank, stage).
  OpTableBuilder b;
  AddStep(b, 1, 0);
  TraceStore store = b.Take();
  RankInfo twin = store.ranks[0];
  twin.rank = 99;
  store.ranks.push_back(twin);
  Track t = store.tracks[0];
  t.rank = static_cast<uint32_t>(store.ranks.size() - 1);
  store.tracks.push_back(t);
  store.op_layout.push_back(OpLayout{0, -1, 0});
  store.slices.append(0, 1000, store.slices.name[0], store.slices.category[0],
                      TrackId(static_cast<uint32_t>(store.tracks.size() - 1)), kNoCorrelation, kSliceOpLayout,
                      static_cast<uint32_t>(store.op_layout.size() - 1));
  store.slices.step.back() = 1;
  auto twin_res = ComputeWhatIf(store);
  ASSERT_FALSE(twin_res.ok());
  EXPECT_NE(twin_res.error().find("99"), std::string::npos) << twin_res.error();
}

}  // namespace
}  // namespace strata::whatif
