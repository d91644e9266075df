// Robust statistics used by the clock alignment and the diagnosis passes: median, MAD-based robust z
// (0.6745·(x−median)/MAD, with a floor on MAD so identical peers do not make every small difference infinite), and the
// two-sample Kolmogorov–Smirnov distance. Invariant: functions never read their inputs out of order-sensitive state;
// empty inputs give 0.
// The one home of the median (issue 50): every median of strata is taken here (ctest `one_median` fails on a
// median computed anywhere else), by one definition — the middle value of an odd count, the mean of the two
// middle values of an even count (numpy's and pandas' median). EvenCount::kUpperMiddle, the upper of the two,
// is the one variant, for where the median must be one of the values themselves (the median step of a job: a
// step that was run, critical_path.cc). Integers take the midpoint rounded toward the lower value.
#pragma once

#include <algorithm>
#include <cstddef>
#include <numeric>
#include <type_traits>
#include <utility>
#include <vector>

namespace strata {

/// How a median takes an even count of values (the header comment says where each is used).
enum class EvenCount {
  kMeanOfMiddleTwo,  // the median of every statistic
  kUpperMiddle,      // the upper of the two middle values: the median is one of the values
};

/// The median of `n` values in ascending order, `at(k)` giving the k-th smallest (read for k = n/2 and, for an
/// even n and kMeanOfMiddleTwo, n/2 − 1 only): O(1) calls. 0 for no values.
template <EvenCount kEven = EvenCount::kMeanOfMiddleTwo, typename At>
double MedianOfSorted(size_t n, At at) {
  if (n == 0) return 0;
  const double upper = static_cast<double>(at(n / 2));
  if (n % 2 == 1 || kEven == EvenCount::kUpperMiddle) return upper;
  return (static_cast<double>(at(n / 2 - 1)) + upper) / 2;
}

/// The median of `v` (its values in any order; a default T for none), O(n). A T without arithmetic (a pair
/// ordered by its first member) has only the upper middle.
template <EvenCount kEven = EvenCount::kMeanOfMiddleTwo, typename T>
T Median(std::vector<T> v) {
  static_assert(kEven == EvenCount::kUpperMiddle || std::is_arithmetic_v<T>, "a mean of two needs numbers");
  if (v.empty()) return T{};
  const auto mid = v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2);
  std::nth_element(v.begin(), mid, v.end());
  if constexpr (kEven == EvenCount::kMeanOfMiddleTwo) {
    if (v.size() % 2 == 0) {
      const T lower = *std::max_element(v.begin(), mid);
      if constexpr (std::is_floating_point_v<T>)
        return (lower + *mid) / 2;
      else
        return std::midpoint(lower, *mid);  // rounded toward the lower
    }
  }
  return *mid;
}

/// The median of doubles (what most callers have), also from a braced list: `Median({3, 1, 2})`.
inline double Median(std::vector<double> v) { return Median<EvenCount::kMeanOfMiddleTwo, double>(std::move(v)); }

/// The median of |x − center| over `n` values in ascending order (`at(k)` the k-th smallest), O(n) without
/// copies: the deviations below and above `center` each grow outward from it, so merging the two sides yields
/// them in increasing order. With `center` their median, the MAD.
template <typename At>
double MedianDeviationOfSorted(size_t n, At at, double center) {
  if (n == 0) return 0;
  size_t lo = 0, hi = n;  // lo: the first value >= center
  while (lo < hi) {
    const size_t m = lo + (hi - lo) / 2;
    if (static_cast<double>(at(m)) < center)
      lo = m + 1;
    else
      hi = m;
  }
  size_t below = lo, above = lo;  // next deviations: center − at(below − 1), at(above) − center
  double previous = 0, current = 0;
  for (size_t k = 0; k <= n / 2; ++k) {  // the (n/2)-th smallest deviation, and the one before it
    previous = current;
    const bool take_below = below > 0 && (above >= n || center - static_cast<double>(at(below - 1)) <=
                                                            static_cast<double>(at(above)) - center);
    current = take_below ? center - static_cast<double>(at(--below)) : static_cast<double>(at(above++)) - center;
  }
  return MedianOfSorted(n, [&](size_t k) { return k == n / 2 ? current : previous; });
}

/// The value at rank floor(q·n) of the sorted values (q in [0, 1]); 0 for no values.
double Quantile(std::vector<double> v, double q);
/// numpy's and pandas' default quantile of values sorted ascending: linear interpolation between the values at
/// ranks floor and ceil of q·(n − 1) (q in [0, 1]); at q = 0.5 it is the median above. 0 for no values.
double InterpolatedQuantileOfSorted(const std::vector<double>& sorted, double q);
double Mean(const std::vector<double>& v);
/// Median absolute deviation around the median.
double Mad(const std::vector<double>& v);
/// Robust z of every value; MAD is floored at `mad_floor` (absolute) and at 1e-9.
std::vector<double> RobustZ(const std::vector<double>& v, double mad_floor);
/// Two-sample Kolmogorov–Smirnov statistic D = sup |F_a(x) − F_b(x)|.
double KsDistance(std::vector<double> a, std::vector<double> b);
/// The same for two samples already sorted ascending, in O(|a| + |b|) without copies.
double KsDistanceSorted(const std::vector<double>& a, const std::vector<double>& b);
/// The same statistic against a reference already sorted ascending, in O(|a| log |ref|): for one rank
/// against the pool of all ranks, without sorting or copying the pool per rank.
double KsDistanceToSorted(std::vector<double> a, const std::vector<double>& ref);

}  // namespace strata
