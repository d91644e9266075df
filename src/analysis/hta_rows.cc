// HTA's rows of one rank (see hta_rows.h).
#include "analysis/hta_rows.h"

#include <algorithm>
#include <set>
#include <string_view>
#include <unordered_set>
#include <utility>

#include "analysis/hta_time.h"
#include "model/kernel_type.h"

namespace strata {

namespace {

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

// Rules 1 and 2: the complete, categorized slices other than "Trace" rows, with HTA's timestamps; nullopt
// when none is on a device stream.
std::optional<std::vector<HtaRow>> CandidateRows(const TraceStore& store, const SliceRows& slice_rows, bool round) {
  const SliceTable& s = store.slices;
  const StringId trace_cat = store.strings.find("Trace");
  std::vector<HtaRow> rows;
  rows.reserve(slice_rows.size());
  bool any_device = false;
  for (const SliceId row : slice_rows) {
    const uint8_t flags = s.flags[row.value];
    if (!(flags & kSliceComplete) || !(flags & kSliceHasCategory) || s.category[row.value] == trace_cat) continue;
    const HtaSpan span = HtaSpanOf(s.ts_ns[row.value], s.dur_ns[row.value], round);
    rows.push_back(HtaRow{row, span.start, span.end, false});
    any_device |= store.track(s.track[row.value]).stream != -1;
  }
  if (!any_device) return std::nullopt;
  return rows;
}

// Rule 3, HTA's step rule. Sets out->last_step_dropped.
void KeepByStep(const TraceStore& store, std::vector<HtaRow> rows, bool include_last_step, HtaRows* out) {
  const SliceTable& s = store.slices;
  std::set<StringId> step_names;
  const HtaRow* last_step = nullptr;
  double last_end = 0;
  for (const HtaRow& r : rows) {
    if (!IsStepName(store.strings.view(s.name[r.row.value]))) continue;
    step_names.insert(s.name[r.row.value]);
    if (s.flags[r.row.value] & kSliceGpu) continue;
    if (!last_step || r.start > last_step->start) last_step = &r;
    last_end = std::max(last_end, r.end);
  }
  if (step_names.size() < 2 || !last_step) {
    out->kept = std::move(rows);
    return;
  }
  last_end = std::max(last_end, last_step->end);
  const double last_start = last_step->start;
  std::unordered_set<int64_t> kept_corr;
  std::vector<bool> keep(rows.size(), false);
  size_t gpu_rows = 0, gpu_kept = 0;
  for (size_t i = 0; i < rows.size(); ++i) {
    if (s.flags[rows[i].row.value] & kSliceGpu) continue;
    keep[i] = include_last_step ? rows[i].start <= last_end : rows[i].start < last_start;
    if (keep[i]) kept_corr.insert(s.correlation[rows[i].row.value]);
  }
  for (size_t i = 0; i < rows.size(); ++i) {
    if (!(s.flags[rows[i].row.value] & kSliceGpu)) continue;
    ++gpu_rows;
    keep[i] = kept_corr.count(s.correlation[rows[i].row.value]) > 0;
    gpu_kept += keep[i];
  }
  // CPU rows first, then GPU rows, each in store order (the order HTA's concatenation leaves them in).
  for (int gpu = 0; gpu < 2; ++gpu)
    for (size_t i = 0; i < rows.size(); ++i)
      if (keep[i] && (((s.flags[rows[i].row.value] & kSliceGpu) != 0) == (gpu == 1))) out->kept.push_back(rows[i]);
  out->last_step_dropped = !include_last_step && gpu_kept < gpu_rows;
}

// Rule 4. On other traces than MTIA, CPU-side runtime calls such as hipMemcpyWithStream would match the
// memory pattern: HTA does not apply the fix-up there.
class DeviceRowRule {
 public:
  DeviceRowRule(const TraceStore& store, const SliceRows& slice_rows, const std::vector<HtaRow>& rows)
      : store_(store), gpu_annotation_(store.strings.find("gpu_user_annotation")) {
    if (!IsMtiaTrace(store, slice_rows)) return;
    for (const HtaRow& r : rows)
      if (!(store.slices.flags[r.row.value] & kSliceGpu) &&
          IsStepName(store.strings.view(store.slices.name[r.row.value])))
        step_spans_.emplace_back(r.start, r.end);
  }
  bool operator()(const HtaRow& r) const {
    const SliceTable& s = store_.slices;
    if (s.category[r.row.value] == gpu_annotation_) return false;
    if (store_.track(s.track[r.row.value]).stream != -1) return true;
    if (step_spans_.empty() || !IsMemoryKernel(store_.strings.view(s.name[r.row.value]))) return false;
    for (const auto& [a, b] : step_spans_)
      if (a <= r.start && r.start <= b) return true;
    return false;
  }

 private:
  const TraceStore& store_;
  StringId gpu_annotation_;
  std::vector<std::pair<double, double>> step_spans_;
};

}  // namespace

std::optional<HtaRows> KeptHtaRows(const TraceStore& store, const SliceRows& slice_rows, const InputInfo& input,
                                   bool include_last_step) {
  std::optional<std::vector<HtaRow>> rows = CandidateRows(store, slice_rows, input.float_timestamps);
  if (!rows) return std::nullopt;
  const DeviceRowRule is_device_row(store, slice_rows, *rows);
  HtaRows out;
  out.rounded_to_us = input.float_timestamps;
  KeepByStep(store, std::move(*rows), include_last_step, &out);
  for (HtaRow& r : out.kept) r.device = is_device_row(r);
  return out;
}

int64_t DeviceStreamOf(const TraceStore& store, SliceId row) {
  const Track& track = store.track(store.slices.track[row.value]);
  return track.stream != -1 ? track.stream : track.tid;
}

}  // namespace strata
