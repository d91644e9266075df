// Step rhythm from the gaps between collective calls (see step_rhythm.h).
#include "model/step_rhythm.h"

#include <algorithm>

#include "core/robust_stats.h"
#include "model/model_thresholds.h"

namespace strata::model {
namespace {

using thresholds::kRhythmMaxPeriod;
using thresholds::kRhythmMinConsistency;
using thresholds::kRhythmMinSeparation;
using thresholds::kRhythmMinSteps;

struct Score {
  double consistency = 0;  // share of steps whose opening gap is their largest
  double separation = 0;   // median opening gap / median largest other gap
};

// Steps open at calls first, first + period, ...: gap[j] is the idle time before call j + 1.
Score Evaluate(const std::vector<double>& gap, size_t period, size_t first) {
  std::vector<double> opening, other;
  size_t consistent = 0, steps = 0;
  for (size_t open = first; open + period <= gap.size() + 1 && open >= 1; open += period) {
    const double g = gap[open - 1];
    double largest_inside = 0;
    for (size_t j = open; j + 1 < open + period && j < gap.size(); ++j)
      largest_inside = std::max(largest_inside, gap[j]);
    opening.push_back(g);
    other.push_back(largest_inside);
    consistent += g > largest_inside;
    ++steps;
  }
  Score s;
  if (steps < kRhythmMinSteps) return s;
  s.consistency = static_cast<double>(consistent) / static_cast<double>(steps);
  const double inside = Median(other), opening_median = Median(opening);
  s.separation = inside > 0 ? opening_median / inside : (opening_median > 0 ? 1e9 : 0);
  return s;
}

// Regular spacing for one call per step: the gaps' interquartile range within kRhythmRegularIqrShare of
// their median.
bool Regular(const std::vector<double>& gap) {
  if (gap.size() < kRhythmMinSteps) return false;
  const double q1 = Quantile(gap, 0.25), q3 = Quantile(gap, 0.75), med = Median(gap);
  return med > 0 && q3 - q1 <= thresholds::kRhythmRegularIqrShare * med;
}

}  // namespace

Rhythm DetectRhythm(const std::vector<std::pair<int64_t, int64_t>>& calls) {
  if (calls.size() < 2) return {};
  std::vector<double> gap(calls.size() - 1);
  for (size_t i = 0; i + 1 < calls.size(); ++i)
    gap[i] = static_cast<double>(std::max<int64_t>(0, calls[i + 1].first - calls[i].second));
  for (size_t period = 2; period <= kRhythmMaxPeriod && period * kRhythmMinSteps <= gap.size(); ++period) {
    Rhythm best;
    double best_separation = 0;
    for (size_t first = 1; first <= period; ++first) {
      const Score s = Evaluate(gap, period, first);
      if (s.consistency >= kRhythmMinConsistency && s.separation >= kRhythmMinSeparation &&
          s.separation > best_separation) {
        best_separation = s.separation;
        best = {period, first};
      }
    }
    if (best.period) return best;
  }
  if (Regular(gap)) return {1, 1};
  return {};
}

}  // namespace strata::model
