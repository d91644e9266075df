// Robust statistics of the diagnosis passes against hand-computed values: Median (odd, even, empty; the upper
// middle variant; integers; its sorted forms against it), Mean, Mad, RobustZ (0.6745·(x − median)/MAD, with
// the MAD floor), and the two-sample KS distance.
#include "core/robust_stats.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <utility>
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

// The one variant: the upper middle value of an even count, for a median that must be one of the values (a
// pair ordered by its first member: the median step of critical_path.cc).
TEST(DiagRobustStats, UpperMiddleIsOneOfTheValues) {
  EXPECT_DOUBLE_EQ(Median<EvenCount::kUpperMiddle>(std::vector<double>{4, 1, 3, 2}), 3.0);
  EXPECT_DOUBLE_EQ(Median<EvenCount::kUpperMiddle>(std::vector<double>{3, 1, 2}), 2.0);  // odd: the same median
  const std::vector<std::pair<int64_t, int64_t>> spans = {{40, 10}, {10, 11}, {30, 12}, {20, 13}};
  EXPECT_EQ(Median<EvenCount::kUpperMiddle>(spans), (std::pair<int64_t, int64_t>{30, 12}));
}

// Integers take the midpoint of an even count rounded toward the lower value: no rounding rule elsewhere.
TEST(DiagRobustStats, IntegerMedianRoundsTheMidpointDown) {
  EXPECT_EQ(Median(std::vector<int64_t>{4, 1}), 2);
  EXPECT_EQ(Median(std::vector<int64_t>{1, 2}), 1);
  EXPECT_EQ(Median(std::vector<int64_t>{0, -3}), -2);
  EXPECT_EQ(Median(std::vector<int64_t>{7, 1, 9}), 7);
  EXPECT_EQ(Median<EvenCount::kUpperMiddle>(std::vector<int64_t>{1, 2}), 2);
  EXPECT_EQ(Median(std::vector<int64_t>{}), 0);
}

// The median of sorted values read by rank (the online detector's sorted window, the straggler pass's "all but
// one" of a sorted list) and the MAD of sorted values are the same quantities as Median and Mad of the values.
TEST(DiagRobustStats, SortedFormsAgreeWithMedianAndMad) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> u(-5, 5);
  for (size_t n = 0; n < 40; ++n) {
    std::vector<double> v(n);
    for (double& x : v) x = std::round(u(rng) * 4) / 4;  // ties on purpose
    std::vector<double> sorted = v;
    std::sort(sorted.begin(), sorted.end());
    auto at = [&](size_t k) { return sorted[k]; };
    EXPECT_DOUBLE_EQ(MedianOfSorted(n, at), Median(v)) << n;
    EXPECT_DOUBLE_EQ(MedianOfSorted<EvenCount::kUpperMiddle>(n, at), Median<EvenCount::kUpperMiddle>(v)) << n;
    EXPECT_DOUBLE_EQ(MedianDeviationOfSorted(n, at, Median(v)), Mad(v)) << n;
    for (size_t skip = 0; skip < n; ++skip) {  // all but one, read from the one sorted list
      std::vector<double> others = sorted;
      others.erase(others.begin() + static_cast<std::ptrdiff_t>(skip));
      auto other = [&](size_t j) { return sorted[j < skip ? j : j + 1]; };
      EXPECT_DOUBLE_EQ(MedianOfSorted(n - 1, other), Median(others)) << n << " " << skip;
    }
  }
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
