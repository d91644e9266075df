// Tests for the op-outlier pass: excess against peers, robust z across ranks and across steps.
#include <gtest/gtest.h>

#include "analysis/diagnosis/op_outliers.h"

namespace strata::diagnosis {
namespace {

std::vector<OpOccurrence> Ops(double mm_ms, double extra_ms, double offset_ms = 1.0) {
  std::vector<OpOccurrence> v = {{/*name=*/StringId(1), 0, mm_ms * 1e6, offset_ms * 1e6}, {StringId(2), 0, 2e6, 0}};
  if (extra_ms > 0) v.push_back({StringId(3), 0, extra_ms * 1e6, 5e6});
  return v;
}

TEST(OpOutliers, SlowOpOnStragglerStandsOutAcrossRanksAndSteps) {
  OpOutlierCollector c(/*ranks=*/4, /*straggler=*/2);
  // Three ordinary steps, then two where rank 2's op 1 takes 10 ms instead of 4.
  for (int s = 0; s < 3; ++s) c.AddStep({Ops(4, 0), Ops(4.1, 0), Ops(4.05, 0), Ops(3.95, 0)}, false);
  for (int s = 0; s < 2; ++s) c.AddStep({Ops(4, 0), Ops(4.1, 0), Ops(10, 0, 3.0), Ops(3.9, 0)}, true);
  const auto top = c.Top(5);
  ASSERT_FALSE(top.empty());
  EXPECT_EQ(top[0].name, StringId(1));
  EXPECT_NEAR(top[0].excess_ms, 10 - 4.0, 1e-9);  // peers' median of 4, 4.1, 3.9
  EXPECT_NEAR(top[0].duration_ms, 10, 1e-9);
  ASSERT_TRUE(top[0].z_across_ranks.has_value());
  EXPECT_GT(*top[0].z_across_ranks, 3.5);
  ASSERT_TRUE(top[0].z_across_steps.has_value());
  EXPECT_GT(*top[0].z_across_steps, 3.5);
  ASSERT_TRUE(top[0].offset_z_across_ranks.has_value());
  EXPECT_GT(*top[0].offset_z_across_ranks, 3.5);
}

TEST(OpOutliers, OpMissingOnPeersIsAllExcessAndNormalOpsAreNotListed) {
  OpOutlierCollector c(2, 1);
  c.AddStep({Ops(4, 0), Ops(4, 7)}, true);
  const auto top = c.Top(5);
  ASSERT_EQ(top.size(), 1u);  // op 1 and op 2 have no excess
  EXPECT_EQ(top[0].name, StringId(3));
  EXPECT_NEAR(top[0].excess_ms, 7, 1e-9);
  EXPECT_FALSE(top[0].z_across_ranks.has_value());  // two ranks: no robust z
  EXPECT_FALSE(top[0].z_across_steps.has_value());  // no ordinary step to compare with
}

}  // namespace
}  // namespace strata::diagnosis
