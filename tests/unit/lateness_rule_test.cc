// The one persistence rule (lateness_rule.h): persistent, intermittent cluster, after-effects, options.
#include "analysis/diagnosis/lateness_rule.h"

#include <gtest/gtest.h>

namespace strata::diagnosis {
namespace {

const std::vector<double> kTenSteps(10, 100.0);  // step time 100 (any unit)

TEST(LatenessRule, LateInMostStepsIsPersistent) {
  // 3 % of the step is the least lateness that counts: 6 of 10 steps late.
  std::vector<double> late = {5, 5, 5, 5, 5, 5, 1, 0, 2, 0};
  RankLateness j = JudgeRankLateness(late, kTenSteps, LatenessRule{});
  EXPECT_TRUE(j.persistent);
  EXPECT_EQ(j.late, (std::vector<size_t>{0, 1, 2, 3, 4, 5}));
  EXPECT_DOUBLE_EQ(j.total, 33);
  // 5 of 10 late: not persistent, and 5 % < twice the 3 % minimum: no cluster.
  late[5] = 0;
  j = JudgeRankLateness(late, kTenSteps, LatenessRule{});
  EXPECT_FALSE(j.persistent);
  EXPECT_FALSE(j.cluster);
}

TEST(LatenessRule, ThreeWellLateStepsOrTwoVeryLateOnesMakeACluster) {
  std::vector<double> late = {0, 7, 0, 7, 0, 7, 0, 0, 0, 0};  // 7 >= 2 x 3
  RankLateness j = JudgeRankLateness(late, kTenSteps, LatenessRule{});
  EXPECT_TRUE(j.cluster);
  EXPECT_FALSE(j.persistent);
  EXPECT_EQ(j.clear, (std::vector<size_t>{1, 3, 5}));
  late = {0, 13, 0, 13, 0, 0, 0, 0, 0, 0};  // 13 >= 4 x 3, twice
  EXPECT_TRUE(JudgeRankLateness(late, kTenSteps, LatenessRule{}).cluster);
  late = {0, 11, 0, 11, 0, 0, 0, 0, 0, 0};  // under 4 x 3
  EXPECT_FALSE(JudgeRankLateness(late, kTenSteps, LatenessRule{}).cluster);
  // Options: every late step counts toward a cluster, the very-late route off.
  const LatenessRule lenient{.late_share = 0.06, .well_late_multiple = 1, .very_late_multiple = LatenessRule::kUnused};
  late = {0, 6, 0, 6, 0, 6, 0, 0, 0, 0};
  EXPECT_TRUE(JudgeRankLateness(late, kTenSteps, lenient).cluster);
  late = {0, 50, 0, 50, 0, 0, 0, 0, 0, 0};
  EXPECT_FALSE(JudgeRankLateness(late, kTenSteps, lenient).cluster);
}

TEST(LatenessRule, AClusterWithSmallAfterEffectsIsIntermittent) {
  // Late in 7 of 10 steps, but 3 stand far above the rest: a fault switched on in those steps.
  std::vector<double> late = {40, 40, 40, 4, 4, 4, 4, 0, 0, 0};
  RankLateness j = JudgeRankLateness(late, kTenSteps, LatenessRule{});
  EXPECT_TRUE(j.cluster);
  EXPECT_FALSE(j.persistent);
  EXPECT_EQ(j.clear, (std::vector<size_t>{0, 1, 2}));
  // After-effects as large as a fifth of the cluster: persistent after all.
  late = {40, 40, 40, 9, 9, 9, 9, 0, 0, 0};
  EXPECT_TRUE(JudgeRankLateness(late, kTenSteps, LatenessRule{}).persistent);
}

TEST(LatenessRule, AClusterWhoseRestIsNotPersistentIsIntermittent) {
  // A busy 2-rank lab job (tuning seed 90232, scaled to a step of 100): the fault rank 11-14 late in its three
  // steps and 3-4 in three of the six others. Late in 6 of 9 steps, and the other late steps' mean, 3.3, is
  // over a fifth of the cluster's 13; but without its cluster the rank is late in 3 of 6 steps: not persistent.
  const std::vector<double> steps(9, 100.0);
  RankLateness j = JudgeRankLateness({0, 0, 14, 3, 4, 14, 0, 3, 11}, steps, LatenessRule{});
  EXPECT_FALSE(j.persistent);
  EXPECT_TRUE(j.cluster);
  EXPECT_EQ(j.clear, (std::vector<size_t>{2, 5, 8}));
  // Late in 5 of the 6 others: persistent, with a few worse steps.
  j = JudgeRankLateness({3, 3, 14, 3, 4, 14, 0, 3, 11}, steps, LatenessRule{});
  EXPECT_TRUE(j.persistent);
  EXPECT_EQ(j.late.size(), 8u);
}

TEST(LatenessRule, LateStepsWithinTheJobsNoiseBesideAClusterAreIntermittent) {
  // The same rank late by 3-4 in 5 of its 6 other steps, while a peer is as late as 5 in steps of its own:
  // those steps are the job's noise, the rank an intermittent straggler.
  const std::vector<double> late = {0, 3, 14, 3, 4, 14, 3, 3, 11};
  const std::vector<double> steps(9, 100.0);
  EXPECT_TRUE(JudgeRankLateness(late, steps, LatenessRule{}).persistent);
  RankLateness j = JudgeRankLateness(late, steps, LatenessRule{.peers_worst = 5});
  EXPECT_FALSE(j.persistent);
  EXPECT_EQ(j.clear, (std::vector<size_t>{2, 5, 8}));
  EXPECT_DOUBLE_EQ(j.other_worst, 4);
  // A peer never later than 3.5: the rank's 4 is beyond the noise, so it is late in most steps after all.
  EXPECT_TRUE(JudgeRankLateness(late, steps, LatenessRule{.peers_worst = 3.5}).persistent);
}

TEST(LatenessRule, AStepAboveTheJobsNoiseIsClearlyLateFarUnderTheWorst) {
  // Contention on a rank's link in three steps (tuning seed 90301, scaled): 13, 29 and 8 late; the peer's worst
  // step 1. The 60 % cut of the worst (17.4) alone would keep one of the three.
  const std::vector<double> late = {1, 1, 13, 0, 1, 29, 2, 0, 8};
  const LatenessRule rule{.well_late_multiple = 1, .very_late_multiple = LatenessRule::kUnused, .peers_worst = 1};
  for (bool above_noise : {false, true}) {
    LatenessRule judged_by = rule;
    judged_by.clear_above_noise = above_noise;
    RankLateness j = JudgeRankLateness(late, kTenSteps, judged_by);
    EXPECT_EQ(j.clear, (std::vector<size_t>{2, 5, 8})) << above_noise;
    EXPECT_TRUE(j.cluster) << above_noise;
    EXPECT_FALSE(j.persistent) << above_noise;
  }
  // Within the peer's noise, or under the least lateness that counts (3), it is not.
  LatenessRule above = rule;
  above.peers_worst = 10;
  EXPECT_EQ(JudgeRankLateness(late, kTenSteps, above).clear, (std::vector<size_t>{2, 5}));
  above.peers_worst = 0;
  EXPECT_EQ(JudgeRankLateness(late, kTenSteps, above).late, (std::vector<size_t>{2, 5, 8}));
  // Unmeasured noise: the cut alone.
  above.peers_worst.reset();
  EXPECT_EQ(JudgeRankLateness(late, kTenSteps, above).clear, (std::vector<size_t>{5}));
}

TEST(LatenessRule, AStepRightAfterOneNearTheWorstIsItsAfterEffectUnlessTheRecordingNamedTheCause) {
  // After tests/data/ddp/intermittent-rank1-every3 (scaled): 10.8 late in its fault steps, the peer's worst 3.1;
  // 6.2 in the step after one of them (the recording has 5.8 there: 2.7 above the noise, under the 3 a lateness
  // needs to count, so within it). The same 6.2 two steps later stands 3.1 above the noise, a fault step of its own.
  const std::vector<double> late = {0, 10.8, 6.2, 0, 10.8, 0, 0, 10.8, 0, 6.2};
  const LatenessRule rule{.well_late_multiple = 1, .very_late_multiple = LatenessRule::kUnused, .peers_worst = 3.1};
  RankLateness j = JudgeRankLateness(late, kTenSteps, rule);
  EXPECT_EQ(j.clear, (std::vector<size_t>{1, 4, 7, 9}));
  EXPECT_EQ(j.late, (std::vector<size_t>{1, 2, 4, 7, 9}));
  LatenessRule named = rule;
  named.clear_above_noise = true;
  EXPECT_EQ(JudgeRankLateness(late, kTenSteps, named).clear, (std::vector<size_t>{1, 2, 4, 7, 9}));
}

TEST(LatenessRule, AStepJustAboveTheJobsNoiseIsThatNoise) {
  // Held-out run at fa4d2e1, 2-rank intermittent slow compute of 0.3 (52 ms steps, scaled to 100): the fault rank,
  // on a core 17 % slower than its peer's, was late 6.5 ms in a spared step; its peer's worst step was 5.9 ms
  // late; the fault's three steps 22-25 ms. The spared step is 0.6 ms above the noise, under the 3 % of a step
  // (1.6 ms) a lateness needs to count.
  const double scale = 100.0 / 52.0;
  std::vector<double> late = {0, 6.5, 22.4, 1.3, 3.5, 24.2, 4.4, 0.2, 25.2};
  for (double& x : late) x *= scale;
  const std::vector<double> steps(late.size(), 100.0);
  LatenessRule rule{.peers_worst = 5.9 * scale};
  for (bool above_noise : {false, true}) {
    rule.clear_above_noise = above_noise;
    const RankLateness j = JudgeRankLateness(late, steps, rule);
    EXPECT_EQ(j.clear, (std::vector<size_t>{2, 5, 8})) << above_noise;
    EXPECT_TRUE(j.cluster) << above_noise;
    EXPECT_FALSE(j.persistent) << above_noise;
  }
  // The same step 3 % of a step above a quieter peer's worst stands out of the noise.
  rule.peers_worst = late[1] - 3.0;
  EXPECT_EQ(JudgeRankLateness(late, steps, rule).clear, (std::vector<size_t>{1, 2, 5, 8}));
}

TEST(LatenessRule, ThreeStepsAboveTheJobsNoiseMakeAClusterUnderTwiceTheMinimum) {
  // Held-out run at 1d80002, 2-rank intermittent slow compute of 0.08 (52 ms steps, scaled to 100): 8.6, 5.5 and
  // 8.1 late in the fault's steps, the peer never later than 1.1. 5.5 is under twice the 3 % minimum.
  const std::vector<double> late = {0, 0, 8.6, 1.2, 0.7, 5.5, 2.3, 1.7, 8.1};
  const std::vector<double> steps(late.size(), 100.0);
  RankLateness j = JudgeRankLateness(late, steps, LatenessRule{.peers_worst = 1.1});
  EXPECT_TRUE(j.cluster);
  EXPECT_FALSE(j.persistent);
  EXPECT_EQ(j.clear, (std::vector<size_t>{2, 5, 8}));
  // Unmeasured noise, or a peer as late as 3 (5.5 is then 2.5 above it, under the 3 that counts): two steps of 6.
  EXPECT_FALSE(JudgeRankLateness(late, steps, LatenessRule{}).cluster);
  EXPECT_FALSE(JudgeRankLateness(late, steps, LatenessRule{.peers_worst = 3}).cluster);
  // A step under 1.2x the minimum effect counts for no cluster, however quiet the peers: a busy machine's hiccups.
  std::vector<double> hiccups = {0, 0, 5, 0, 0, 3.4, 0, 0, 5};
  EXPECT_EQ(JudgeRankLateness(hiccups, steps, LatenessRule{.peers_worst = 0}).clear, (std::vector<size_t>{2, 5, 8}));
  EXPECT_FALSE(JudgeRankLateness(hiccups, steps, LatenessRule{.peers_worst = 0}).cluster);
  hiccups[5] = 3.7;
  EXPECT_TRUE(JudgeRankLateness(hiccups, steps, LatenessRule{.peers_worst = 0}).cluster);
  // A larger fault is never missed: every fault step later by any amount keeps the cluster.
  for (double more : {0.5, 2.0, 10.0, 40.0}) {
    std::vector<double> larger = late;
    for (size_t s : {2, 5, 8}) larger[s] += more;
    const RankLateness k = JudgeRankLateness(larger, steps, LatenessRule{.peers_worst = 1.1});
    EXPECT_TRUE(k.cluster) << more;
    EXPECT_EQ(k.clear, (std::vector<size_t>{2, 5, 8})) << more;
  }
}

TEST(LatenessRule, AClusterUnderTwiceTheMinimumMustStandAboveTheRanksOwnNoiseToo) {
  // Held-out run at 90801bd, 2-rank intermittent slow compute of 0.08 (55 ms steps, scaled to 100): 4.9, 3.8 and
  // 3.8 late in the fault's steps, never over 0.4 in the others, the peer never over 0.1: a cluster.
  const std::vector<double> steps(9, 100.0);
  const std::vector<double> fault = {0, 0.4, 4.9, 0, 0.1, 3.8, 0, 0, 3.8};
  RankLateness j = JudgeRankLateness(fault, steps, LatenessRule{.peers_worst = 0.1});
  EXPECT_TRUE(j.cluster);
  EXPECT_EQ(j.clear, (std::vector<size_t>{2, 5, 8}));
  // A generated clean 2-rank job (uniform noise of 5.6 %, StragglerGenerated): 3.8, 4.4, 5.0 and 5.3 late in
  // four steps, the peer's worst 1.4, but the rank itself 2.1 late in another: the four are its noise.
  const std::vector<double> noisy = {0, 3.8, 4.4, 5.0, 0, 0, 0, 2.1, 5.3};
  EXPECT_FALSE(JudgeRankLateness(noisy, steps, LatenessRule{.peers_worst = 1.4}).cluster);
  // Without that step it would stand out (so the rank's own noise is what decides), and a step well late (twice
  // the minimum) needs no margin at all.
  std::vector<double> quiet = noisy;
  quiet[7] = 0;
  EXPECT_TRUE(JudgeRankLateness(quiet, steps, LatenessRule{.peers_worst = 1.4}).cluster);
  std::vector<double> well = noisy;
  for (size_t s : {2, 3, 8}) well[s] = 6.5;
  EXPECT_TRUE(JudgeRankLateness(well, steps, LatenessRule{.peers_worst = 1.4}).cluster);
  // Relabelling the steps (the rank's own noise anywhere outside the cluster) changes nothing.
  for (size_t at : {0u, 4u, 5u, 6u}) {
    std::vector<double> moved = quiet;
    moved[at] = 2.1;
    EXPECT_FALSE(JudgeRankLateness(moved, steps, LatenessRule{.peers_worst = 1.4}).cluster) << at;
  }
}

TEST(LatenessRule, AStepUnderHalfTheClearlyLateStepBeforeItIsItsAfterEffect) {
  // Held-out run at 1d80002, 4-rank intermittent CPU contention of 0.15 (109 ms steps, scaled to 100): 46.6, 24.6
  // and 29.6 late in the fault's steps, 6.6 in the step after the 24.6 (its spinners' run queue draining), the
  // peers' worst 2.45. The 6.6 stands out of the noise, but the step before was clearly late and more than
  // twice as late: an after-effect, not a fault step.
  const std::vector<double> late = {0.2, 3.9, 46.6, 0, 0, 24.6, 6.6, 0.1, 29.6};
  const std::vector<double> steps(late.size(), 100.0);
  const LatenessRule rule{.peers_worst = 2.45};
  RankLateness j = JudgeRankLateness(late, steps, rule);
  EXPECT_EQ(j.clear, (std::vector<size_t>{2, 5, 8}));
  EXPECT_EQ(j.late, (std::vector<size_t>{1, 2, 5, 6, 8}));
  EXPECT_FALSE(j.persistent);
  // Half as late as the step before or more: a step of the fault's own.
  std::vector<double> half = late;
  half[6] = 12.3;
  EXPECT_EQ(JudgeRankLateness(half, steps, rule).clear, (std::vector<size_t>{2, 5, 6, 8}));
  // After a step that is late but not clearly late, the step is judged on its own.
  std::vector<double> after_noise = late;
  after_noise[5] = 2.0;
  EXPECT_EQ(JudgeRankLateness(after_noise, steps, rule).clear, (std::vector<size_t>{2, 6, 8}));
  // With the recording's cause named, the steps above the noise are its steps, as after a step near the worst.
  LatenessRule named = rule;
  named.clear_above_noise = true;
  EXPECT_EQ(JudgeRankLateness(late, steps, named).clear, (std::vector<size_t>{2, 5, 6, 8}));
}

TEST(LatenessRule, StepsWithoutATimeAreNeverLate) {
  const std::vector<double> late = {50, 50, 50};
  const std::vector<double> time = {0, -1, 0};
  RankLateness j = JudgeRankLateness(late, time, LatenessRule{});
  EXPECT_TRUE(j.late.empty());
  EXPECT_FALSE(j.persistent);
  EXPECT_FALSE(j.cluster);
}

}  // namespace
}  // namespace strata::diagnosis
