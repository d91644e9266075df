// The summary's outlier rule and spread (analysis/summary_metrics.h): hand-worked cases, and invariants over
// random jobs — relabelling ranks permutes the outliers, an absent metric takes part in nothing, scaling a
// duration metric by a constant names the same ranks.
#include "analysis/summary_metrics.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "analysis/diagnosis/thresholds.h"

namespace strata {
namespace {

constexpr size_t kEvents = 0, kSpan = 1, kRunQueue = 11;

SummaryMetricValues Absent() {
  SummaryMetricValues v;
  v.fill(std::nan(""));
  return v;
}

std::vector<int32_t> Numbers(size_t n) {
  std::vector<int32_t> out(n);
  for (size_t i = 0; i < n; ++i) out[i] = static_cast<int32_t>(i);
  return out;
}

TEST(SummaryOutliers, OneRankBeyondTheMadsIsNamedWithTheMedianItWasComparedWith) {
  std::vector<SummaryMetricValues> ranks(5, Absent());
  const double spans[] = {100, 101, 99, 100, 160};
  for (size_t i = 0; i < 5; ++i) ranks[i][kSpan] = spans[i];
  const auto out = FindSummaryOutliers(ranks, Numbers(5));
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].index, 4u);
  EXPECT_EQ(out[0].metric, kSpan);
  EXPECT_DOUBLE_EQ(out[0].value, 160);
  EXPECT_DOUBLE_EQ(out[0].against, 100);
  EXPECT_FALSE(out[0].other_rank);
}

TEST(SummaryOutliers, ADifferenceThatDoesNotMatterIsNoOutlierHoweverManyMads) {
  std::vector<SummaryMetricValues> ranks(4, Absent());
  // Identical spans but one 1 % longer: infinitely many MADs, but under kSummaryOutlierMinShare of the median.
  const double spans[] = {100, 100, 100, 101};
  for (size_t i = 0; i < 4; ++i) ranks[i][kSpan] = spans[i];
  EXPECT_TRUE(FindSummaryOutliers(ranks, Numbers(4)).empty());
}

TEST(SummaryOutliers, TwoRanksNameTheWorseOnlyOnAHigherIsWorseMetricAtThePairRatio) {
  std::vector<SummaryMetricValues> ranks(2, Absent());
  ranks[0][kRunQueue] = 1.16;
  ranks[1][kRunQueue] = 37.6;
  ranks[0][kEvents] = 600;  // events: not higher-is-worse, never a pair outlier
  ranks[1][kEvents] = 6000;
  const auto out = FindSummaryOutliers(ranks, {3, 7});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].index, 1u);
  EXPECT_EQ(out[0].metric, kRunQueue);
  ASSERT_TRUE(out[0].other_rank);
  EXPECT_EQ(*out[0].other_rank, 3);
  // A difference that matters (over kSummaryOutlierMinPoints) just under and just over the pair ratio.
  const double ratio = diagnosis::thresholds::kSummaryOutlierPairRatio;
  ranks[0][kRunQueue] = 5;
  ranks[1][kRunQueue] = ratio * 5 - 0.01;
  EXPECT_TRUE(FindSummaryOutliers(ranks, {3, 7}).empty());
  ranks[1][kRunQueue] = ratio * 5 + 0.01;
  EXPECT_EQ(FindSummaryOutliers(ranks, {3, 7}).size(), 1u);
}

TEST(SummaryOutliers, InvariantsOverRandomJobs) {
  std::mt19937 rng(51);
  for (int trial = 0; trial < 300; ++trial) {
    const size_t n = 2 + rng() % 12;
    std::vector<SummaryMetricValues> ranks(n, Absent());
    std::normal_distribution<double> noise(0, 1);
    for (size_t i = 0; i < n; ++i) {
      ranks[i][kSpan] = 100 + noise(rng) * (rng() % 3 == 0 ? 30 : 1);
      if (rng() % 4) ranks[i][kRunQueue] = std::abs(5 + noise(rng) * 4);
    }
    const std::vector<int32_t> numbers = Numbers(n);
    const auto out = FindSummaryOutliers(ranks, numbers);
    for (const SummaryOutlier& o : out) {
      ASSERT_LT(o.index, n);
      EXPECT_FALSE(std::isnan(ranks[o.index][o.metric])) << "an absent metric named an outlier";
      EXPECT_GT(o.score, 0);
    }
    // Relabelling: reverse the ranks' order and numbers; the same ranks (by number) on the same metrics.
    std::vector<SummaryMetricValues> reversed(ranks.rbegin(), ranks.rend());
    std::vector<int32_t> renumbered(numbers.rbegin(), numbers.rend());
    auto named = [](const std::vector<SummaryOutlier>& os, const std::vector<int32_t>& nums) {
      std::vector<std::pair<int32_t, size_t>> v;
      for (const auto& o : os) v.emplace_back(nums[o.index], o.metric);
      std::sort(v.begin(), v.end());
      return v;
    };
    EXPECT_EQ(named(out, numbers), named(FindSummaryOutliers(reversed, renumbered), renumbered));
    // Scaling the spans by 1000 (ms -> µs) names the same ranks.
    auto scaled = ranks;
    for (auto& r : scaled) r[kSpan] *= 1000;
    EXPECT_EQ(named(out, numbers), named(FindSummaryOutliers(scaled, numbers), numbers));
    const auto spread = SpreadOverRanks(ranks);
    ASSERT_TRUE(spread[kSpan]);
    EXPECT_LE(spread[kSpan]->min, spread[kSpan]->median);
    EXPECT_LE(spread[kSpan]->median, spread[kSpan]->max);
    EXPECT_FALSE(spread[kEvents]) << "no rank has the events metric here";
  }
}

}  // namespace
}  // namespace strata
