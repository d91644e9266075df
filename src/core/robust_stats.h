// Robust statistics used by the clock alignment and the diagnosis passes: median, MAD-based robust z
// (0.6745·(x−median)/MAD, with a floor on MAD so identical peers do not make every small difference infinite), and the
// two-sample Kolmogorov–Smirnov distance. Invariant: functions never read their inputs out of order-sensitive state;
// empty inputs give 0.
#pragma once

#include <vector>

namespace strata {

double Median(std::vector<double> v);
/// The value at rank floor(q·n) of the sorted values (q in [0, 1]); 0 for no values.
double Quantile(std::vector<double> v, double q);
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
