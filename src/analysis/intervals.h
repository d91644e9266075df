// Interval arithmetic on half-open [start, end) integer intervals: union, total length, intersection.
// Invariant: functions taking "disjoint" inputs expect the output of UnionOf (sorted, non-overlapping,
// non-touching); empty or inverted intervals contribute nothing.
#pragma once

#include <cstdint>
#include <vector>

namespace strata {

struct Interval {
  int64_t start = 0;
  int64_t end = 0;
};

/// The union of `v` as sorted disjoint intervals (touching intervals are merged).
std::vector<Interval> UnionOf(std::vector<Interval> v);

/// Total length of disjoint intervals.
int64_t TotalLength(const std::vector<Interval>& disjoint);

/// Length of the intersection of two disjoint sets, in one linear sweep.
int64_t IntersectionLength(const std::vector<Interval>& a, const std::vector<Interval>& b);

}  // namespace strata
