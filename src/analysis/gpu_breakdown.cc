// HTA-compatible GPU metrics (see gpu_breakdown.h).
#include "analysis/gpu_breakdown.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "analysis/hta_time.h"
#include "analysis/intervals.h"

namespace strata {

namespace {

struct Row {
  uint32_t row;
  double start;
  double end;
};

bool IsStepName(std::string_view name) {
  if (name.substr(0, 13) != "ProfilerStep#" || name.size() == 13) return false;
  for (char c : name.substr(13))
    if (c < '0' || c > '9') return false;
  return true;
}

/// HTA's infer_gpu_type (trace_parser.py) says "MTIA": the backend names mtia:hccl, or the trace has no
/// CUDA/HIP kernel launch but MTIA's job submission. Only then does HTA fix memory rows without a stream.
bool IsMtiaTrace(const TraceStore& store, const SliceRows& slice_rows) {
  if (slice_rows.empty()) return false;
  const RankInfo& rank = store.ranks[store.track(store.slices.track[slice_rows.front().value]).rank];
  if (rank.backend.find("mtia:hccl") != std::string::npos) return true;
  const StringId cuda = store.strings.find("cudaLaunchKernel"), hip = store.strings.find("hipLaunchKernel");
  const StringId mtia = store.strings.find("runFunction - job_prep_and_submit_for_execution");
  bool launches = false, submits = false;
  for (const SliceId row : slice_rows) {
    const StringId name = store.slices.name[row.value];
    launches |= (cuda != StringPool::kNotFound && name == cuda) || (hip != StringPool::kNotFound && name == hip);
    submits |= mtia != StringPool::kNotFound && name == mtia;
  }
  return !launches && submits;
}

// The complete, categorized slices other than "Trace" rows, with HTA's timestamps (microsecond doubles,
// rounded inward when the input's timestamps were floats); nullopt when none is on a device stream.
std::optional<std::vector<Row>> BreakdownRows(const TraceStore& store, const SliceRows& slice_rows, bool round) {
  const SliceTable& s = store.slices;
  const StringId trace_cat = store.strings.find("Trace");
  std::vector<Row> rows;
  rows.reserve(slice_rows.size());
  bool any_device = false;
  for (const SliceId row : slice_rows) {
    const uint8_t flags = s.flags[row.value];
    if (!(flags & kSliceComplete) || !(flags & kSliceHasCategory) || s.category[row.value] == trace_cat) continue;
    // Doubles as HTA's JSON parser makes them, then HTA's double arithmetic.
    const HtaSpan span = HtaSpanOf(s.ts_ns[row.value], s.dur_ns[row.value], round);
    rows.push_back(Row{row.value, span.start, span.end});
    any_device |= store.track(s.track[row.value]).stream != -1;
  }
  if (!any_device) return std::nullopt;
  return rows;
}

// HTA's step rule: with two or more ProfilerSteps, the CPU rows before the last step starts (or up to its
// end with include_last_step) and the GPU rows their correlations launched. Sets out->last_step_dropped.
std::vector<const Row*> KeptRows(const TraceStore& store, const std::vector<Row>& rows, const BreakdownOptions& options,
                                 GpuBreakdown* out) {
  const SliceTable& s = store.slices;
  std::set<StringId> step_names;
  const Row* last_step = nullptr;
  for (const Row& r : rows) {
    if (!IsStepName(store.strings.view(s.name[r.row]))) continue;
    step_names.insert(s.name[r.row]);
    if (!(s.flags[r.row] & kSliceGpu) && (!last_step || r.start > last_step->start)) last_step = &r;
  }
  std::vector<const Row*> kept;
  kept.reserve(rows.size());
  if (step_names.size() < 2 || !last_step) {
    for (const Row& r : rows) kept.push_back(&r);
    return kept;
  }
  double last_end = last_step->end;
  for (const Row& r : rows)
    if (!(s.flags[r.row] & kSliceGpu) && IsStepName(store.strings.view(s.name[r.row])))
      last_end = std::max(last_end, r.end);
  std::unordered_set<int64_t> kept_corr;
  size_t gpu_rows = 0;
  for (const Row& r : rows) {
    if (s.flags[r.row] & kSliceGpu) {
      ++gpu_rows;
      continue;
    }
    const bool keep = options.include_last_step ? r.start <= last_end : r.start < last_step->start;
    if (keep) {
      kept.push_back(&r);
      kept_corr.insert(s.correlation[r.row]);
    }
  }
  size_t gpu_kept = 0;
  for (const Row& r : rows) {
    if ((s.flags[r.row] & kSliceGpu) && kept_corr.count(s.correlation[r.row])) {
      kept.push_back(&r);
      ++gpu_kept;
    }
  }
  out->last_step_dropped = !options.include_last_step && gpu_kept < gpu_rows;
  return kept;
}

// Device rows: on a stream, not a GPU user annotation; on MTIA traces also a memory kernel recorded without
// a stream that starts inside a ProfilerStep (HTA's fix-up gives it stream = tid). On other traces CPU-side
// runtime calls such as hipMemcpyWithStream would match the memory pattern: HTA does not apply it there.
class DeviceRowRule {
 public:
  DeviceRowRule(const TraceStore& store, const SliceRows& slice_rows, const std::vector<Row>& rows)
      : store_(store), gpu_annotation_(store.strings.find("gpu_user_annotation")) {
    if (!IsMtiaTrace(store, slice_rows)) return;
    for (const Row& r : rows)
      if (!(store.slices.flags[r.row] & kSliceGpu) && IsStepName(store.strings.view(store.slices.name[r.row])))
        step_spans_.emplace_back(r.start, r.end);
  }
  bool operator()(const Row& r) const {
    const SliceTable& s = store_.slices;
    if (s.category[r.row] == gpu_annotation_) return false;
    if (store_.track(s.track[r.row]).stream != -1) return true;
    if (step_spans_.empty() || !IsMemoryKernel(store_.strings.view(s.name[r.row]))) return false;
    for (const auto& [a, b] : step_spans_)
      if (a <= r.start && r.start <= b) return true;
    return false;
  }

 private:
  const TraceStore& store_;
  StringId gpu_annotation_;
  std::vector<std::pair<double, double>> step_spans_;
};

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
  const SliceTable& s = store.slices;
  GpuBreakdown out;
  out.rounded_to_us = input.float_timestamps;
  const std::optional<std::vector<Row>> rows = BreakdownRows(store, slice_rows, input.float_timestamps);
  if (!rows) return std::nullopt;
  const std::vector<const Row*> kept = KeptRows(store, *rows, options, &out);
  const DeviceRowRule is_device_row(store, slice_rows, *rows);

  std::vector<IntervalUs> all, comp, comm;
  double first = 0, last_end = 0;
  std::unordered_map<StringId, KernelStat> by_name;
  for (const Row* r : kept) {
    if (!is_device_row(*r)) continue;
    if (out.gpu_events == 0 || r->start < first) first = r->start;
    if (out.gpu_events == 0 || r->end > last_end) last_end = r->end;
    ++out.gpu_events;
    all.push_back({r->start, r->end});
    const StringId name = s.name[r->row];
    auto [it, inserted] = by_name.try_emplace(name);
    KernelStat& k = it->second;
    const double dur = r->end - r->start;
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
    if (k.type == KernelType::kComputation) comp.push_back({r->start, r->end});
    if (k.type == KernelType::kCommunication) comm.push_back({r->start, r->end});
  }
  if (out.gpu_events == 0) return out;
  FillTemporal(std::move(all), std::move(comp), std::move(comm), first, last_end, &out);
  FillKernels(std::move(by_name), options.top_kernels, &out);
  return out;
}

}  // namespace strata
