// Per rank and step, how busy the rank was (see rank_step_busy.h).
#include "analysis/rank_step_busy.h"

#include <algorithm>
#include <cmath>
#include <map>

namespace strata {

std::optional<whatif::OpType> OpTableTypes::Of(uint32_t row) {
  if (!(store_.slices.flags[row] & kSliceOpLayout)) return std::nullopt;
  const StringId name = store_.slices.name[row];
  auto [it, fresh] = cache_.try_emplace(name, std::nullopt);
  if (fresh) it->second = whatif::OpTypeFromName(store_.strings.view(name));
  return it->second;
}

std::vector<std::vector<double>> BusyNsByStep(const model::JobModel& job, size_t ranks) {
  const std::vector<int64_t>& steps = job.steps.steps;
  std::vector<std::vector<double>> out(ranks, std::vector<double>(steps.size(), std::nan("")));
  for (size_t r = 0; r < ranks; ++r) {
    std::map<int64_t, int64_t> coll_ns;
    if (r < job.collectives.calls.size())
      for (const model::CollectiveCall& c : job.collectives.calls[r]) coll_ns[c.step] += c.end_ns - c.start_ns;
    std::map<int64_t, int64_t> span;
    if (r < job.steps.by_rank.size())
      for (const model::StepWindow& w : job.steps.by_rank[r]) span[w.step] = w.end_ns - w.start_ns;
    for (size_t s = 0; s < steps.size(); ++s) {
      auto it = span.find(steps[s]);
      if (it != span.end()) out[r][s] = static_cast<double>(std::max<int64_t>(0, it->second - coll_ns[steps[s]]));
    }
  }
  return out;
}

std::vector<std::vector<double>> OpTableComputeNs(const TraceStore& store, const std::vector<SliceRows>& rows_by_rank,
                                                  const model::JobModel& job) {
  OpTableTypes types(store);
  std::map<int64_t, size_t> step_index;
  for (size_t s = 0; s < job.steps.steps.size(); ++s) step_index[job.steps.steps[s]] = s;
  std::vector<std::vector<double>> out(store.ranks.size(), std::vector<double>(step_index.size(), std::nan("")));
  bool any = false;
  for (size_t r = 0; r < rows_by_rank.size() && r < out.size(); ++r) {
    for (const SliceId row : rows_by_rank[r]) {
      if (!types.IsCompute(row.value)) continue;
      auto it = step_index.find(store.slices.step[row.value]);
      if (it == step_index.end()) continue;
      double& cell = out[r][it->second];
      cell =
          (std::isnan(cell) ? 0.0 : cell) + static_cast<double>(std::max<int64_t>(0, store.slices.dur_ns[row.value]));
      any = true;
    }
  }
  if (!any) out.clear();
  return out;
}

}  // namespace strata
