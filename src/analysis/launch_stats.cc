// HTA's CUDA kernel launch statistics (see launch_stats.h).
#include "analysis/launch_stats.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "analysis/runtime_launch.h"
#include "core/robust_stats.h"

namespace strata {

namespace {

LaunchDistribution Distribution(std::vector<double> v) {
  LaunchDistribution d;
  if (v.empty()) return d;
  std::sort(v.begin(), v.end());
  double sum = 0;
  for (double x : v) sum += x;
  d.mean_us = sum / static_cast<double>(v.size());
  d.median_us = MedianOfSorted(v.size(), [&](size_t k) { return v[k]; });
  const auto rank = static_cast<size_t>(std::ceil(0.95 * static_cast<double>(v.size())));
  d.p95_us = v[std::max<size_t>(rank, 1) - 1];
  d.max_us = v.back();
  return d;
}

}  // namespace

std::optional<LaunchStats> ComputeLaunchStats(const TraceStore& store, const HtaRows& rows,
                                              const LaunchStatsOptions& options) {
  const std::vector<LaunchPair> pairs = PairRuntimeLaunches(store, rows);
  if (pairs.empty()) return std::nullopt;
  LaunchStats out;
  std::vector<double> cpu, gpu, delay;
  for (const LaunchPair& p : pairs) {
    const HtaRow& call = rows.kept[p.cpu];
    const HtaRow& kernel = rows.kept[p.gpu];
    const double cpu_dur = call.end - call.start, gpu_dur = kernel.end - kernel.start;
    const double launch_delay = kernel.start - call.end;
    cpu.push_back(cpu_dur);
    gpu.push_back(gpu_dur);
    delay.push_back(launch_delay);
    out.launch_delay_total_us += launch_delay;
    if (cpu_dur <= options.runtime_cutoff_us && gpu_dur < cpu_dur) ++out.short_kernels;
    if (cpu_dur > options.runtime_cutoff_us) ++out.runtime_outliers;
    if (launch_delay > options.launch_delay_cutoff_us) ++out.launch_delay_outliers;
  }
  out.launches = pairs.size();
  out.cpu_duration = Distribution(std::move(cpu));
  out.gpu_duration = Distribution(std::move(gpu));
  out.launch_delay = Distribution(std::move(delay));
  return out;
}

}  // namespace strata
