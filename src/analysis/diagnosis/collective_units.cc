// Collectives as the unit of comparison (see collective_units.h).
#include "analysis/diagnosis/collective_units.h"

#include <algorithm>

#include "analysis/diagnosis/thresholds.h"
#include "core/robust_stats.h"

namespace strata::diagnosis {

namespace {

/// Each rank's arrival at instance k against the median arrival (ns): the lateness it carries into k + 1
/// when the collectives do not synchronize.
std::vector<int64_t> CarriedLateness(const StepPhases& p, size_t k) {
  std::vector<double> arrivals(p.arrival[k].begin(), p.arrival[k].end());
  const double median = Median(arrivals);
  std::vector<int64_t> out;
  for (int64_t a : p.arrival[k]) out.push_back(a - static_cast<int64_t>(median));
  return out;
}

/// Unit k of step `p`: its window, its one instance and the times in it, each rank's moved back by `carry`.
StepPhases Unit(const StepPhases& p, size_t k, const std::vector<int64_t>& carry) {
  const size_t ranks = p.start.size();
  StepPhases u;
  u.step = static_cast<int64_t>(k) + 1;
  u.trace_step = p.trace_step;
  u.instances = {p.instances[k]};
  u.start.resize(ranks);
  u.end.resize(ranks);
  u.arrival.assign(1, std::vector<int64_t>(ranks));
  u.completion.assign(1, std::vector<int64_t>(ranks));
  u.seg.assign(1, std::vector<int64_t>(ranks));
  u.tail.resize(ranks);
  for (size_t r = 0; r < ranks; ++r) {
    u.start[r] = (k == 0 ? p.start[r] : p.completion[k - 1][r]) - carry[r];
    u.end[r] = p.completion[k][r] - carry[r];
    u.arrival[0][r] = p.arrival[k][r] - carry[r];
    u.completion[0][r] = p.completion[k][r] - carry[r];
    u.seg[0][r] = std::max<int64_t>(0, u.arrival[0][r] - u.start[r]);
    u.tail[r] = std::max<int64_t>(0, u.end[r] - u.completion[0][r]);
  }
  u.time_ns = *std::max_element(u.end.begin(), u.end.end()) - *std::min_element(u.start.begin(), u.start.end());
  return u;
}

}  // namespace

PhaseModel CollectiveUnits(const PhaseModel& phases) {
  PhaseModel out;
  out.cumulative = phases.cumulative;
  if (phases.steps.size() != 1) return out;
  const StepPhases& p = phases.steps.front();
  if (p.instances.size() < thresholds::kMinCollectiveUnits) return out;
  const std::vector<int64_t> none(p.start.size(), 0);
  for (size_t k = 0; k < p.instances.size(); ++k)
    out.steps.push_back(Unit(p, k, phases.cumulative && k > 0 ? CarriedLateness(p, k - 1) : none));
  return out;
}

void AddStepStraggler(const PhaseModel& units, const StragglerOptions& options, StragglerAnalysis* analysis) {
  StragglerAnalysis& sa = *analysis;
  if (!sa.stragglers.empty() || sa.blame_ns.empty()) return;
  const size_t ranks = sa.blame_ns.front().size();
  std::vector<double> blame(ranks, 0.0);
  double all = 0, time = 0;
  for (size_t s = 0; s < units.steps.size(); ++s) {
    time += static_cast<double>(units.steps[s].time_ns);
    for (size_t r = 0; r < ranks; ++r) {
      blame[r] += sa.blame_ns[s][r];
      all += sa.blame_ns[s][r];
    }
  }
  const size_t top = static_cast<size_t>(std::max_element(blame.begin(), blame.end()) - blame.begin());
  if (time <= 0 || all <= 0 || blame[top] < options.dominant_blame_share * all ||
      blame[top] < options.min_effect * time)
    return;
  LocatedStraggler st;
  st.rank = RankIndex(top);
  for (size_t s = 0; s < units.steps.size(); ++s)
    if (sa.late[s][top]) st.steps.push_back(units.steps[s].step);
  if (st.steps.empty()) return;
  st.persistent =
      static_cast<double>(st.steps.size()) >= options.persistent_share * static_cast<double>(units.steps.size());
  st.late_ms_per_step = blame[top] / static_cast<double>(units.steps.size()) / 1e6;
  st.score = std::min(1.0, blame[top] / time);
  sa.stragglers.push_back(std::move(st));
}

double CollectiveUnitCoverage(const PhaseModel& phases) {
  if (phases.steps.size() != 1 || phases.steps.front().instances.empty()) return 0;
  const StepPhases& p = phases.steps.front();
  std::vector<double> shares;
  for (size_t r = 0; r < p.start.size(); ++r) {
    const double step = static_cast<double>(p.end[r] - p.start[r]);
    shares.push_back(step > 0 ? static_cast<double>(p.completion.back()[r] - p.start[r]) / step : 1.0);
  }
  return Median(shares);
}

}  // namespace strata::diagnosis
