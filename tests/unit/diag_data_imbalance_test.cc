// The data_imbalance rule of the trace paths on constructed lateness: ranks late in turn in at least half
// of the steps and a real loss give the finding (ranks mapped to their numbers); a few late steps (jitter),
// one rank, a straggler already found, or a loss under the minimum effect give none.
#include "analysis/diagnosis/data_imbalance.h"

#include <gtest/gtest.h>

#include <set>
#include <vector>

namespace strata::diagnosis {
namespace {

// `steps` x 4 ranks; late[s] = the rank late in step s, or -1.
StragglerAnalysis Lateness(const std::vector<int>& late_rank_by_step) {
  StragglerAnalysis sa;
  sa.late.assign(late_rank_by_step.size(), std::vector<bool>(4, false));
  std::set<int32_t> ranks;
  for (size_t s = 0; s < late_rank_by_step.size(); ++s)
    if (late_rank_by_step[s] >= 0) {
      sa.late[s][static_cast<size_t>(late_rank_by_step[s])] = true;
      ++sa.late_pairs;
      ranks.insert(late_rank_by_step[s]);
    }
  sa.late_ranks.assign(ranks.begin(), ranks.end());
  return sa;
}

const std::vector<int32_t> kRankNumbers = {10, 11, 12, 13};

TEST(DataImbalance, RanksLateInTurnInHalfTheSteps) {
  const StragglerAnalysis sa = Lateness({0, -1, 2, -1, 3, -1});
  EXPECT_TRUE(RanksLateInTurn(sa));
  const auto f = DataImbalanceFinding(sa, kRankNumbers, 0.08, DiagnosisResult{}, 0.03);
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->cause, "data_imbalance");
  EXPECT_EQ(f->layer, "data");
  EXPECT_EQ(f->ranks, (std::vector<int32_t>{10, 12, 13}));
  EXPECT_DOUBLE_EQ(f->impact_pct, 8.0);
  EXPECT_EQ(f->evidence["late_pairs"], 3);
  EXPECT_NE(f->summary.find("3 ranks take turns"), std::string::npos) << f->summary;
}

TEST(DataImbalance, JitterOneRankAStragglerOrASmallLossIsNot) {
  // Two late steps of six, on two ranks: what jitter does in a clean 4-8-rank job.
  EXPECT_FALSE(RanksLateInTurn(Lateness({1, -1, -1, 2, -1, -1})));
  EXPECT_FALSE(DataImbalanceFinding(Lateness({1, -1, -1, 2, -1, -1}), kRankNumbers, 0.08, {}, 0.03).has_value());
  // One rank late in every step is a straggler's pattern, not imbalance.
  EXPECT_FALSE(RanksLateInTurn(Lateness({1, 1, 1, 1})));
  const StragglerAnalysis rotating = Lateness({0, 1, 2, 3});
  DiagnosisResult with_straggler;
  with_straggler.stragglers.push_back(Straggler{});
  EXPECT_FALSE(DataImbalanceFinding(rotating, kRankNumbers, 0.08, with_straggler, 0.03).has_value());
  EXPECT_FALSE(DataImbalanceFinding(rotating, kRankNumbers, 0.02, {}, 0.03).has_value());
  EXPECT_TRUE(DataImbalanceFinding(rotating, kRankNumbers, 0.03, {}, 0.03).has_value());
}

}  // namespace
}  // namespace strata::diagnosis
