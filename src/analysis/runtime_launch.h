// The one rule for which CPU-side runtime calls launch work on a GPU stream (HTA's runtime launch events,
// trace_symbol_table.get_runtime_launch_events_mask): CUDA's cudaLaunchKernel, cudaLaunchKernelExC,
// cuLaunchKernel, cuLaunchKernelEx, cudaMemcpyAsync, cudaMemsetAsync and ROCm's hipLaunchKernel,
// hipExtModuleLaunchKernel, hipMemcpyAsync, hipMemsetAsync, hipMemcpyWithStream. A call counts only when a
// device row has its correlation (the caller pairs them). Read by the kernel launch statistics and the queue
// length; HTA's get_cuda_kernel_launch_stats names only cudaLaunchKernel and the two async memory calls, and
// so leaves out cudaLaunchKernelExC, the driver's and ROCm's launches (docs/hta-semantics.md §11).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "analysis/hta_rows.h"
#include "store/trace_store.h"

namespace strata {

/// Whether `name` is a runtime call that launches work on a stream.
bool IsRuntimeLaunchName(std::string_view name);

/// Per interned string id of `store`: whether it names a runtime launch call (indexed by StringId.value).
std::vector<bool> RuntimeLaunchNames(const TraceStore& store);

/// HTA's index_correlation from the device side: correlation id -> index in `rows.kept` of the kept CPU row
/// (not on a stream) with that correlation, whatever its name (the first in kept order when several).
std::unordered_map<int64_t, size_t> CpuRowsByCorrelation(const TraceStore& store, const HtaRows& rows);

/// A runtime launch call and a device row it launched (same correlation), as indices into `rows.kept`.
struct LaunchPair {
  size_t cpu = 0;
  size_t gpu = 0;
};
/// Every device row of `rows` whose correlated CPU row is a runtime launch call, paired with it, in kept order.
std::vector<LaunchPair> PairRuntimeLaunches(const TraceStore& store, const HtaRows& rows);

}  // namespace strata
