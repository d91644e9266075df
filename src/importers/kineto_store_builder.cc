// Validating Kineto events and appending them to the store (see kineto_store_builder.h).
#include "importers/kineto_store_builder.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <unordered_map>
#include <vector>

#include "core/decimal.h"
#include "importers/span_checks.h"

namespace strata::kineto {
namespace {

struct PairHash {
  size_t operator()(const std::pair<int64_t, int64_t>& p) const {
    return std::hash<int64_t>()(p.first * 0x9E3779B97F4A7C15ULL ^ static_cast<uint64_t>(p.second));
  }
};

/// A track is one (pid, tid, stream) lane: events of one thread that name different GPU streams (or none)
/// go to different tracks, so a slice's stream is always its track's stream.
struct LaneKey {
  int64_t pid, tid, stream;
  bool operator==(const LaneKey&) const = default;
};
struct LaneHash {
  size_t operator()(const LaneKey& k) const {
    uint64_t h = static_cast<uint64_t>(k.pid) * 0x9E3779B97F4A7C15ULL;
    h ^= static_cast<uint64_t>(k.tid) + 0x632BE59BD9B4E019ULL + (h << 6) + (h >> 2);
    h ^= static_cast<uint64_t>(k.stream) + 0x9E3779B97F4A7C15ULL + (h << 6) + (h >> 2);
    return h;
  }
};

}  // namespace

class KinetoStoreBuilder::Impl {
 public:
  Impl(const std::string& path, RowTables&& rows) {
    store_.inputs.emplace_back();
    store_.inputs[0].path = path;
    store_.ranks.emplace_back();
    store_.adopt_rows(std::move(rows));
  }

  RankInfo& rank() { return store_.ranks[0]; }
  InputInfo& input() { return store_.inputs[0]; }
  void Skip(SkipId reason, std::string_view detail = {}) { input().skipped.Add(reason, 1, detail); }
  TraceStore Take() { return std::move(store_); }

  int64_t IdFromText(bool is_string, std::string_view text, bool* ok) {
    *ok = true;
    if (!is_string) {
      int64_t v;
      if (ParseInt64(text, &v) == NumberParse::kOk) return v;
      if (text.empty()) return 0;  // absent
      *ok = false;
      return 0;
    }
    auto it = string_ids_.find(std::string(text));
    if (it != string_ids_.end()) return it->second;
    const int64_t id = -(int64_t{1} << 40) - static_cast<int64_t>(string_ids_.size());
    string_ids_.emplace(std::string(text), id);
    return id;
  }

  TrackId TrackFor(int64_t pid, int64_t tid, int64_t stream) {
    const LaneKey key{pid, tid, stream};
    // A trace's events alternate between a few lanes (a CPU thread, its GPU stream, their flows): the last
    // few lanes are looked at before the hash map (perf: its lookups were ~1.4 % of the load).
    for (const RecentLane& r : recent_lanes_)
      if (r.track != kNoTrack && r.key == key) return r.track;
    auto [it, inserted] = track_ids_.try_emplace(key, store_.next_track());
    if (inserted) {
      Track t;
      t.rank = 0;
      t.kind = stream >= 0 ? TrackKind::kGpuStream : TrackKind::kCpuThread;
      t.pid = pid;
      t.tid = tid;
      t.stream = stream;
      store_.tracks.push_back(t);
    }
    recent_lanes_[next_recent_lane_++ % recent_lanes_.size()] = RecentLane{key, it->second};
    return it->second;
  }

  /// Kineto's span rule (importers/span_checks.h): times are µs with up to three decimals; the start is
  /// checked whole before the duration; an end beyond int64 ns is a timestamp out of range.
  static constexpr SpanRules kSpanRules{
      {SkipId::kMissingTimestamp, SkipId::kInvalidTimestamp, SkipId::kTimestampOutOfRange},
      {SkipId::kMissingDuration, SkipId::kInvalidDuration, SkipId::kDurationOutOfRange},
      SkipId::kTimestampOutOfRange,
      /*range_first=*/false};

  /// The event's timestamp in ns, or false after counting why it is unusable.
  bool ParseTimestamp(std::string_view tok, int64_t* out) {
    const TimeField f = ReadTimeField(tok, 3);
    if (auto why = CheckTimeField(f, kSpanRules.start)) {
      Skip(*why);
      return false;
    }
    *out = f.ns;
    return true;
  }

  void CountCategory(const RawEvent& ev) {
    ++rank().events;
    CountCategoryId(ev.has_cat ? store_.strings.intern(ev.cat) : kNoCat);
  }

  // Accepted events by category id (kNoCat: none). A vector by id, not a hash map: one per event
  // (perf: the map's lookups were ~0.7 % of the load).
  void CountCategoryId(StringId cat) {
    if (cat == kNoCat) {
      ++no_category_count_;
      return;
    }
    if (cat.value >= category_counts_.size()) category_counts_.resize(cat.value + 1, 0);
    ++category_counts_[cat.value];
  }

  void Commit(RawEvent& ev) {
    if (ev.ph.empty()) {
      Skip(SkipId::kMissingPhase);
      return;
    }
    // HTA rounds all times inward to whole µs when its ts column is floating point: some event (metadata
    // included) has a JSON float ts, or none at all.
    if (!input().float_timestamps && (ev.ts.empty() || ev.ts.find_first_of(".eE") != std::string_view::npos)) {
      input().float_timestamps = true;
    }
    const char ph = ev.ph.size() == 1 ? ev.ph[0] : '?';
    if (ph == 'M') {
      HandleMetadata(ev);
      return;
    }
    bool ok_pid, ok_tid;
    const int64_t pid = IdFromText(ev.pid_is_string, ev.pid_text, &ok_pid);
    const int64_t tid = IdFromText(ev.tid_is_string, ev.tid_text, &ok_tid);
    if (!ok_pid || !ok_tid) {
      Skip(SkipId::kInvalidPidOrTid);
      return;
    }
    int64_t ts = 0;
    switch (ph) {
      case 'X': {
        const TimeField start = ReadTimeField(ev.ts, 3), dur = ReadTimeField(ev.dur, 3);
        if (auto why = CheckSpan(start, dur, kSpanRules)) {
          Skip(*why);
          return;
        }
        AddSlice(ev, pid, tid, start.ns, dur.ns, kSliceComplete);
        return;
      }
      case 'B': {
        if (!ParseTimestamp(ev.ts, &ts)) return;
        begin_end_[TrackFor(pid, tid, -1)].push_back(BeginOrEnd{
            ts, false, Pending{ts, std::string(ev.name), std::string(ev.cat), ev.has_cat, ev.correlation, ev.stream}});
        return;
      }
      case 'E': {
        if (!ParseTimestamp(ev.ts, &ts)) return;
        begin_end_[TrackFor(pid, tid, -1)].push_back(BeginOrEnd{ts, true, {}});
        return;
      }
      case 'i':
      case 'I':
      case 'n':
        if (!ParseTimestamp(ev.ts, &ts)) return;
        AddSlice(ev, pid, tid, ts, 0, kSliceInstant);
        return;
      case 'C': {
        if (!ParseTimestamp(ev.ts, &ts)) return;
        for (const auto& [key, value] : ev.counter_values) {
          const std::string series = ev.counter_values.size() == 1 && !ev.name.empty()
                                         ? std::string(ev.name)
                                         : fmt::format("{}.{}", ev.name, key);
          const StringId name = store_.strings.intern(series);
          auto [it, inserted] =
              counter_tracks_.try_emplace(std::make_pair(pid, static_cast<int64_t>(name.value)), store_.next_track());
          if (inserted) {
            Track t;
            t.kind = TrackKind::kCounter;
            t.pid = pid;
            t.tid = tid;
            t.name = name;
            store_.tracks.push_back(t);
          }
          store_.counters.track.push_back(it->second);
          store_.counters.ts_ns.push_back(ts);
          store_.counters.value.push_back(value);
        }
        CountCategory(ev);
        return;
      }
      case 's':
      case 't':
      case 'f': {
        if (!ParseTimestamp(ev.ts, &ts)) return;
        bool ok_id;
        const int64_t id = IdFromText(ev.id_is_string, ev.id, &ok_id);
        if (ev.id.empty() || !ok_id) {
          Skip(SkipId::kFlowWithoutId);
          return;
        }
        store_.flows.id.push_back(id);
        store_.flows.ts_ns.push_back(ts);
        store_.flows.track.push_back(TrackFor(pid, tid, -1));
        const StringId cat =
            ev.has_cat ? store_.strings.intern(ev.cat) : StringPool::kEmpty;  // interned once for both uses
        store_.flows.category.push_back(cat);
        store_.flows.phase.push_back(ph);
        ++rank().events;
        CountCategoryId(ev.has_cat ? cat : kNoCat);
        return;
      }
      default:
        Skip(SkipId::kUnsupportedPhase, ph == '?' ? std::string_view("other") : std::string_view(&ph, 1));
        return;
    }
  }

  void AddSlice(const RawEvent& ev, int64_t pid, int64_t tid, int64_t ts, int64_t dur, uint8_t flags) {
    const bool gpu = ev.stream >= 0 && ev.correlation >= 0;
    const TrackId track = TrackFor(pid, tid, ev.stream);
    if (gpu) flags |= kSliceGpu;
    if (ev.has_cat) flags |= kSliceHasCategory;
    uint32_t args = kNoArgs;
    if (ev.has_coll) {
      CollectiveArgs a = ev.coll;
      a.collective = store_.strings.intern(ev.coll_name);
      a.group = store_.strings.intern(!ev.group.empty() ? ev.group : ev.group_desc);
      a.group_ranks = store_.strings.intern(ev.group_ranks);
      a.dtype = store_.strings.intern(ev.dtype);
      args = static_cast<uint32_t>(store_.collective_args.size());
      store_.collective_args.push_back(a);
      flags |= kSliceCollectiveArgs;
    } else if (gpu && ev.memory_bandwidth_gbps >= 0) {
      args = static_cast<uint32_t>(store_.memory_bandwidth_gbps.size());
      store_.memory_bandwidth_gbps.push_back(ev.memory_bandwidth_gbps);
      flags |= kSliceMemoryBandwidth;
    }
    const StringId name = store_.strings.intern(ev.name);
    const StringId cat = ev.has_cat ? store_.strings.intern(ev.cat) : StringPool::kEmpty;
    store_.slices.append(ts, dur, name, cat, track, ev.correlation, flags, args);
    ++rank().events;
    CountCategoryId(ev.has_cat ? cat : kNoCat);
  }

  void HandleMetadata(const RawEvent& ev) {
    if (ev.meta_name.empty()) return;
    bool ok_pid, ok_tid;
    const int64_t pid = IdFromText(ev.pid_is_string, ev.pid_text, &ok_pid);
    const int64_t tid = IdFromText(ev.tid_is_string, ev.tid_text, &ok_tid);
    if (!ok_pid || !ok_tid) return;
    if (ev.name == "thread_name") thread_names_[{pid, tid}] = std::string(ev.meta_name);
    if (ev.name == "process_name") process_names_[pid] = std::string(ev.meta_name);
  }

  struct Pending {
    int64_t ts = 0;
    std::string name, cat;
    bool has_cat = false;
    int64_t correlation = -1, stream = -1;
  };
  // A B or E event of one lane, kept until the lane is read whole (PairBeginEnd).
  struct BeginOrEnd {
    int64_t ts;
    bool end;
    Pending begin;  // a B event's fields
  };

  // Pairs each lane's B and E events in timestamp order (file order among equal timestamps), as Perfetto's
  // sorter does before its parser: a trace written out of order loses no slice. Lanes in track order, so
  // the slices are appended the same way on every run.
  void PairBeginEnd() {
    std::vector<TrackId> tracks;
    for (const auto& [track, events] : begin_end_) tracks.push_back(track);
    std::sort(tracks.begin(), tracks.end());
    for (TrackId track : tracks) {
      auto& events = begin_end_[track];
      std::stable_sort(events.begin(), events.end(),
                       [](const BeginOrEnd& a, const BeginOrEnd& b) { return a.ts < b.ts; });
      std::vector<Pending> stack;
      for (BeginOrEnd& e : events) {
        if (!e.end) {
          stack.push_back(std::move(e.begin));
          continue;
        }
        if (stack.empty()) {
          Skip(SkipId::kEndWithoutBegin);
          continue;
        }
        Pending p = std::move(stack.back());
        stack.pop_back();
        CloseSlice(track, p, e.ts);
      }
      if (!stack.empty()) input().skipped.Add(SkipId::kBeginWithoutEnd, stack.size());
    }
    begin_end_.clear();
  }

  void CloseSlice(TrackId track, const Pending& p, int64_t end_ts) {
    int64_t dur = 0;
    if (auto why = CheckPairDuration(p.ts, end_ts, &dur)) {
      Skip(*why);
      return;
    }
    RawEvent merged;
    merged.name = p.name;
    merged.has_name = true;
    merged.cat = p.cat;
    merged.has_cat = p.has_cat;
    merged.correlation = p.correlation;
    merged.stream = p.stream;
    const Track& t = store_.track(track);
    AddSlice(merged, t.pid, t.tid, p.ts, dur, kSliceBeginEnd);
  }

  void Finish(bool top_level_object, RowTables* spare) {
    PairBeginEnd();
    for (auto& t : store_.tracks) {
      if (t.kind == TrackKind::kCounter) continue;
      auto it = thread_names_.find({t.pid, t.tid});
      if (it != thread_names_.end()) {
        t.name = store_.strings.intern(it->second);
      } else if (auto p = process_names_.find(t.pid); p != process_names_.end()) {
        t.name = store_.strings.intern(p->second);
      }
    }
    bool any_cat = false;
    for (uint32_t cat = 0; cat < category_counts_.size(); ++cat) {
      if (category_counts_[cat] == 0) continue;
      any_cat = true;
      rank().categories[std::string(store_.strings.view(StringId(cat)))] += category_counts_[cat];
    }
    if (no_category_count_ > 0) rank().categories["(none)"] += no_category_count_;
    input().events = rank().events;
    input().format = top_level_object ? InputFormat::kKineto
                     : any_cat        ? InputFormat::kChromeJson
                                      : InputFormat::kPytorchLegacy;
    store_.release_rows(spare);
    store_.shrink_to_fit();
  }

 private:
  static constexpr StringId kNoCat{UINT32_MAX};

  TraceStore store_;
  std::unordered_map<LaneKey, TrackId, LaneHash> track_ids_;
  std::unordered_map<std::pair<int64_t, int64_t>, TrackId, PairHash> counter_tracks_;
  struct RecentLane {
    LaneKey key{0, 0, 0};
    TrackId track = kNoTrack;  // none yet
  };
  std::array<RecentLane, 4> recent_lanes_{};
  size_t next_recent_lane_ = 0;
  std::unordered_map<std::string, int64_t> string_ids_;
  std::unordered_map<TrackId, std::vector<BeginOrEnd>> begin_end_;
  std::unordered_map<std::pair<int64_t, int64_t>, std::string, PairHash> thread_names_;
  std::unordered_map<int64_t, std::string> process_names_;
  std::vector<uint64_t> category_counts_;  // by category id
  uint64_t no_category_count_ = 0;
};

KinetoStoreBuilder::KinetoStoreBuilder(const std::string& path, RowTables&& rows)
    : impl_(std::make_unique<Impl>(path, std::move(rows))) {}
KinetoStoreBuilder::~KinetoStoreBuilder() = default;
void KinetoStoreBuilder::Add(RawEvent& event) { impl_->Commit(event); }
void KinetoStoreBuilder::Skip(SkipId reason, std::string_view detail) { impl_->Skip(reason, detail); }
void KinetoStoreBuilder::Repaired(SkipId reason, std::string_view detail) {
  impl_->input().repaired.Add(reason, 1, detail);
}
RankInfo& KinetoStoreBuilder::rank() { return impl_->rank(); }
TraceStore KinetoStoreBuilder::Finish(bool top_level_object, RowTables* spare) {
  impl_->Finish(top_level_object, spare);
  return impl_->Take();
}

}  // namespace strata::kineto
