// Robust statistics (see robust_stats.h).
#include "core/robust_stats.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace strata {

double Quantile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  const size_t k = std::min(v.size() - 1, static_cast<size_t>(q * static_cast<double>(v.size())));
  std::nth_element(v.begin(), v.begin() + static_cast<long>(k), v.end());
  return v[k];
}

double InterpolatedQuantileOfSorted(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) return 0;
  const double pos = std::clamp(q, 0.0, 1.0) * static_cast<double>(sorted.size() - 1);
  const auto lo = static_cast<size_t>(pos);
  const size_t hi = std::min(lo + 1, sorted.size() - 1);
  return sorted[lo] + (pos - static_cast<double>(lo)) * (sorted[hi] - sorted[lo]);
}

double Mean(const std::vector<double>& v) {
  return v.empty() ? 0 : std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
}

double Mad(const std::vector<double>& v) {
  const double m = Median(v);
  std::vector<double> dev;
  dev.reserve(v.size());
  for (double x : v) dev.push_back(std::abs(x - m));
  return Median(dev);
}

std::vector<double> RobustZ(const std::vector<double>& v, double mad_floor) {
  const double m = Median(v);
  const double mad = std::max({Mad(v), mad_floor, 1e-9});
  std::vector<double> z;
  z.reserve(v.size());
  for (double x : v) z.push_back(0.6745 * (x - m) / mad);
  return z;
}

double KsDistance(std::vector<double> a, std::vector<double> b) {
  std::sort(a.begin(), a.end());
  std::sort(b.begin(), b.end());
  return KsDistanceSorted(a, b);
}

double KsDistanceSorted(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.empty() || b.empty()) return 0;
  size_t i = 0, j = 0;
  double d = 0;
  while (i < a.size() && j < b.size()) {
    const double x = std::min(a[i], b[j]);
    while (i < a.size() && a[i] <= x) ++i;
    while (j < b.size() && b[j] <= x) ++j;
    d = std::max(d, std::abs(static_cast<double>(i) / static_cast<double>(a.size()) -
                             static_cast<double>(j) / static_cast<double>(b.size())));
  }
  return d;
}

double KsDistanceToSorted(std::vector<double> a, const std::vector<double>& ref) {
  if (a.empty() || ref.empty()) return 0;
  std::sort(a.begin(), a.end());
  const double m = static_cast<double>(a.size()), n = static_cast<double>(ref.size());
  auto below = [&](double x) {  // share of ref < x
    return static_cast<double>(std::lower_bound(ref.begin(), ref.end(), x) - ref.begin()) / n;
  };
  auto at_most = [&](double x) {  // share of ref <= x
    return static_cast<double>(std::upper_bound(ref.begin(), ref.end(), x) - ref.begin()) / n;
  };
  double d = below(a.front());  // ref points before a's first: F_a = 0 there
  for (size_t i = 0; i < a.size();) {
    const double x = a[i];
    while (i < a.size() && a[i] == x) ++i;
    const double fa = static_cast<double>(i) / m;  // constant on [x, next a)
    d = std::max(d, std::abs(fa - at_most(x)));
    if (i < a.size()) d = std::max(d, std::abs(fa - below(a[i])));  // the last ref point before the next a
  }
  return d;
}

}  // namespace strata
