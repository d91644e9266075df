// Robust statistics of the diagnosis passes against hand-computed values: Median (odd, even, empty),
// Mean, Mad, RobustZ (0.6745·(x − median)/MAD, with the MAD floor), and the two-sample KS distance.
#include "core/robust_stats.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

namespace strata::diagnosis {
namespace {

TEST(DiagRobustStats, Median) {
  EXPECT_DOUBLE_EQ(Median({}), 0.0);
  EXPECT_DOUBLE_EQ(Median({5}), 5.0);
  EXPECT_DOUBLE_EQ(Median({3, 1, 2}), 2.0);
  EXPECT_DOUBLE_EQ(Median({4, 1, 3, 2}), 2.5);            // mean of the two middle values
  EXPECT_DOUBLE_EQ(Median({10, -1, 7, 7, 100, 0}), 7.0);  // sorted: -1 0 7 7 10 100
  EXPECT_DOUBLE_EQ(Median({1e9, 1, 2, 3, -5}), 2.0);
  // The argument is taken by value: the caller's order is kept.
  const std::vector<double> v = {9, 1, 5};
  EXPECT_DOUBLE_EQ(Median(v), 5.0);
  EXPECT_EQ(v, (std::vector<double>{9, 1, 5}));
}

TEST(DiagRobustStats, MeanAndMad) {
  EXPECT_DOUBLE_EQ(Mean({}), 0.0);
  EXPECT_DOUBLE_EQ(Mean({1, 2, 3, 10}), 4.0);
  EXPECT_DOUBLE_EQ(Mad({}), 0.0);
  // median 3, |deviations| 2 1 0 1 97 -> median 1
  EXPECT_DOUBLE_EQ(Mad({1, 2, 3, 4, 100}), 1.0);
  // median 2.5, |deviations| 1.5 0.5 0.5 1.5 -> 1.0
  EXPECT_DOUBLE_EQ(Mad({1, 2, 3, 4}), 1.0);
  EXPECT_DOUBLE_EQ(Mad({7, 7, 7, 8}), 0.0);
}

TEST(DiagRobustStats, RobustZ) {
  const std::vector<double> z = RobustZ({1, 2, 3, 4, 100}, 0.0);
  ASSERT_EQ(z.size(), 5u);
  EXPECT_NEAR(z[0], 0.6745 * -2.0, 1e-12);
  EXPECT_NEAR(z[2], 0.0, 1e-12);
  EXPECT_NEAR(z[4], 0.6745 * 97.0, 1e-9);
  EXPECT_GT(z[4], 3.5);  // the outlier is flagged
  EXPECT_LT(std::abs(z[3]), 3.5);
  // With few ranks a 3-sigma rule cannot fire (max |z| = (n-1)/sqrt(n) = 1.5 at n = 4), the robust z can.
  const std::vector<double> four = RobustZ({10.0, 10.2, 9.9, 14.0}, 0.0);  // median 10.1, MAD 0.15
  EXPECT_NEAR(four[3], 0.6745 * 3.9 / 0.15, 1e-9);
  EXPECT_GT(four[3], 3.5);
}

TEST(DiagRobustStats, RobustZMadFloor) {
  // Identical peers: MAD 0. The floor keeps small differences finite and small.
  const std::vector<double> v = {10, 10, 10, 10, 11};
  const std::vector<double> floored = RobustZ(v, 0.5);
  EXPECT_NEAR(floored[4], 0.6745 * 1.0 / 0.5, 1e-12);
  EXPECT_NEAR(floored[0], 0.0, 1e-12);
  // The floor only applies when MAD is smaller.
  const std::vector<double> unfloored = RobustZ({1, 2, 3, 4, 100}, 0.5);
  EXPECT_NEAR(unfloored[4], 0.6745 * 97.0, 1e-9);
  // A zero floor still cannot divide by zero: MAD is floored at 1e-9.
  const std::vector<double> tiny = RobustZ(v, 0.0);
  EXPECT_TRUE(std::isfinite(tiny[4]));
  EXPECT_NEAR(tiny[4], 0.6745 / 1e-9, 1.0);
  EXPECT_TRUE(RobustZ({}, 1.0).empty());
}

TEST(DiagRobustStats, KsDistance) {
  EXPECT_DOUBLE_EQ(KsDistance({}, {1, 2}), 0.0);
  EXPECT_DOUBLE_EQ(KsDistance({1, 2}, {}), 0.0);
  EXPECT_DOUBLE_EQ(KsDistance({1, 2, 3}, {3, 1, 2}), 0.0);
  EXPECT_DOUBLE_EQ(KsDistance({1, 2, 3}, {4, 5, 6}), 1.0);
  // F_a(2) = 2/4, F_b(2) = 0
  EXPECT_DOUBLE_EQ(KsDistance({1, 2, 3, 4}, {3, 4, 5, 6}), 0.5);
  // ties across the samples: at 1, 2/3 vs 1/3; at 2, 1 vs 1
  EXPECT_NEAR(KsDistance({1, 1, 2}, {1, 2, 2}), 1.0 / 3.0, 1e-12);
  // unequal sizes, interleaved: max at x = 1 (1/3 vs 0) and x = 4 (2/3 vs 1)
  EXPECT_NEAR(KsDistance({1, 3, 5}, {2, 4}), 1.0 / 3.0, 1e-12);
  EXPECT_NEAR(KsDistance({2, 4}, {5, 1, 3}), 1.0 / 3.0, 1e-12);  // symmetric, order-free
  EXPECT_DOUBLE_EQ(KsDistance({0}, {1, 2, 3, 4}), 1.0);
  // One sample shifted by a quarter of its values: D = 1/4.
  EXPECT_DOUBLE_EQ(KsDistance({1, 2, 3, 4, 5, 6, 7, 8}, {3, 4, 5, 6, 7, 8, 9, 10}), 0.25);
}

}  // namespace
}  // namespace strata::diagnosis

namespace strata::diagnosis {
namespace {

// The sorted-reference form is the same statistic: checked against the two-sample form on random samples
// with ties, shifts and different sizes.
TEST(DiagRobustStats, KsDistanceToSortedEqualsKsDistance) {
  std::mt19937 rng(11);
  std::uniform_int_distribution<int> value(0, 20), size(1, 30), shift(-5, 5);
  for (int trial = 0; trial < 2000; ++trial) {
    std::vector<double> a(static_cast<size_t>(size(rng))), b(static_cast<size_t>(size(rng) * 3));
    const int d = shift(rng);
    for (double& x : a) x = value(rng) + d;
    for (double& x : b) x = value(rng);
    std::vector<double> sorted = b;
    std::sort(sorted.begin(), sorted.end());
    ASSERT_DOUBLE_EQ(KsDistanceToSorted(a, sorted), KsDistance(a, b)) << "trial " << trial;
  }
  EXPECT_DOUBLE_EQ(KsDistanceToSorted({}, {1.0}), 0.0);
  EXPECT_DOUBLE_EQ(KsDistanceToSorted({5.0}, {1.0, 2.0}), 1.0);
}

}  // namespace
}  // namespace strata::diagnosis
