// HTA-compatible GPU metrics (see gpu_breakdown.h).
#include "analysis/gpu_breakdown.h"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "analysis/intervals.h"

namespace strata {

namespace {

int64_t FloorDiv(int64_t a, int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0))); }
int64_t CeilDiv(int64_t a, int64_t b) { return -FloorDiv(-a, b); }

struct UsEvent {
  uint32_t row;
  int64_t start;
  int64_t end;
};

}  // namespace

std::optional<GpuBreakdown> ComputeGpuBreakdown(const TraceStore& store, const std::vector<uint32_t>& slice_rows,
                                                const BreakdownOptions& options) {
  const SliceTable& s = store.slices;
  const StringId trace_cat = store.strings.find("Trace");
  std::vector<UsEvent> cpu, gpu;
  for (uint32_t row : slice_rows) {
    const uint8_t flags = s.flags[row];
    if (!(flags & kSliceComplete) || !(flags & kSliceHasCategory) || s.category[row] == trace_cat) continue;
    const UsEvent e{row, CeilDiv(s.ts_ns[row], 1000), FloorDiv(s.ts_ns[row] + s.dur_ns[row], 1000)};
    (flags & kSliceGpu ? gpu : cpu).push_back(e);
  }
  if (gpu.empty()) return std::nullopt;

  GpuBreakdown out;
  // HTA's step rule: with >= 2 ProfilerSteps keep CPU events starting before the last step's start
  // (or up to its end when it is included) and the GPU events correlated with a kept CPU event.
  std::vector<const UsEvent*> steps;
  for (const UsEvent& e : cpu) {
    if (store.strings.view(s.name[e.row]).substr(0, 13) == "ProfilerStep#") steps.push_back(&e);
  }
  if (steps.size() >= 2) {
    const UsEvent* last = *std::max_element(steps.begin(), steps.end(), [](const UsEvent* a, const UsEvent* b) {
      return a->start < b->start;
    });
    std::unordered_set<int64_t> kept_corr;
    for (const UsEvent& e : cpu) {
      const bool kept = options.include_last_step ? e.start <= last->end : e.start < last->start;
      if (kept) kept_corr.insert(s.correlation[e.row]);
    }
    const size_t before = gpu.size();
    gpu.erase(std::remove_if(gpu.begin(), gpu.end(),
                             [&](const UsEvent& e) { return !kept_corr.count(s.correlation[e.row]); }),
              gpu.end());
    out.last_step_dropped = !options.include_last_step && gpu.size() < before;
  }
  out.gpu_events = gpu.size();
  if (gpu.empty()) return out;

  std::vector<Interval> all, comp, comm;
  int64_t first = INT64_MAX, last_end = INT64_MIN;
  std::unordered_map<StringId, KernelStat> by_name;
  for (const UsEvent& e : gpu) {
    first = std::min(first, e.start);
    last_end = std::max(last_end, e.end);
    all.push_back({e.start, e.end});
    const StringId name = s.name[e.row];
    auto [it, inserted] = by_name.try_emplace(name);
    KernelStat& k = it->second;
    if (inserted) {
      k.name = std::string(store.strings.view(name));
      k.type = ClassifyKernel(k.name);
      k.min_us = INT64_MAX;
      k.max_us = INT64_MIN;
    }
    const int64_t dur = e.end - e.start;
    ++k.count;
    k.time_us += dur;
    k.min_us = std::min(k.min_us, dur);
    k.max_us = std::max(k.max_us, dur);
    if (k.type == KernelType::kComputation) comp.push_back({e.start, e.end});
    if (k.type == KernelType::kCommunication) comm.push_back({e.start, e.end});
  }
  const auto all_u = UnionOf(std::move(all));
  const auto comp_u = UnionOf(std::move(comp));
  const auto comm_u = UnionOf(std::move(comm));
  out.kernel_time_us = last_end - first;
  out.idle_us = out.kernel_time_us - TotalLength(all_u);
  out.compute_us = TotalLength(comp_u);
  out.non_compute_us = out.kernel_time_us - out.compute_us - out.idle_us;
  if (out.kernel_time_us > 0) {
    out.idle_pct = 100.0 * static_cast<double>(out.idle_us) / static_cast<double>(out.kernel_time_us);
    out.compute_pct = 100.0 * static_cast<double>(out.compute_us) / static_cast<double>(out.kernel_time_us);
    out.non_compute_pct = 100.0 * static_cast<double>(out.non_compute_us) / static_cast<double>(out.kernel_time_us);
  }
  const int64_t comm_len = TotalLength(comm_u);
  if (comm_len > 0) {
    out.comm_comp_overlap_pct =
        100.0 * static_cast<double>(IntersectionLength(comp_u, comm_u)) / static_cast<double>(comm_len);
  }
  std::vector<KernelStat> kernels;
  for (auto& [id, k] : by_name) {
    const auto t = static_cast<size_t>(k.type);
    out.type_count[t] += k.count;
    out.type_time_us[t] += k.time_us;
    kernels.push_back(std::move(k));
  }
  std::sort(kernels.begin(), kernels.end(), [](const KernelStat& a, const KernelStat& b) {
    return a.time_us != b.time_us ? a.time_us > b.time_us : a.name < b.name;
  });
  if (kernels.size() > options.top_kernels) kernels.resize(options.top_kernels);
  out.top_kernels = std::move(kernels);
  return out;
}

}  // namespace strata
