// Interval arithmetic on half-open [start, end) intervals: union, total length, intersection.
// Works on integer nanoseconds (diagnosis) and on double microseconds (HTA-compatible metrics, which
// HTA computes in floating point). Invariant: functions taking "disjoint" inputs expect the output of
// UnionOf (sorted, non-overlapping, non-touching); empty or inverted intervals contribute nothing.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

namespace strata {

template <typename T>
struct BasicInterval {
  T start{};
  T end{};
};
using Interval = BasicInterval<int64_t>;
using IntervalUs = BasicInterval<double>;

/// The union of `v` as sorted disjoint intervals (touching intervals are merged).
template <typename T>
std::vector<BasicInterval<T>> UnionOf(std::vector<BasicInterval<T>> v) {
  v.erase(std::remove_if(v.begin(), v.end(), [](const BasicInterval<T>& i) { return !(i.end > i.start); }), v.end());
  std::sort(v.begin(), v.end(), [](const BasicInterval<T>& a, const BasicInterval<T>& b) { return a.start < b.start; });
  std::vector<BasicInterval<T>> out;
  for (const BasicInterval<T>& i : v) {
    if (!out.empty() && i.start <= out.back().end) {
      out.back().end = std::max(out.back().end, i.end);
    } else {
      out.push_back(i);
    }
  }
  return out;
}

/// Total length of disjoint intervals.
template <typename T>
T TotalLength(const std::vector<BasicInterval<T>>& disjoint) {
  T total{};
  for (const BasicInterval<T>& i : disjoint) total += i.end - i.start;
  return total;
}

/// Length of the intersection of two disjoint sets, in one linear sweep.
template <typename T>
T IntersectionLength(const std::vector<BasicInterval<T>>& a, const std::vector<BasicInterval<T>>& b) {
  T total{};
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    const T lo = std::max(a[i].start, b[j].start);
    const T hi = std::min(a[i].end, b[j].end);
    if (hi > lo) total += hi - lo;
    if (a[i].end < b[j].end) {
      ++i;
    } else {
      ++j;
    }
  }
  return total;
}

}  // namespace strata
