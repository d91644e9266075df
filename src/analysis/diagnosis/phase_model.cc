// PhaseModel construction (see phase_model.h).
#include "analysis/diagnosis/phase_model.h"

#include <algorithm>
#include <map>

namespace strata::diagnosis {

PhaseModel BuildPhases(const model::StepModel& steps, const model::CollectiveModel& collectives,
                       const model::ClockAlignment& clocks, size_t ranks) {
  PhaseModel out;
  out.cumulative = !collectives.ends_synchronize;
  std::map<int64_t, std::vector<const model::MatchedCollective*>> by_step;
  for (const auto& m : collectives.matched)
    if (m.present == ranks) by_step[m.step].push_back(&m);
  for (int64_t step : steps.steps) {
    StepPhases p;
    p.step = step;
    p.trace_step = step;
    p.start.resize(ranks);
    p.end.resize(ranks);
    bool ok = true;
    for (size_t r = 0; r < ranks; ++r) {
      const auto& windows = steps.by_rank[r];
      auto it =
          std::find_if(windows.begin(), windows.end(), [&](const model::StepWindow& w) { return w.step == step; });
      if (it == windows.end()) {
        ok = false;
        break;
      }
      p.start[r] = it->start_ns - clocks.offset_ns[r];
      p.end[r] = it->end_ns - clocks.offset_ns[r];
    }
    if (!ok) continue;
    p.instances = by_step[step];
    const size_t k_count = p.instances.size();
    p.arrival.assign(k_count, std::vector<int64_t>(ranks));
    p.completion.assign(k_count, std::vector<int64_t>(ranks));
    p.seg.assign(k_count, std::vector<int64_t>(ranks));
    p.tail.resize(ranks);
    for (size_t k = 0; k < k_count; ++k) {
      for (size_t r = 0; r < ranks; ++r) {
        const model::CollectiveCall& c = collectives.calls[r][p.instances[k]->call[r]];
        p.arrival[k][r] = c.start_ns - clocks.offset_ns[r];
        p.completion[k][r] = c.end_ns - clocks.offset_ns[r];
        const int64_t prev = k == 0 ? p.start[r] : p.completion[k - 1][r];
        p.seg[k][r] = std::max<int64_t>(0, p.arrival[k][r] - prev);
      }
    }
    for (size_t r = 0; r < ranks; ++r)
      p.tail[r] = std::max<int64_t>(0, p.end[r] - (k_count ? p.completion[k_count - 1][r] : p.start[r]));
    p.time_ns = *std::max_element(p.end.begin(), p.end.end()) - *std::min_element(p.start.begin(), p.start.end());
    out.steps.push_back(std::move(p));
  }
  return out;
}

}  // namespace strata::diagnosis
