// Runtime launch calls (see runtime_launch.h).
#include "analysis/runtime_launch.h"

#include <array>

namespace strata {

namespace {
constexpr std::array<std::string_view, 11> kLaunchCalls = {
    "cudaLaunchKernel", "cudaLaunchKernelExC", "cuLaunchKernel",     "cuLaunchKernelEx",
    "cudaMemcpyAsync",  "cudaMemsetAsync",     "hipLaunchKernel",    "hipExtModuleLaunchKernel",
    "hipMemcpyAsync",   "hipMemsetAsync",      "hipMemcpyWithStream"};
}  // namespace

bool IsRuntimeLaunchName(std::string_view name) {
  for (std::string_view call : kLaunchCalls)
    if (name == call) return true;
  return false;
}

std::vector<bool> RuntimeLaunchNames(const TraceStore& store) {
  std::vector<bool> out(store.strings.size(), false);
  for (std::string_view call : kLaunchCalls) {
    const StringId id = store.strings.find(call);
    if (id != StringPool::kNotFound) out[id.value] = true;
  }
  return out;
}

std::unordered_map<int64_t, size_t> CpuRowsByCorrelation(const TraceStore& store, const HtaRows& rows) {
  std::unordered_map<int64_t, size_t> out;
  for (size_t i = 0; i < rows.kept.size(); ++i) {
    const SliceId row = rows.kept[i].row;
    const int64_t corr = store.slices.correlation[row.value];
    if (rows.kept[i].device || corr == kNoCorrelation || store.track(store.slices.track[row.value]).stream != -1)
      continue;
    out.try_emplace(corr, i);
  }
  return out;
}

std::vector<LaunchPair> PairRuntimeLaunches(const TraceStore& store, const HtaRows& rows) {
  const std::vector<bool> launch_name = RuntimeLaunchNames(store);
  const std::unordered_map<int64_t, size_t> cpu = CpuRowsByCorrelation(store, rows);
  std::vector<LaunchPair> out;
  for (size_t i = 0; i < rows.kept.size(); ++i) {
    if (!rows.kept[i].device) continue;
    const auto it = cpu.find(store.slices.correlation[rows.kept[i].row.value]);
    if (it == cpu.end() || !launch_name[store.slices.name[rows.kept[it->second].row.value].value]) continue;
    out.push_back(LaunchPair{it->second, i});
  }
  return out;
}

}  // namespace strata
