// HTA's CUDA kernel launch statistics (get_cuda_kernel_launch_stats), summarized per rank. Every device row
// (hta_rows.h) paired with the runtime launch call that has its correlation (runtime_launch.h) gives
//   cpu_duration = the launch call's duration, gpu_duration = the device row's duration,
//   launch_delay = device row start - launch call end (HTA's documentation: "the difference between GPU
//                  kernel starting and CPU operator ending"; HTA's code adds the call's duration instead of
//                  subtracting it, docs/hta-semantics.md §11),
// all in HTA's µs, and HTA's three kinds of launch:
//   short kernel           cpu_duration <= runtime_cutoff and gpu_duration < cpu_duration (the GPU ran it
//                          faster than the CPU launched it);
//   runtime outlier        cpu_duration > runtime_cutoff (50 µs, HTA's default);
//   launch delay outlier   launch_delay > launch_delay_cutoff (100 µs, HTA's default).
// Invariant: short_kernels + runtime_outliers <= launches (the first two kinds exclude each other).
#pragma once

#include <cstdint>
#include <optional>

#include "analysis/hta_rows.h"
#include "store/trace_store.h"

namespace strata {

struct LaunchStatsOptions {
  double runtime_cutoff_us = 50;        // HTA's runtime_cutoff
  double launch_delay_cutoff_us = 100;  // HTA's launch_delay_cutoff
};

/// Mean, median (the lower of the two middle values for an even count, as the text shows one launch's value),
/// 95th percentile (nearest rank) and maximum of one measure over the launches.
struct LaunchDistribution {
  double mean_us = 0, median_us = 0, p95_us = 0, max_us = 0;
};

struct LaunchStats {
  uint64_t launches = 0;  // launch call / device row pairs
  LaunchDistribution cpu_duration, gpu_duration, launch_delay;
  uint64_t short_kernels = 0, runtime_outliers = 0, launch_delay_outliers = 0;
  double launch_delay_total_us = 0;  // summed over the launches (negative delays included)
};

/// nullopt when no device row of the rank has a launch call (CPU traces, Nsight exports without runtime rows).
std::optional<LaunchStats> ComputeLaunchStats(const TraceStore& store, const HtaRows& rows,
                                              const LaunchStatsOptions& options = {});

}  // namespace strata
