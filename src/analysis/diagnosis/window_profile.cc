// WindowProfile (see window_profile.h).
#include "analysis/diagnosis/window_profile.h"

#include <algorithm>
#include <tuple>

#include "analysis/intervals.h"
#include "model/kernel_type.h"
#include "store/slice_names.h"

namespace strata::diagnosis {

namespace {

enum class OpClass { kCompute, kData, kComm, kWait, kAnnotation };

bool Contains(std::string_view s, std::string_view p) { return s.find(p) != std::string_view::npos; }

OpClass Classify(std::string_view name, std::string_view cat) {
  if (Contains(name, "DataLoader") || Contains(name, "dataloader") || Contains(name, "_next_data") ||
      Contains(name, "__getitem__") || Contains(name, "fetch")) {
    return OpClass::kData;
  }
  const CollectiveKind collective = CollectiveKindOf(name);
  if (collective == CollectiveKind::kBackendOp || collective == CollectiveKind::kC10dMethod ||
      Contains(name, "ProcessGroup") || name == "record_param_comms" || Contains(name, "all_reduce") ||
      Contains(name, "allreduce")) {
    return OpClass::kComm;
  }
  if (cat == "cuda_sync" || (name.substr(0, 4) == "cuda" && Contains(name, "Synchronize"))) return OpClass::kWait;
  if (name.substr(0, 13) == "ProfilerStep#" || cat == "user_annotation" || cat == "python_function") {
    return OpClass::kAnnotation;
  }
  if (cat.empty()) {
    // PyTorch 1.x traces have no categories: framework ops have qualified names, user ranges do not.
    const bool op = Contains(name, "::") || Contains(name, "Backward") || Contains(name, "Optimizer.") ||
                    Contains(name, "DistributedDataParallel");
    return op ? OpClass::kCompute : OpClass::kAnnotation;
  }
  return OpClass::kCompute;
}

}  // namespace

bool IsHostComputeOp(std::string_view name, std::string_view category) {
  return Classify(name, category) == OpClass::kCompute;
}

std::optional<StringId> CulpritOp(const StringPool& strings, const std::vector<std::pair<StringId, double>>& op_excess,
                                  Cause cause) {
  if (cause == Cause::kHostStall) return std::nullopt;
  for (const auto& [name, ms] : op_excess) {
    const std::string_view n = strings.view(name);
    if (IsContainerSliceName(n)) continue;
    const OpClass cls = Classify(n, "");
    const bool wanted = cause == Cause::kDataloaderStall
                            ? cls == OpClass::kData
                            : cls != OpClass::kData && cls != OpClass::kComm && cls != OpClass::kWait;
    if (wanted) return name;
  }
  return std::nullopt;
}

TrackIndex::TrackIndex(const TraceStore& store, const std::vector<SliceRows>& rows_by_rank)
    : rows_(store.tracks.size()), device_tracks_(rows_by_rank.size()) {
  const SliceTable& s = store.slices;
  for (const auto& rows : rows_by_rank)
    for (const SliceId row : rows)
      if (s.flags[row.value] & (kSliceComplete | kSliceBeginEnd)) rows_[s.track[row.value].value].push_back(row);
  // By start, the longer first, then in reading order: a total order, so that slices of equal start and length
  // (a parent and its only child) nest the same way on every run (std::sort left their order to chance).
  // Tracks come nearly in that order (Kineto writers sort by start; some write a parent after its children):
  // the rows in order are kept as they come, the few out of order are sorted apart and merged back, in
  // O(n + m log m) for m rows out of order (at 5,000 ranks a full sort of every track was a third of Diagnose).
  struct Key {
    int64_t ts, neg_dur;
    uint32_t row;
    bool operator<(const Key& o) const { return std::tie(ts, neg_dur, row) < std::tie(o.ts, o.neg_dur, o.row); }
  };
  std::vector<Key> in_order, out_of_order, merged;
  for (auto& v : rows_) {
    in_order.clear();
    out_of_order.clear();
    for (const SliceId row : v) {
      const Key k{s.ts_ns[row.value], -s.dur_ns[row.value], row.value};
      (in_order.empty() || !(k < in_order.back()) ? in_order : out_of_order).push_back(k);
    }
    if (out_of_order.empty()) continue;
    std::sort(out_of_order.begin(), out_of_order.end());
    merged.resize(v.size());
    std::merge(in_order.begin(), in_order.end(), out_of_order.begin(), out_of_order.end(), merged.begin());
    for (size_t i = 0; i < v.size(); ++i) v[i] = SliceId(merged[i].row);
  }
  for (uint32_t t = 0; t < store.tracks.size(); ++t)
    if (store.tracks[t].stream >= 0 && store.tracks[t].rank < device_tracks_.size())
      device_tracks_[store.tracks[t].rank].push_back(TrackId(t));
}

const SliceRows& TrackIndex::Rows(TrackId track) const {
  static const SliceRows kNone;
  return track.value < rows_.size() ? rows_[track.value] : kNone;
}

WindowProfile ProfileWindow(const TraceStore& store, const TrackIndex& index, size_t rank, TrackId main_track,
                            int64_t start, int64_t end) {
  WindowProfile out;
  if (end <= start) return out;
  const SliceTable& s = store.slices;
  auto clip = [&](uint32_t row) {
    return std::max<int64_t>(0, std::min(end, s.ts_ns[row] + s.dur_ns[row]) - std::max(start, s.ts_ns[row]));
  };
  // Main thread: walk slices in start order with a stack of open ancestors.
  struct Open {
    uint32_t row;
    int64_t end;
    OpClass cls;
    int64_t child_ns;  // clipped duration of direct children
    bool whole;        // counted whole (data / comm): children are not looked at
  };
  std::vector<Open> stack;
  int64_t covered = 0;
  auto close_until = [&](int64_t t) {
    while (!stack.empty() && stack.back().end <= t) {
      const Open o = stack.back();
      stack.pop_back();
      const double self = static_cast<double>(clip(o.row) - o.child_ns);
      switch (o.cls) {
        case OpClass::kCompute:
          out.compute_ns += self;
          break;
        case OpClass::kAnnotation:
          out.host_gap_ns += self;
          break;
        case OpClass::kData:
        case OpClass::kComm:
        case OpClass::kWait:
          break;  // counted whole when opened
      }
    }
  };
  if (main_track != kNoTrack) {
    for (const SliceId row : index.Rows(main_track)) {
      const int64_t ts = s.ts_ns[row.value], te = ts + s.dur_ns[row.value];
      if (te <= start) continue;
      if (ts >= end) break;
      close_until(ts);
      const int64_t len = clip(row.value);
      const bool inside_whole = !stack.empty() && stack.back().whole;
      const OpClass cls = Classify(store.strings.view(s.name[row.value]), store.strings.view(s.category[row.value]));
      if (cls != OpClass::kWait) out.op_ns[s.name[row.value]] += static_cast<double>(len);
      if (inside_whole) continue;  // part of a data/comm/wait op already counted
      if (stack.empty()) {
        covered += len;
      } else {
        stack.back().child_ns += len;
      }
      if (cls == OpClass::kData) out.data_ns += static_cast<double>(len);
      if (cls == OpClass::kComm) out.comm_ns += static_cast<double>(len);
      if (cls == OpClass::kWait) out.wait_ns += static_cast<double>(len);
      stack.push_back(
          Open{row.value, te, cls, 0, cls == OpClass::kData || cls == OpClass::kComm || cls == OpClass::kWait});
    }
    close_until(INT64_MAX);
    out.host_gap_ns += static_cast<double>((end - start) - covered);
  }
  // Device streams.
  std::vector<Interval> busy;
  for (TrackId track : index.DeviceTracks(rank)) {
    for (const SliceId row : index.Rows(track)) {
      const int64_t ts = s.ts_ns[row.value], te = ts + s.dur_ns[row.value];
      if (te <= start || ts >= end) continue;
      if (IsCommunicationKernel(store.strings.view(s.name[row.value]))) continue;
      busy.push_back({std::max(ts, start), std::min(te, end)});
      out.op_ns[s.name[row.value]] += static_cast<double>(std::min(te, end) - std::max(ts, start));
    }
  }
  if (!index.DeviceTracks(rank).empty()) {
    out.device_busy_ns = static_cast<double>(TotalLength(UnionOf(std::move(busy))));
    out.device_idle_ns = static_cast<double>(end - start) - out.device_busy_ns;
  }
  return out;
}

}  // namespace strata::diagnosis
