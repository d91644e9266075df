// TraceStore implementation: appending rows, merging per-file stores, memory accounting.
#include "store/trace_store.h"

#include <algorithm>
#include <atomic>
#include <functional>
#include <system_error>
#include <thread>
#include <type_traits>
#include <utility>

namespace strata {

std::string_view InputFormatName(InputFormat f) {
  switch (f) {
    case InputFormat::kKineto:
      return "kineto";
    case InputFormat::kChromeJson:
      return "chrome-json";
    case InputFormat::kPytorchLegacy:
      return "pytorch-legacy";
    case InputFormat::kOpTable:
      return "op-table-csv";
    case InputFormat::kRecording:
      return "strata-recording";
    case InputFormat::kNsysSqlite:
      return "nsys-sqlite";
    case InputFormat::kFlightRecorder:
      return "flight-recorder";
    case InputFormat::kUnknown:
      break;
  }
  return "";
}

namespace {
template <typename T>
void shrink(std::vector<T>& v) {
  v.shrink_to_fit();
}
template <typename T>
size_t bytes(const std::vector<T>& v) {
  return v.capacity() * sizeof(T);
}
// A spare row table larger than this is freed, not kept: reuse is for the many-small-files case, and a thread
// must not hold a large file's capacity for the rest of the run.
constexpr size_t kMaxSpareRows = 1 << 16;

// Calls fn(column of `a`, the same column of `b`) for every column of the three row tables.
template <typename Fn>
void ForEachColumnPair(SliceTable& s, FlowTable& f, CounterTable& c, RowTables& b, Fn fn) {
  fn(s.ts_ns, b.slices.ts_ns);
  fn(s.dur_ns, b.slices.dur_ns);
  fn(s.correlation, b.slices.correlation);
  fn(s.name, b.slices.name);
  fn(s.category, b.slices.category);
  fn(s.track, b.slices.track);
  fn(s.args, b.slices.args);
  fn(s.step, b.slices.step);
  fn(s.flags, b.slices.flags);
  fn(f.id, b.flows.id);
  fn(f.ts_ns, b.flows.ts_ns);
  fn(f.track, b.flows.track);
  fn(f.category, b.flows.category);
  fn(f.phase, b.flows.phase);
  fn(c.track, b.counters.track);
  fn(c.ts_ns, b.counters.ts_ns);
  fn(c.value, b.counters.value);
}

// Where one part's ids and rows go in a merged store.
struct PartPlacement {
  std::vector<StringId> remap;  // the part's string id -> the merged pool's
  uint32_t track_base = 0, coll_base = 0, layout_base = 0, bandwidth_base = 0;
  size_t slice_base = 0, flow_base = 0, counter_base = 0;
};

// Runs fn(i) for every i in [0, n) on up to `threads` threads (this one included), each taking the next index.
void ParallelFor(size_t n, unsigned threads, const std::function<void(size_t)>& fn) {
  std::atomic<size_t> next{0};
  auto worker = [&] {
    for (size_t i = next++; i < n; i = next++) fn(i);
  };
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < std::min<size_t>(threads, n); ++t) {
    try {
      pool.emplace_back(worker);
    } catch (const std::system_error&) {
      break;  // no memory for another thread's stack: fewer threads do the same work
    }
  }
  worker();
  for (auto& t : pool) t.join();
}

template <typename T>
void CopyAt(const std::vector<T>& from, std::vector<T>& to, size_t base) {
  std::copy(from.begin(), from.end(), to.begin() + static_cast<std::ptrdiff_t>(base));
}
template <typename T, typename Fn>
void MapAt(const std::vector<T>& from, std::vector<T>& to, size_t base, Fn fn) {
  std::transform(from.begin(), from.end(), to.begin() + static_cast<std::ptrdiff_t>(base), fn);
}

template <typename T>
void extend(std::vector<T>& dst, const std::vector<T>& src) {
  dst.insert(dst.end(), src.begin(), src.end());
}
}  // namespace

void SliceTable::reserve(size_t n) {
  ts_ns.reserve(n);
  dur_ns.reserve(n);
  correlation.reserve(n);
  name.reserve(n);
  category.reserve(n);
  track.reserve(n);
  args.reserve(n);
  step.reserve(n);
  flags.reserve(n);
}

void SliceTable::shrink_to_fit() {
  shrink(ts_ns);
  shrink(dur_ns);
  shrink(correlation);
  shrink(name);
  shrink(category);
  shrink(track);
  shrink(args);
  shrink(step);
  shrink(flags);
}

size_t SliceTable::memory_bytes() const {
  return bytes(ts_ns) + bytes(dur_ns) + bytes(correlation) + bytes(name) + bytes(category) + bytes(track) +
         bytes(args) + bytes(step) + bytes(flags);
}

SliceId SliceTable::append(int64_t ts, int64_t dur, StringId name_id, StringId cat, TrackId track_id, int64_t corr,
                           uint8_t slice_flags, uint32_t args_index) {
  const auto row = static_cast<uint32_t>(ts_ns.size());
  ts_ns.push_back(ts);
  dur_ns.push_back(dur);
  correlation.push_back(corr);
  name.push_back(name_id);
  category.push_back(cat);
  track.push_back(track_id);
  args.push_back(args_index);
  step.push_back(-1);
  flags.push_back(slice_flags);
  return SliceId(row);
}

namespace {
// Appends `part`'s strings, inputs, ranks, tracks and args to `out` as append() does, and says where its rows go.
PartPlacement PlacePart(TraceStore& out, TraceStore& part, size_t slices, size_t flows, size_t counters) {
  PartPlacement at;
  at.remap.resize(part.strings.size());
  for (uint32_t id = 0; id < part.strings.size(); ++id)
    at.remap[id] = out.strings.intern(part.strings.view(StringId(id)));
  const auto input_base = static_cast<uint32_t>(out.inputs.size());
  for (auto& in : part.inputs) out.inputs.push_back(std::move(in));
  for (auto& dump : part.flight_recorder.dumps) out.flight_recorder.dumps.push_back(std::move(dump));
  const auto rank_base = static_cast<uint32_t>(out.ranks.size());
  for (auto& r : part.ranks) {
    r.input += input_base;
    out.ranks.push_back(std::move(r));
  }
  at.track_base = static_cast<uint32_t>(out.tracks.size());
  for (Track t : part.tracks) {
    t.rank += rank_base;
    t.name = at.remap[t.name.value];
    out.tracks.push_back(t);
  }
  at.coll_base = static_cast<uint32_t>(out.collective_args.size());
  for (CollectiveArgs a : part.collective_args) {
    a.collective = at.remap[a.collective.value];
    a.group = at.remap[a.group.value];
    a.group_ranks = at.remap[a.group_ranks.value];
    a.dtype = at.remap[a.dtype.value];
    out.collective_args.push_back(a);
  }
  at.layout_base = static_cast<uint32_t>(out.op_layout.size());
  extend(out.op_layout, part.op_layout);
  at.bandwidth_base = static_cast<uint32_t>(out.memory_bandwidth_gbps.size());
  extend(out.memory_bandwidth_gbps, part.memory_bandwidth_gbps);
  at.slice_base = slices;
  at.flow_base = flows;
  at.counter_base = counters;
  return at;
}

// One task per row column of `out`: resize it to the given row count (a column per task, so that threads that
// run them fault in their own columns' pages).
std::vector<std::function<void()>> RowResizers(TraceStore& out, size_t slices, size_t flows, size_t counters) {
  SliceTable& sl = out.slices;
  FlowTable& fl = out.flows;
  CounterTable& co = out.counters;
  return {[&sl, slices] { sl.ts_ns.resize(slices); },       [&sl, slices] { sl.dur_ns.resize(slices); },
          [&sl, slices] { sl.correlation.resize(slices); }, [&sl, slices] { sl.name.resize(slices); },
          [&sl, slices] { sl.category.resize(slices); },    [&sl, slices] { sl.track.resize(slices); },
          [&sl, slices] { sl.args.resize(slices); },        [&sl, slices] { sl.step.resize(slices); },
          [&sl, slices] { sl.flags.resize(slices); },       [&fl, flows] { fl.id.resize(flows); },
          [&fl, flows] { fl.ts_ns.resize(flows); },         [&fl, flows] { fl.track.resize(flows); },
          [&fl, flows] { fl.category.resize(flows); },      [&fl, flows] { fl.phase.resize(flows); },
          [&co, counters] { co.track.resize(counters); },   [&co, counters] { co.ts_ns.resize(counters); },
          [&co, counters] { co.value.resize(counters); }};
}

// Copies `part`'s rows into `out`'s tables (already sized) where `at` says, then frees the part.
void CopyPartRows(TraceStore& out, TraceStore&& part, const PartPlacement& at) {
  const SliceTable& s = part.slices;
  SliceTable& d = out.slices;
  const auto remap = [&at](StringId id) { return at.remap[id.value]; };
  const auto track = [&at](TrackId t) { return TrackId(t.value + at.track_base); };
  CopyAt(s.ts_ns, d.ts_ns, at.slice_base);
  CopyAt(s.dur_ns, d.dur_ns, at.slice_base);
  CopyAt(s.correlation, d.correlation, at.slice_base);
  MapAt(s.name, d.name, at.slice_base, remap);
  MapAt(s.category, d.category, at.slice_base, remap);
  MapAt(s.track, d.track, at.slice_base, track);
  for (size_t i = 0; i < s.size(); ++i) {
    uint32_t args_index = s.args[i];
    if (args_index != kNoArgs)
      args_index += (s.flags[i] & kSliceCollectiveArgs)    ? at.coll_base
                    : (s.flags[i] & kSliceMemoryBandwidth) ? at.bandwidth_base
                                                           : at.layout_base;
    d.args[at.slice_base + i] = args_index;
  }
  CopyAt(s.step, d.step, at.slice_base);
  CopyAt(s.flags, d.flags, at.slice_base);
  const FlowTable& f = part.flows;
  CopyAt(f.id, out.flows.id, at.flow_base);
  CopyAt(f.ts_ns, out.flows.ts_ns, at.flow_base);
  MapAt(f.track, out.flows.track, at.flow_base, track);
  MapAt(f.category, out.flows.category, at.flow_base, remap);
  CopyAt(f.phase, out.flows.phase, at.flow_base);
  const CounterTable& c = part.counters;
  MapAt(c.track, out.counters.track, at.counter_base, track);
  CopyAt(c.ts_ns, out.counters.ts_ns, at.counter_base);
  CopyAt(c.value, out.counters.value, at.counter_base);
  TraceStore consumed(std::move(part));  // freed here, on this thread (see append)
}
}  // namespace

std::vector<int32_t> TraceStore::RankNumbers() const {
  std::vector<int32_t> out;
  out.reserve(ranks.size());
  for (const RankInfo& r : ranks) out.push_back(r.rank);
  return out;
}

void TraceStore::append(TraceStore&& other) {
  if (inputs.empty() && ranks.empty() && tracks.empty() && slices.size() == 0 && strings.size() <= 1 &&
      slices.ts_ns.capacity() <= other.slices.size()) {
    *this = std::move(other);
    return;
  }
  const PartPlacement at = PlacePart(*this, other, slices.size(), flows.size(), counters.size());
  // Geometric growth (resize past the capacity doubles it): appending many small stores must not reallocate
  // the whole table each time.
  for (const auto& resize : RowResizers(*this, slices.size() + other.slices.size(), flows.size() + other.flows.size(),
                                        counters.size() + other.counters.size()))
    resize();
  // Released by destroying it, not by assigning a fresh store: a new string pool per merged file costs an
  // allocation the allocator searches its bins for (seconds over 100,000 files).
  CopyPartRows(*this, std::move(other), at);
}

void TraceStore::adopt_rows(RowTables&& spare) {
  // Column by column: a moved vector keeps its capacity; cleared in case the spare was not.
  ForEachColumnPair(slices, flows, counters, spare, [](auto& column, auto& from) {
    column = std::move(from);
    column.clear();
  });
}

void TraceStore::release_rows(RowTables* spare) {
  RowTables kept;
  ForEachColumnPair(slices, flows, counters, kept, [](auto& column, auto& keep) {
    std::remove_reference_t<decltype(column)> exact(column.begin(), column.end());
    if (column.capacity() <= kMaxSpareRows) {
      column.clear();
      keep = std::move(column);
    }
    column = std::move(exact);
  });
  *spare = std::move(kept);
}

TraceStore TraceStore::Merge(std::vector<TraceStore>&& parts, unsigned threads) {
  TraceStore out;
  if (parts.size() == 1) out.append(std::move(parts[0]));
  if (parts.size() <= 1) return out;
  // In order, on this thread: the string ids and the small tables, which later parts' ids depend on.
  std::vector<PartPlacement> at;
  at.reserve(parts.size());
  size_t slices = 0, flows = 0, counters = 0;
  for (TraceStore& part : parts) {
    at.push_back(PlacePart(out, part, slices, flows, counters));
    slices += part.slices.size();
    flows += part.flows.size();
    counters += part.counters.size();
  }
  // The row tables sized once (a column per task: each thread faults in its own columns' pages), then each
  // part's rows copied into place, parts spread over the threads.
  const std::vector<std::function<void()>> resize = RowResizers(out, slices, flows, counters);
  ParallelFor(resize.size(), threads, [&](size_t i) { resize[i](); });
  ParallelFor(parts.size(), threads, [&](size_t p) { CopyPartRows(out, std::move(parts[p]), at[p]); });
  return out;
}

void TraceStore::reserve_rows(size_t slices_total) {
  if (slices.ts_ns.capacity() < slices_total) slices.reserve(slices_total);
}

void TraceStore::shrink_to_fit() {
  slices.shrink_to_fit();
  shrink(tracks);
  shrink(collective_args);
  shrink(op_layout);
  shrink(memory_bandwidth_gbps);
  shrink(flows.id);
  shrink(flows.ts_ns);
  shrink(flows.track);
  shrink(flows.category);
  shrink(flows.phase);
  shrink(counters.track);
  shrink(counters.ts_ns);
  shrink(counters.value);
}

size_t TraceStore::memory_bytes() const {
  return strings.memory_bytes() + slices.memory_bytes() + bytes(tracks) + bytes(collective_args) + bytes(op_layout) +
         bytes(memory_bandwidth_gbps) + bytes(flows.id) + bytes(flows.ts_ns) + bytes(flows.track) +
         bytes(flows.category) + bytes(flows.phase) + bytes(counters.track) + bytes(counters.ts_ns) +
         bytes(counters.value);
}

}  // namespace strata
