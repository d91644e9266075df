// Step windows (see step_windows.h).
#include "model/step_windows.h"

#include <algorithm>
#include <map>
#include <set>

#include "core/decimal.h"

namespace strata::model {

std::string_view StepSourceName(StepSource source) {
  switch (source) {
    case StepSource::kProfilerStep:
      return "profiler-step";
    case StepSource::kOpTable:
      return "op-table";
    case StepSource::kDetectedPeriod:
      return "detected-period";
    case StepSource::kDetectedRhythm:
      return "detected-rhythm";
    case StepSource::kNone:
      break;
  }
  return "none";
}

namespace {

bool StepNumber(std::string_view name, int64_t* n) {
  return name.substr(0, 13) == "ProfilerStep#" && ParseInt64(name.substr(13), n) == NumberParse::kOk;
}

}  // namespace

TrackId StepModel::MainTrack(size_t rank, int64_t step) const {
  if (rank >= by_rank.size()) return kNoTrack;
  for (const StepWindow& w : by_rank[rank])
    if (w.step == step) return w.main_track;
  return kNoTrack;
}

StepModel FindSteps(const TraceStore& store, const std::vector<SliceRows>& rows_by_rank) {
  StepModel model;
  model.by_rank.resize(rows_by_rank.size());
  const SliceTable& s = store.slices;
  // Which interned names are ProfilerStep#N, decided once per name.
  std::vector<int64_t> step_of(store.strings.size(), INT64_MIN);
  for (uint32_t id = 0; id < store.strings.size(); ++id) {
    int64_t n;
    if (StepNumber(store.strings.view(StringId(id)), &n)) step_of[id] = n;
  }
  // Kineto's device-side copies of ProfilerStep#N (category gpu_user_annotation) carry no args.stream, so
  // they sit on a stream-less track of the device's pid/tid: recognise them by category.
  const StringId gpu_annotation = store.strings.find("gpu_user_annotation");
  bool any_profiler = false, any_table = false;
  model.duplicate_markers.assign(rows_by_rank.size(), 0);
  model.out_of_order_markers.assign(rows_by_rank.size(), 0);
  for (size_t r = 0; r < rows_by_rank.size(); ++r) {
    std::map<int64_t, StepWindow> windows;
    for (const SliceId row : rows_by_rank[r]) {
      if ((s.flags[row.value] & kSliceGpu) || step_of[s.name[row.value].value] == INT64_MIN) continue;
      if (store.track(s.track[row.value]).stream >= 0) continue;  // gpu_user_annotation copies with a stream
      if ((s.flags[row.value] & kSliceHasCategory) && s.category[row.value] == gpu_annotation) continue;
      const int64_t n = step_of[s.name[row.value].value];
      auto [it, inserted] = windows.try_emplace(
          n, StepWindow{n, s.ts_ns[row.value], s.ts_ns[row.value] + s.dur_ns[row.value], s.track[row.value]});
      if (!inserted) {
        const int64_t start = s.ts_ns[row.value], end = s.ts_ns[row.value] + s.dur_ns[row.value];
        if (start <= it->second.end_ns && end >= it->second.start_ns) {  // nested annotations: one step
          it->second.start_ns = std::min(it->second.start_ns, start);
          it->second.end_ns = std::max(it->second.end_ns, end);
        } else {  // the same number at another time: a second run's marker, not this step
          ++model.duplicate_markers[r];
        }
      }
    }
    if (!windows.empty()) {
      any_profiler = true;
    } else {
      for (const SliceId row : rows_by_rank[r]) {
        if (s.step[row.value] < 0) continue;
        const int64_t n = s.step[row.value];
        auto [it, inserted] = windows.try_emplace(
            n, StepWindow{n, s.ts_ns[row.value], s.ts_ns[row.value] + s.dur_ns[row.value], kNoTrack});
        if (!inserted) {
          it->second.start_ns = std::min(it->second.start_ns, s.ts_ns[row.value]);
          it->second.end_ns = std::max(it->second.end_ns, s.ts_ns[row.value] + s.dur_ns[row.value]);
        }
      }
      any_table |= !windows.empty();
    }
    for (auto& [n, w] : windows) model.by_rank[r].push_back(w);
    std::sort(model.by_rank[r].begin(), model.by_rank[r].end(),
              [](const StepWindow& a, const StepWindow& b) { return a.start_ns < b.start_ns; });
    for (size_t i = 1; i < model.by_rank[r].size(); ++i)
      model.out_of_order_markers[r] += model.by_rank[r][i].step < model.by_rank[r][i - 1].step;
  }
  model.source = any_profiler ? StepSource::kProfilerStep : any_table ? StepSource::kOpTable : StepSource::kNone;
  // Steps present on every rank.
  std::map<int64_t, size_t> count;
  for (const auto& windows : model.by_rank)
    for (const StepWindow& w : windows) ++count[w.step];
  for (const auto& [n, c] : count)
    if (c == model.by_rank.size()) model.steps.push_back(n);
  return model;
}

TrackId MainThreadTrack(const TraceStore& store, const SliceRows& rows) {
  std::map<TrackId, int64_t> busy;
  for (const SliceId row : rows) {
    const TrackId t = store.slices.track[row.value];
    const Track& track = store.track(t);
    if (track.kind != TrackKind::kCpuThread || track.stream >= 0 || (store.slices.flags[row.value] & kSliceGpu))
      continue;
    busy[t] += std::max<int64_t>(0, store.slices.dur_ns[row.value]);
  }
  TrackId best = kNoTrack;
  int64_t most = -1;
  for (const auto& [t, ns] : busy)
    if (ns > most) most = ns, best = t;
  return best;
}

int FindWindow(const std::vector<StepWindow>& windows, int64_t t) {
  auto it = std::upper_bound(windows.begin(), windows.end(), t,
                             [](int64_t v, const StepWindow& w) { return v < w.start_ns; });
  if (it == windows.begin()) return -1;
  --it;
  return t <= it->end_ns ? static_cast<int>(it - windows.begin()) : -1;
}

}  // namespace strata::model
