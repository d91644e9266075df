// A CPU trace's compute per step (see step_compute.h).
#include "analysis/step_compute.h"

#include <algorithm>
#include <string_view>
#include <vector>

#include "analysis/intervals.h"
#include "model/collectives.h"

namespace strata {

namespace {

bool IsStep(std::string_view name) { return name.substr(0, 13) == "ProfilerStep#" && name.size() > 13; }

/// The length of `collectives` (sorted disjoint) inside `step`.
int64_t InsideLength(const std::vector<Interval>& collectives, const Interval& step) {
  int64_t total = 0;
  for (const Interval& c : collectives) {
    const int64_t a = std::max(c.start, step.start), b = std::min(c.end, step.end);
    if (b > a) total += b - a;
  }
  return total;
}

}  // namespace

std::optional<double> CpuComputePerStepMs(const TraceStore& store, const SliceRows& rows) {
  const SliceTable& s = store.slices;
  std::vector<Interval> steps, collectives;
  std::vector<int8_t> kind(store.strings.size(), -1);  // per name: 0 other, 1 step, 2 collective
  for (const SliceId row : rows) {
    if ((s.flags[row.value] & kSliceGpu) || s.dur_ns[row.value] <= 0) continue;
    const StringId name = s.name[row.value];
    if (kind[name.value] < 0) {
      const std::string_view text = store.strings.view(name);
      kind[name.value] = IsStep(text) ? 1 : model::IsCpuCollective(text) ? 2 : 0;
    }
    if (kind[name.value] == 0) continue;
    const Interval span{s.ts_ns[row.value], s.ts_ns[row.value] + s.dur_ns[row.value]};
    (kind[name.value] == 1 ? steps : collectives).push_back(span);
  }
  if (steps.empty()) return std::nullopt;
  collectives = UnionOf(std::move(collectives));
  double total_ns = 0;
  for (const Interval& step : steps)
    total_ns += static_cast<double>(step.end - step.start - InsideLength(collectives, step));
  return total_ns / 1e6 / static_cast<double>(steps.size());
}

}  // namespace strata
