// Interval arithmetic: UnionOf, TotalLength, IntersectionLength, checked by hand and against brute force.
#include "analysis/intervals.h"

#include <gtest/gtest.h>

#include <random>
#include <vector>

namespace strata {
namespace {

std::vector<std::pair<int64_t, int64_t>> Pairs(const std::vector<Interval>& v) {
  std::vector<std::pair<int64_t, int64_t>> out;
  for (const auto& i : v) out.emplace_back(i.start, i.end);
  return out;
}

using P = std::vector<std::pair<int64_t, int64_t>>;

// UnionOf is a template: give it a typed vector.
std::vector<Interval> U(std::vector<Interval> v) { return UnionOf(std::move(v)); }

TEST(Intervals, UnionOfOverlapping) {
  EXPECT_EQ(Pairs(U({{5, 10}, {0, 6}, {20, 30}, {25, 40}})), (P{{0, 10}, {20, 40}}));
}

TEST(Intervals, UnionMergesTouching) {
  EXPECT_EQ(Pairs(U({{0, 5}, {5, 10}})), (P{{0, 10}}));
  EXPECT_EQ(Pairs(U({{5, 10}, {0, 5}, {11, 12}})), (P{{0, 10}, {11, 12}}));
}

TEST(Intervals, UnionOfNested) {
  EXPECT_EQ(Pairs(U({{0, 100}, {10, 20}, {30, 40}, {99, 100}})), (P{{0, 100}}));
  EXPECT_EQ(Pairs(U({{10, 20}, {0, 100}})), (P{{0, 100}}));
}

TEST(Intervals, UnionDropsEmptyAndInverted) {
  EXPECT_TRUE(U({}).empty());
  EXPECT_TRUE(U({{5, 5}, {7, 3}}).empty());
  EXPECT_EQ(Pairs(U({{5, 5}, {0, 2}, {9, 1}, {3, 4}})), (P{{0, 2}, {3, 4}}));
  // An empty interval inside a gap must not bridge the gap.
  EXPECT_EQ(Pairs(U({{0, 2}, {2, 2}, {3, 4}})), (P{{0, 2}, {3, 4}}));
}

TEST(Intervals, UnionWithNegativeCoordinates) { EXPECT_EQ(Pairs(U({{-10, -5}, {-6, 3}})), (P{{-10, 3}})); }

TEST(Intervals, TotalLength) {
  EXPECT_EQ(TotalLength(std::vector<Interval>{}), 0);
  EXPECT_EQ(TotalLength(U({{0, 10}, {5, 15}, {20, 21}})), 16);
}

TEST(Intervals, IntersectionLength) {
  EXPECT_EQ(IntersectionLength(std::vector<Interval>{}, U({{0, 10}})), 0);
  EXPECT_EQ(IntersectionLength(U({{0, 10}}), std::vector<Interval>{}), 0);
  EXPECT_EQ(IntersectionLength(U({{0, 10}}), U({{5, 20}})), 5);
  EXPECT_EQ(IntersectionLength(U({{0, 10}}), U({{10, 20}})), 0);  // touching only
  EXPECT_EQ(IntersectionLength(U({{0, 100}}), U({{10, 20}, {30, 40}, {90, 120}})), 30);
  EXPECT_EQ(IntersectionLength(U({{10, 20}, {30, 40}, {90, 120}}), U({{0, 100}})), 30);
  EXPECT_EQ(IntersectionLength(U({{0, 5}, {10, 15}}), U({{5, 10}, {15, 20}})), 0);
}

TEST(Intervals, DoubleMicroseconds) {
  const auto u = UnionOf(std::vector<IntervalUs>{{0.5, 1.25}, {1.0, 2.0}, {3.0, 3.0}, {4.0, 3.5}, {2.0, 2.5}});
  ASSERT_EQ(u.size(), 1u);
  EXPECT_DOUBLE_EQ(u[0].start, 0.5);
  EXPECT_DOUBLE_EQ(u[0].end, 2.5);
  EXPECT_DOUBLE_EQ(TotalLength(u), 2.0);
  const auto v = UnionOf(std::vector<IntervalUs>{{2.25, 10.0}});
  EXPECT_DOUBLE_EQ(IntersectionLength(u, v), 0.25);
}

// Brute force over unit cells on a small grid.
TEST(Intervals, RandomAgainstBruteForce) {
  std::mt19937 rng(12345);
  constexpr int kGrid = 200;
  for (int round = 0; round < 2000; ++round) {
    std::uniform_int_distribution<int> count(0, 12);
    std::uniform_int_distribution<int> coord(0, kGrid);
    auto make = [&](std::vector<bool>& cells) {
      std::vector<Interval> v;
      const int n = count(rng);
      for (int k = 0; k < n; ++k) {
        const int a = coord(rng);
        const int b = rng() % 4 == 0 ? coord(rng) : std::min(kGrid, a + coord(rng) % 30);  // some inverted
        v.push_back({a, b});
        for (int c = a; c < b; ++c) cells[c] = true;
      }
      return v;
    };
    std::vector<bool> a_cells(kGrid, false), b_cells(kGrid, false);
    const auto a = U(make(a_cells));
    const auto b = U(make(b_cells));
    int64_t a_len = 0, inter = 0;
    for (int c = 0; c < kGrid; ++c) {
      a_len += a_cells[c];
      inter += a_cells[c] && b_cells[c];
    }
    ASSERT_EQ(TotalLength(a), a_len) << "round " << round;
    ASSERT_EQ(IntersectionLength(a, b), inter) << "round " << round;
    ASSERT_EQ(IntersectionLength(b, a), inter) << "round " << round;
    // Output shape: sorted, non-empty, separated by real gaps, covering exactly the cells.
    for (size_t k = 0; k < a.size(); ++k) {
      ASSERT_LT(a[k].start, a[k].end);
      if (k > 0) {
        ASSERT_LT(a[k - 1].end, a[k].start);
      }
      for (int64_t c = a[k].start; c < a[k].end; ++c) ASSERT_TRUE(a_cells[c]);
      if (a[k].start > 0) {
        ASSERT_FALSE(a_cells[a[k].start - 1]);
      }
      if (a[k].end < kGrid) {
        ASSERT_FALSE(a_cells[a[k].end]);
      }
    }
  }
}

}  // namespace
}  // namespace strata
