// Clock alignment (see clock_alignment.h).
#include "model/clock_alignment.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "core/robust_stats.h"
#include "model/model_thresholds.h"

namespace strata::model {

namespace {

/// Every call's start on an epoch-based clock (model_thresholds.h).
bool EpochClocks(const CollectiveModel& collectives) {
  for (const auto& calls : collectives.calls)
    for (const CollectiveCall& c : calls)
      if (static_cast<double>(c.start_ns) < thresholds::kEpochFloorNs) return false;
  return true;
}

}  // namespace

ClockAlignment AlignClocks(const CollectiveModel& collectives, size_t ranks) {
  ClockAlignment out;
  out.offset_ns.assign(ranks, 0);
  if (!collectives.ends_synchronize && EpochClocks(collectives)) {
    out.host_clocks = true;
    return out;
  }
  std::vector<std::vector<double>> deviations(ranks);
  for (const MatchedCollective& m : collectives.matched) {
    if (m.present < 2) continue;
    std::vector<double> ends;
    for (size_t r = 0; r < ranks; ++r)
      if (m.call[r] >= 0) ends.push_back(static_cast<double>(collectives.calls[r][m.call[r]].end_ns));
    const double med = Median(ends);
    for (size_t r = 0; r < ranks; ++r)
      if (m.call[r] >= 0) deviations[r].push_back(static_cast<double>(collectives.calls[r][m.call[r]].end_ns) - med);
    ++out.instances_used;
  }
  if (out.instances_used == 0) return out;
  std::vector<double> offsets(ranks, 0);
  for (size_t r = 0; r < ranks; ++r) offsets[r] = deviations[r].empty() ? 0 : Median(deviations[r]);
  if (collectives.subgroups) {
    // Groups smaller than the world (tensor/data/pipeline groups) each see only part of the offsets, and a
    // group's median includes the rank itself: repeat the estimate on the corrected clocks until the
    // corrections vanish. Each of a rank's groups gets one vote (the median of its instances), so frequent
    // small-group collectives do not drown the few that link the groups.
    std::vector<std::map<StringId, std::vector<double>>> by_group(ranks);
    for (int iteration = 0; iteration < 500; ++iteration) {
      for (auto& g : by_group) g.clear();
      for (const MatchedCollective& m : collectives.matched) {
        if (m.present < 2) continue;
        std::vector<double> ends;
        for (size_t r = 0; r < ranks; ++r)
          if (m.call[r] >= 0) ends.push_back(static_cast<double>(collectives.calls[r][m.call[r]].end_ns) - offsets[r]);
        const double med = Median(ends);
        for (size_t r = 0; r < ranks; ++r)
          if (m.call[r] >= 0)
            by_group[r][m.group].push_back(static_cast<double>(collectives.calls[r][m.call[r]].end_ns) - offsets[r] -
                                           med);
      }
      double largest = 0;
      for (size_t r = 0; r < ranks; ++r) {
        double d = 0;
        for (auto& [group, dev] : by_group[r]) d += Median(std::move(dev));
        if (!by_group[r].empty()) d /= static_cast<double>(by_group[r].size());
        offsets[r] += d;
        largest = std::max(largest, std::abs(d));
      }
      if (largest < 10) break;
    }
  }
  const double center = Median(offsets);
  for (size_t r = 0; r < ranks; ++r) out.offset_ns[r] = std::llround(offsets[r] - center);
  std::vector<double> residuals;
  for (const MatchedCollective& m : collectives.matched) {
    if (m.present < 2) continue;
    std::vector<double> ends;
    for (size_t r = 0; r < ranks; ++r)
      if (m.call[r] >= 0)
        ends.push_back(static_cast<double>(collectives.calls[r][m.call[r]].end_ns - out.offset_ns[r]));
    const double med = Median(ends);
    for (double e : ends) residuals.push_back(std::abs(e - med));
  }
  out.residual_us = Median(residuals) / 1000.0;
  return out;
}

}  // namespace strata::model
