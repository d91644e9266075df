// HTA-compatible per-rank GPU metrics (DESIGN.md "HTA-compatible metrics"): temporal breakdown (idle /
// compute / non-compute), communication-computation overlap, kernel time by type and top kernels.
// Algorithm: take events with an explicit dur and a category (not "Trace"), round each inward to whole
// µs (start = ceil, end = floor), apply HTA's last-ProfilerStep rule, then measure unions of GPU
// intervals. Invariants: idle + compute + non_compute == kernel_time; all values in whole µs.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "analysis/kernel_type.h"
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
  int64_t time_us = 0;
  int64_t min_us = 0;
  int64_t max_us = 0;
};

struct GpuBreakdown {
  uint64_t gpu_events = 0;  // GPU events kept after the step rule
  int64_t kernel_time_us = 0, idle_us = 0, compute_us = 0, non_compute_us = 0;
  double idle_pct = 0, compute_pct = 0, non_compute_pct = 0;
  std::optional<double> comm_comp_overlap_pct;  // none when there is no communication
  std::array<uint64_t, 4> type_count{};         // by KernelType
  std::array<int64_t, 4> type_time_us{};        // sum of durations by KernelType
  std::vector<KernelStat> top_kernels;          // by total time, descending (ties: name)
  bool last_step_dropped = false;
};

/// Computes the breakdown for one rank from its slices (`slice_rows`: indices into store.slices).
/// Returns nullopt when the rank has no GPU events at all.
std::optional<GpuBreakdown> ComputeGpuBreakdown(const TraceStore& store, const std::vector<uint32_t>& slice_rows,
                                                const BreakdownOptions& options);

}  // namespace strata
