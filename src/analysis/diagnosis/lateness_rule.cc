// The persistence rule of a straggler (lateness_rule.h): one pass over a rank's steps.
#include "analysis/diagnosis/lateness_rule.h"

#include <algorithm>

namespace strata::diagnosis {

RankLateness JudgeRankLateness(const std::vector<double>& lateness, const std::vector<double>& step_time,
                               const LatenessRule& rule) {
  RankLateness out;
  const size_t steps = std::min(lateness.size(), step_time.size());
  double worst = 0;
  for (size_t s = 0; s < steps; ++s) {
    worst = std::max(worst, lateness[s]);
    out.total += std::max(0.0, lateness[s]);
  }
  const double cut = thresholds::kClearlyLateShareOfWorst * worst;
  size_t well_late = 0, very_late = 0;
  for (size_t s = 0; s < steps; ++s) {
    const double at = rule.late_share * step_time[s];
    if (step_time[s] <= 0 || lateness[s] < at) continue;
    out.late.push_back(s);
    if (lateness[s] < cut) {
      out.other_sum += lateness[s];
      continue;
    }
    out.clear.push_back(s);
    out.clear_sum += lateness[s];
    if (lateness[s] >= rule.well_late_multiple * at) ++well_late;
    if (lateness[s] >= rule.very_late_multiple * at) ++very_late;
  }
  out.cluster = well_late >= thresholds::kWellLateSteps || very_late >= thresholds::kVeryLateSteps;
  const double persistent_steps = rule.persistent_share * static_cast<double>(steps);
  out.persistent = !out.late.empty() && static_cast<double>(out.late.size()) >= persistent_steps;
  const size_t others = out.late.size() - out.clear.size();
  if (out.persistent && out.cluster && others > 0 && static_cast<double>(out.clear.size()) < persistent_steps &&
      out.other_sum / static_cast<double>(others) <
          thresholds::kAfterEffectShare * out.clear_sum / static_cast<double>(out.clear.size()))
    out.persistent = false;
  return out;
}

}  // namespace strata::diagnosis
