// HTA-compatible GPU metrics (see gpu_breakdown.h).
#include "analysis/gpu_breakdown.h"

#include <algorithm>
#include <cmath>
#include <unordered_map>

#include "analysis/intervals.h"

namespace strata {

namespace {

// Kernel time, idle, compute, non-compute and overlap from the device intervals (HTA's temporal breakdown).
void FillTemporal(std::vector<IntervalUs> all, std::vector<IntervalUs> comp, std::vector<IntervalUs> comm, double first,
                  double last_end, GpuBreakdown* out) {
  const auto all_u = UnionOf(std::move(all));
  const auto comp_u = UnionOf(std::move(comp));
  const auto comm_u = UnionOf(std::move(comm));
  out->kernel_time_us = last_end - first;
  out->idle_us = out->kernel_time_us - TotalLength(all_u);
  out->compute_us = TotalLength(comp_u);
  out->non_compute_us = out->kernel_time_us - out->compute_us - out->idle_us;
  if (out->kernel_time_us > 0) {
    out->idle_pct = 100.0 * out->idle_us / out->kernel_time_us;
    out->compute_pct = 100.0 * out->compute_us / out->kernel_time_us;
    out->non_compute_pct = 100.0 * out->non_compute_us / out->kernel_time_us;
  }
  const double comm_len = TotalLength(comm_u);
  if (comm_len > 0) out->comm_comp_overlap_pct = 100.0 * IntersectionLength(comp_u, comm_u) / comm_len;
}

// Counts and times by kernel type, and the top kernels by time (HTA's kernel breakdown).
void FillKernels(std::unordered_map<StringId, KernelStat> by_name, size_t top, GpuBreakdown* out) {
  std::vector<KernelStat> kernels;
  for (auto& [id, k] : by_name) {
    const auto t = static_cast<size_t>(k.type);
    out->type_count[t] += k.count;
    out->type_time_us[t] += k.time_us;
    // Like HTA's kernel breakdown, rows of no kernel type (syncs) are not listed.
    if (k.type != KernelType::kOther) kernels.push_back(std::move(k));
  }
  std::sort(kernels.begin(), kernels.end(), [](const KernelStat& a, const KernelStat& b) {
    return a.time_us != b.time_us ? a.time_us > b.time_us : a.name < b.name;
  });
  if (kernels.size() > top) kernels.resize(top);
  out->top_kernels = std::move(kernels);
}

}  // namespace

std::optional<GpuBreakdown> ComputeGpuBreakdown(const TraceStore& store, const SliceRows& slice_rows,
                                                const InputInfo& input, const BreakdownOptions& options) {
  const std::optional<HtaRows> rows = KeptHtaRows(store, slice_rows, input, options.include_last_step);
  if (!rows) return std::nullopt;
  return ComputeGpuBreakdown(store, *rows, options);
}

GpuBreakdown ComputeGpuBreakdown(const TraceStore& store, const HtaRows& rows, const BreakdownOptions& options) {
  const SliceTable& s = store.slices;
  GpuBreakdown out;
  out.rounded_to_us = rows.rounded_to_us;
  out.last_step_dropped = rows.last_step_dropped;
  std::vector<IntervalUs> all, comp, comm;
  double first = 0, last_end = 0;
  std::unordered_map<StringId, KernelStat> by_name;
  for (const HtaRow& r : rows.kept) {
    if (!r.device) continue;
    if (out.gpu_events == 0 || r.start < first) first = r.start;
    if (out.gpu_events == 0 || r.end > last_end) last_end = r.end;
    ++out.gpu_events;
    all.push_back({r.start, r.end});
    const StringId name = s.name[r.row.value];
    auto [it, inserted] = by_name.try_emplace(name);
    KernelStat& k = it->second;
    const double dur = r.end - r.start;
    if (inserted) {
      k.name = std::string(store.strings.view(name));
      k.type = ClassifyKernel(k.name);
      k.min_us = dur;
      k.max_us = dur;
    }
    ++k.count;
    k.time_us += dur;
    k.min_us = std::min(k.min_us, dur);
    k.max_us = std::max(k.max_us, dur);
    if (k.type == KernelType::kComputation) comp.push_back({r.start, r.end});
    if (k.type == KernelType::kCommunication) comm.push_back({r.start, r.end});
  }
  if (out.gpu_events == 0) return out;
  FillTemporal(std::move(all), std::move(comp), std::move(comm), first, last_end, &out);
  FillKernels(std::move(by_name), options.top_kernels, &out);
  return out;
}

}  // namespace strata
