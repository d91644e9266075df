// Clock alignment (see clock_alignment.h).
#include "model/clock_alignment.h"

#include <algorithm>
#include <cmath>

#include "analysis/diagnosis/robust_stats.h"

namespace strata::model {

ClockAlignment AlignClocks(const CollectiveModel& collectives, size_t ranks) {
  ClockAlignment out;
  out.offset_ns.assign(ranks, 0);
  std::vector<std::vector<double>> deviations(ranks);
  for (const MatchedCollective& m : collectives.matched) {
    if (m.present < 2) continue;
    std::vector<double> ends;
    for (size_t r = 0; r < ranks; ++r)
      if (m.call[r] >= 0) ends.push_back(static_cast<double>(collectives.calls[r][m.call[r]].end_ns));
    const double med = diagnosis::Median(ends);
    for (size_t r = 0; r < ranks; ++r)
      if (m.call[r] >= 0) deviations[r].push_back(static_cast<double>(collectives.calls[r][m.call[r]].end_ns) - med);
    ++out.instances_used;
  }
  if (out.instances_used == 0) return out;
  std::vector<double> offsets(ranks, 0);
  for (size_t r = 0; r < ranks; ++r) offsets[r] = deviations[r].empty() ? 0 : diagnosis::Median(deviations[r]);
  const double center = diagnosis::Median(offsets);
  for (size_t r = 0; r < ranks; ++r) out.offset_ns[r] = std::llround(offsets[r] - center);
  std::vector<double> residuals;
  for (const MatchedCollective& m : collectives.matched) {
    if (m.present < 2) continue;
    std::vector<double> ends;
    for (size_t r = 0; r < ranks; ++r)
      if (m.call[r] >= 0)
        ends.push_back(static_cast<double>(collectives.calls[r][m.call[r]].end_ns - out.offset_ns[r]));
    const double med = diagnosis::Median(ends);
    for (double e : ends) residuals.push_back(std::abs(e - med));
  }
  out.residual_us = diagnosis::Median(residuals) / 1000.0;
  return out;
}

}  // namespace strata::model
