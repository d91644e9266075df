// The persistence rule of a straggler (lateness_rule.h): one pass over a rank's steps.
#include "analysis/diagnosis/lateness_rule.h"

#include <algorithm>

namespace strata::diagnosis {

namespace {

// Whether a step's lateness exceeds the peers' worst by a lateness that counts (late_share of its step, `at`).
// Unmeasured noise: never.
bool BeyondTheNoise(double lateness, double at, const LatenessRule& rule) {
  return rule.peers_worst && lateness - *rule.peers_worst >= at;
}

// Whether a step's lateness stands out of the job's noise (lateness_rule.h): well late, and beyond the noise.
bool OutOfTheNoise(double lateness, double at, const LatenessRule& rule) {
  return lateness >= rule.well_late_multiple * at && BeyondTheNoise(lateness, at, rule);
}

// Whether a clearly late step counts toward a cluster (lateness_rule.h): well late, or late by
// kClusterAboveNoiseMultiple x late_share and beyond the noise: the peers' and the rank's own outside its clearly
// late steps (`own_rest_worst`).
bool CountsForACluster(double lateness, double at, double own_rest_worst, const LatenessRule& rule) {
  return lateness >= rule.well_late_multiple * at ||
         (lateness >= thresholds::kClusterAboveNoiseMultiple * at && BeyondTheNoise(lateness, at, rule) &&
          lateness - own_rest_worst >= at);
}

// Whether a late step is clearly late (lateness_rule.h): near the rank's worst step, or well late beyond
// anything the job's noise reaches, unless (without clear_above_noise) it may be the after-effect of the step
// before it: that step is near the worst, or clearly late and more than twice as late as this one.
bool ClearlyLate(double lateness, double at, double cut, bool after_effect, const LatenessRule& rule) {
  if (lateness >= cut) return true;
  if (!OutOfTheNoise(lateness, at, rule)) return false;
  return rule.clear_above_noise || !after_effect;
}

// The rank's largest lateness in the steps outside `clear` (0 when none is late at all): its own share of the
// job's noise.
double OwnWorstOutside(const std::vector<double>& lateness, size_t steps, const std::vector<size_t>& clear) {
  double worst = 0;
  size_t next = 0;
  for (size_t s = 0; s < steps; ++s) {
    if (next < clear.size() && clear[next] == s) {
      ++next;
      continue;
    }
    worst = std::max(worst, lateness[s]);
  }
  return worst;
}

// Late in most steps, yet intermittent (lateness_rule.h): a cluster of fewer than persistent_share of the
// steps, and the other late steps are small after-effects of it, within the job's noise (none later than the
// peers' worst, or none out of the noise and too few to be persistent among the steps outside the cluster), or
// hiccups: none well late or near the cluster's least, and too few to be persistent outside the cluster.
bool ClusterWithSmallRest(const RankLateness& r, size_t steps, const LatenessRule& rule) {
  const size_t others = r.late.size() - r.clear.size();
  const double persistent_steps = rule.persistent_share * static_cast<double>(steps);
  if (!r.cluster || others == 0 || static_cast<double>(r.clear.size()) >= persistent_steps) return false;
  const bool after_effects = r.other_sum / static_cast<double>(others) <
                             thresholds::kAfterEffectShare * r.clear_sum / static_cast<double>(r.clear.size());
  const bool few_outside =
      static_cast<double>(others) < rule.persistent_share * static_cast<double>(steps - r.clear.size());
  const bool noise = rule.peers_worst && (r.other_worst <= *rule.peers_worst || (!r.other_out_of_noise && few_outside));
  const bool rest_hiccups =
      !r.other_well_late && r.other_worst < thresholds::kHiccupShareOfCluster * r.clear_least && few_outside;
  return after_effects || noise || rest_hiccups;
}

}  // namespace

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
    const bool after_clear = !out.clear.empty() && out.clear.back() + 1 == s;
    const bool after_effect =
        s > 0 && step_time[s - 1] > 0 &&
        (lateness[s - 1] >= cut ||
         (after_clear && lateness[s] < thresholds::kAfterEffectOfPreviousShare * lateness[s - 1]));
    if (!ClearlyLate(lateness[s], at, cut, after_effect, rule)) {
      out.other_sum += lateness[s];
      out.other_worst = std::max(out.other_worst, lateness[s]);
      out.other_well_late = out.other_well_late || lateness[s] >= rule.well_late_multiple * at;
      out.other_out_of_noise = out.other_out_of_noise || OutOfTheNoise(lateness[s], at, rule);
      continue;
    }
    out.clear_least = out.clear.empty() ? lateness[s] : std::min(out.clear_least, lateness[s]);
    out.clear.push_back(s);
    out.clear_sum += lateness[s];
    if (lateness[s] >= rule.very_late_multiple * at) ++very_late;
  }
  const double own_rest_worst = OwnWorstOutside(lateness, steps, out.clear);
  for (size_t s : out.clear)
    if (CountsForACluster(lateness[s], rule.late_share * step_time[s], own_rest_worst, rule)) ++well_late;
  out.cluster = well_late >= thresholds::kWellLateSteps || very_late >= thresholds::kVeryLateSteps;
  const double persistent_steps = rule.persistent_share * static_cast<double>(steps);
  out.persistent = !out.late.empty() && static_cast<double>(out.late.size()) >= persistent_steps &&
                   !ClusterWithSmallRest(out, steps, rule);
  return out;
}

}  // namespace strata::diagnosis
