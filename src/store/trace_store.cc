// TraceStore implementation: appending rows, merging per-file stores, memory accounting.
#include "store/trace_store.h"

#include <algorithm>
#include <utility>

namespace strata {

namespace {
template <typename T>
void shrink(std::vector<T>& v) {
  v.shrink_to_fit();
}
template <typename T>
size_t bytes(const std::vector<T>& v) {
  return v.capacity() * sizeof(T);
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

uint32_t SliceTable::append(int64_t ts, int64_t dur, StringId name_id, StringId cat, uint32_t track_id, int64_t corr,
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
  return row;
}

void TraceStore::append(TraceStore&& other) {
  if (inputs.empty() && ranks.empty() && tracks.empty() && slices.size() == 0 && strings.size() <= 1 &&
      slices.ts_ns.capacity() <= other.slices.size()) {
    *this = std::move(other);
    return;
  }
  std::vector<StringId> remap(other.strings.size());
  for (StringId id = 0; id < other.strings.size(); ++id) remap[id] = strings.intern(other.strings.view(id));

  const auto input_base = static_cast<uint32_t>(inputs.size());
  for (auto& in : other.inputs) inputs.push_back(std::move(in));
  const auto rank_base = static_cast<uint32_t>(ranks.size());
  for (auto& r : other.ranks) {
    r.input += input_base;
    ranks.push_back(std::move(r));
  }

  const auto track_base = static_cast<uint32_t>(tracks.size());
  for (Track t : other.tracks) {
    t.rank += rank_base;
    t.name = remap[t.name];
    tracks.push_back(t);
  }

  const auto coll_base = static_cast<uint32_t>(collective_args.size());
  for (CollectiveArgs a : other.collective_args) {
    a.collective = remap[a.collective];
    a.group = remap[a.group];
    a.group_ranks = remap[a.group_ranks];
    a.dtype = remap[a.dtype];
    collective_args.push_back(a);
  }
  const auto layout_base = static_cast<uint32_t>(op_layout.size());
  extend(op_layout, other.op_layout);

  SliceTable& s = other.slices;
  // Geometric growth: appending many small stores must not reallocate the whole table each time.
  if (slices.ts_ns.capacity() < slices.size() + s.size())
    slices.reserve(std::max(slices.size() + s.size(), slices.ts_ns.capacity() * 2));
  for (size_t i = 0; i < s.size(); ++i) {
    uint32_t args_index = s.args[i];
    if (args_index != kNoArgs) {
      args_index += (s.flags[i] & kSliceCollectiveArgs) ? coll_base : layout_base;
    }
    slices.append(s.ts_ns[i], s.dur_ns[i], remap[s.name[i]], remap[s.category[i]], s.track[i] + track_base,
                  s.correlation[i], s.flags[i], args_index);
    slices.step.back() = s.step[i];
  }

  for (size_t i = 0; i < other.flows.size(); ++i) {
    flows.id.push_back(other.flows.id[i]);
    flows.ts_ns.push_back(other.flows.ts_ns[i]);
    flows.track.push_back(other.flows.track[i] + track_base);
    flows.category.push_back(remap[other.flows.category[i]]);
    flows.phase.push_back(other.flows.phase[i]);
  }
  for (size_t i = 0; i < other.counters.size(); ++i) {
    counters.track.push_back(other.counters.track[i] + track_base);
    counters.ts_ns.push_back(other.counters.ts_ns[i]);
    counters.value.push_back(other.counters.value[i]);
  }
  // Released by destroying it, not by assigning a fresh store: a new string pool per merged file costs an
  // allocation the allocator searches its bins for (seconds over 100,000 files).
  TraceStore consumed(std::move(other));
}

void TraceStore::reserve_rows(size_t slices_total) {
  if (slices.ts_ns.capacity() < slices_total) slices.reserve(slices_total);
}

void TraceStore::shrink_to_fit() {
  slices.shrink_to_fit();
  shrink(tracks);
  shrink(collective_args);
  shrink(op_layout);
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
         bytes(flows.id) + bytes(flows.ts_ns) + bytes(flows.track) + bytes(flows.category) + bytes(flows.phase) +
         bytes(counters.track) + bytes(counters.ts_ns) + bytes(counters.value);
}

}  // namespace strata
