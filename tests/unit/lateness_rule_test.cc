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
