// HTA-compatible per-rank GPU metrics: temporal breakdown (idle / compute / non-compute), communication-
// computation overlap, kernel time by type and top kernels. Follows HTA's implementation (see
// docs/hta-semantics.md, which also lists where it differs from DESIGN.md), over HTA's device rows of the
// rank (hta_rows.h: rows, rounding, step rule, device rows): kernel_time = last end - first start;
// idle = kernel_time - |union|; compute = |union(COMPUTATION)|; non_compute = rest;
// overlap = |union(COMP) ∩ union(COMM)| / |union(COMM)|.
// Invariant: idle + compute + non_compute == kernel_time.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "analysis/hta_rows.h"
#include "model/kernel_type.h"
#include "store/trace_store.h"

namespace strata {

struct BreakdownOptions {
  bool include_last_step = false;  // HTA's include_last_profiler_step
  size_t top_kernels = 10;
};

struct KernelStat {
  std::string name;
  KernelType type = KernelType::kOther;
  uint64_t count = 0;
  double time_us = 0;
  double min_us = 0;
  double max_us = 0;
};

struct GpuBreakdown {
  uint64_t gpu_events = 0;  // device rows kept after the step rule
  double kernel_time_us = 0, idle_us = 0, compute_us = 0, non_compute_us = 0;
  double idle_pct = 0, compute_pct = 0, non_compute_pct = 0;
  std::optional<double> comm_comp_overlap_pct;  // none when there is no communication
  std::array<uint64_t, 4> type_count{};         // by KernelType
  std::array<double, 4> type_time_us{};         // sum of durations by KernelType
  std::vector<KernelStat> top_kernels;          // COMM/COMP/MEMORY kernels by total time, descending
  bool last_step_dropped = false;
  bool rounded_to_us = false;  // rule 2 applied
};

/// Computes the breakdown for one rank from its slices (`slice_rows`: indices into store.slices) read from
/// input `input`. Returns nullopt when the rank has no device rows at all.
std::optional<GpuBreakdown> ComputeGpuBreakdown(const TraceStore& store, const SliceRows& slice_rows,
                                                const InputInfo& input, const BreakdownOptions& options);
/// The same from the rank's HTA rows, when the caller has them (the summary reads them once for every
/// HTA analysis); `options.include_last_step` was applied when `rows` were kept.
GpuBreakdown ComputeGpuBreakdown(const TraceStore& store, const HtaRows& rows, const BreakdownOptions& options);

}  // namespace strata
