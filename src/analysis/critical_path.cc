// Critical path of one step across ranks (see critical_path.h for the walk and its invariants).
#include "analysis/critical_path.h"

#include <algorithm>
#include <cstdlib>
#include <limits>
#include <map>
#include <memory>
#include <unordered_map>
#include <unordered_set>

#include "core/robust_stats.h"

namespace strata {

std::string_view PathKindName(PathKind kind) {
  switch (kind) {
    case PathKind::kCpu:
      return "cpu";
    case PathKind::kLaunch:
      return "launch";
    case PathKind::kKernel:
      return "kernel";
    case PathKind::kCollective:
      return "collective";
    case PathKind::kWait:
      return "wait";
    case PathKind::kIdle:
      return "idle";
  }
  return "idle";
}

namespace {

constexpr int64_t kNever = std::numeric_limits<int64_t>::min();

// A slice on the aligned clock.
struct Span {
  int64_t start = 0, end = 0;
  SliceId slice;
  bool gap = false;  // an interval of the loop's lane that is a parent op's time around its children
};

bool StartsBefore(const Span& a, const Span& b) { return a.start < b.start || (a.start == b.start && a.end > b.end); }

// On `v` sorted by start (as StartsBefore sorts): the index of the first span starting at or after `t`, i.e.
// the number of spans starting before t (v.size() when all do).
size_t FirstStartingAt(const std::vector<Span>& v, int64_t t) {
  return static_cast<size_t>(
      std::lower_bound(v.begin(), v.end(), t, [](const Span& s, int64_t x) { return s.start < x; }) - v.begin());
}

// The last span of `v` (sorted by start) that starts before `t`, or nullptr.
const Span* LastBefore(const std::vector<Span>& v, int64_t t) {
  const size_t i = FirstStartingAt(v, t);
  return i == 0 ? nullptr : &v[i - 1];
}

// Of the spans of `v` (sorted by start; `max_end` the running max of their ends) that start before `t`, the
// last-starting one that still runs at t (end >= t), or nullptr. Overlapping spans (calls on several threads)
// make the last span starting before t the wrong answer when it ended already while an earlier one runs on.
// O(number of spans skipped): the scan stops where no earlier span reaches t.
const Span* LatestCovering(const std::vector<Span>& v, const std::vector<int64_t>& max_end, int64_t t) {
  for (size_t i = FirstStartingAt(v, t); i-- > 0 && max_end[i] >= t;)
    if (v[i].end >= t) return &v[i];
  return nullptr;
}

int64_t OffsetOf(const model::JobModel& job, size_t r) {
  return r < job.clocks.offset_ns.size() ? job.clocks.offset_ns[r] : 0;
}

// The aligned window of `step` on rank index r, or nullopt.
std::optional<std::pair<int64_t, int64_t>> AlignedWindow(const model::JobModel& job, size_t r, int64_t step) {
  if (r >= job.steps.by_rank.size()) return std::nullopt;
  for (const model::StepWindow& w : job.steps.by_rank[r])
    if (w.step == step) return std::make_pair(w.start_ns - OffsetOf(job, r), w.end_ns - OffsetOf(job, r));
  return std::nullopt;
}

// Host calls that block until the device is done: the host's wait is the device's work.
bool IsSynchronize(std::string_view name) {
  return name.find("Synchronize") != std::string_view::npos || name == "cudaMemcpy" ||
         name.starts_with("aten::_local_scalar_dense");
}

// Wrappers that span other ops: not ops of the CPU lane (their children are).
bool IsWrapper(std::string_view name, std::string_view category) {
  return name.starts_with("ProfilerStep#") || category == "user_annotation" || category == "gpu_user_annotation" ||
         category == "python_function" || category == "Trace";
}

// One rank's slices of the step, on the aligned clock, by lane.
struct RankLanes {
  std::vector<Span> cpu;                            // the training loop's thread by innermost op, disjoint
  std::vector<Span> syncs;                          // its synchronize calls (any depth), by start
  std::vector<Span> cpu_collectives;                // CPU-side collective calls (cpu-ops source; any thread), by start
  std::vector<int64_t> cpu_collectives_max_end;     // running max of their ends (calls on several threads overlap)
  std::vector<std::vector<Span>> streams;           // kernels per GPU stream, by start
  std::unordered_set<SliceId> collective_kernels;   // its collective kernels (gpu-kernels source), matched or not
  std::unordered_map<SliceId, uint32_t> stream_of;  // kernel slice -> index into streams
  std::unordered_map<int64_t, int64_t> launch_end;  // correlation -> aligned end of the CPU launch
};

// The loop thread's time split by its innermost op: spans of `ops` (any nesting) become disjoint intervals, each
// labelled with the deepest op covering it (a parent's self time around its children is the parent's).
// A child reaching past its parent is cut at the parent's end.
std::vector<Span> InnermostIntervals(std::vector<Span> ops) {
  std::sort(ops.begin(), ops.end(), StartsBefore);
  std::vector<Span> out, open;  // open: the enclosing ops, innermost last
  int64_t cur = kNever;
  const auto until = [&](int64_t x) {
    if (!open.empty() && x > cur) {
      const Span& op = open.back();
      out.push_back({cur, x, op.slice, cur != op.start || x != op.end});
    }
    cur = std::max(cur, x);
  };
  for (Span op : ops) {
    while (!open.empty() && open.back().end <= op.start) {
      until(open.back().end);
      open.pop_back();
    }
    until(op.start);
    if (!open.empty()) op.end = std::min(op.end, open.back().end);
    if (op.end > op.start) open.push_back(op);
  }
  while (!open.empty()) {
    until(open.back().end);
    open.pop_back();
  }
  return out;
}

RankLanes BuildLanes(const TraceStore& store, const SliceRows& rows, const model::JobModel& job, size_t r, int64_t step,
                     int64_t from, int64_t to) {
  RankLanes lanes;
  const SliceTable& s = store.slices;
  const int64_t off = OffsetOf(job, r);
  TrackId main = job.steps.MainTrack(r, step);
  if (main == kNoTrack) main = model::MainThreadTrack(store, rows);
  std::unordered_map<TrackId, uint32_t> stream_index;  // track -> index into streams
  std::vector<Span> ops;
  for (const SliceId row : rows) {
    const int64_t a = s.ts_ns[row.value] - off, b = a + s.dur_ns[row.value];
    if (s.dur_ns[row.value] <= 0 || a >= to || b <= from) continue;
    const Track& track = store.track(s.track[row.value]);
    if (track.kind == TrackKind::kGpuStream && (s.flags[row.value] & kSliceGpu)) {
      auto [it, added] = stream_index.try_emplace(s.track[row.value], static_cast<uint32_t>(lanes.streams.size()));
      if (added) lanes.streams.emplace_back();
      lanes.streams[it->second].push_back({a, b, row});
      lanes.stream_of[row] = it->second;
    } else if (track.kind == TrackKind::kCpuThread) {
      if (s.correlation[row.value] != kNoCorrelation) lanes.launch_end[s.correlation[row.value]] = b;
      if (s.track[row.value] != main) continue;
      const std::string_view name = store.strings.view(s.name[row.value]);
      if (IsSynchronize(name)) lanes.syncs.push_back({a, b, row});
      if (!IsWrapper(name, store.strings.view(s.category[row.value]))) ops.push_back({a, b, row});
    }
  }
  lanes.cpu = InnermostIntervals(std::move(ops));
  std::sort(lanes.syncs.begin(), lanes.syncs.end(), StartsBefore);
  for (auto& v : lanes.streams) std::sort(v.begin(), v.end(), StartsBefore);
  if (job.collectives.source == model::CollectiveSource::kCpuOps && r < job.collectives.calls.size())
    for (const model::CollectiveCall& c : job.collectives.calls[r])
      if (c.end_ns - off > from && c.start_ns - off < to)
        lanes.cpu_collectives.push_back({c.start_ns - off, c.end_ns - off, c.slice});
  if (job.collectives.source == model::CollectiveSource::kGpuKernels && r < job.collectives.calls.size())
    for (const model::CollectiveCall& c : job.collectives.calls[r])
      if (c.end_ns - off > from && c.start_ns - off < to) lanes.collective_kernels.insert(c.slice);
  std::sort(lanes.cpu_collectives.begin(), lanes.cpu_collectives.end(), StartsBefore);
  int64_t max_end = kNever;
  for (const Span& c : lanes.cpu_collectives)
    lanes.cpu_collectives_max_end.push_back(max_end = std::max(max_end, c.end));
  return lanes;
}

// The slices of rank index r that BuildLanes reads in [from, to) (those of positive length), without building
// the lanes: their sum over the ranks bounds the walk's moves and is reported as slices_considered.
size_t SlicesInWindow(const TraceStore& store, const SliceRows& rows, int64_t off, int64_t from, int64_t to) {
  const SliceTable& s = store.slices;
  size_t n = 0;
  for (const SliceId row : rows) {
    const int64_t a = s.ts_ns[row.value] - off;
    n += s.dur_ns[row.value] > 0 && a < to && a + s.dur_ns[row.value] > from;
  }
  return n;
}

// Each rank's lanes, built when the walk first reaches the rank: a walk visits a few ranks of thousands, and
// building every rank's lanes (hash maps of its kernels and launches) was most of the diagnosis's time at
// 5,000 ranks. A rank's lanes do not depend on which ranks were built before it.
class LaneCache {
 public:
  LaneCache(const TraceStore& store, const std::vector<SliceRows>& rows_by_rank, const model::JobModel& job,
            int64_t step, int64_t from, int64_t to)
      : store_(store),
        rows_by_rank_(rows_by_rank),
        job_(job),
        step_(step),
        from_(from),
        to_(to),
        built_(rows_by_rank.size()) {}
  const RankLanes& operator[](size_t r) {
    if (!built_[r])
      built_[r] = std::make_unique<RankLanes>(BuildLanes(store_, rows_by_rank_[r], job_, r, step_, from_, to_));
    return *built_[r];
  }

 private:
  const TraceStore& store_;
  const std::vector<SliceRows>& rows_by_rank_;
  const model::JobModel& job_;
  const int64_t step_, from_, to_;
  std::vector<std::unique_ptr<RankLanes>> built_;
};

// A segment as the walk emits it (names as ids until the end).
struct RawSegment {
  size_t rank = 0;
  PathKind kind = PathKind::kIdle;
  StringId name = StringPool::kEmpty;
  int64_t start = 0, end = 0;
};

// The backward walk of one step (see the file comment of critical_path.h).
class PathWalker {
 public:
  PathWalker(const TraceStore& store, const model::JobModel& job, LaneCache& lanes, int64_t from, int64_t to,
             int64_t step);
  // Walks from `to` on rank index `last`; returns the segments in time order.
  std::vector<RawSegment> Run(size_t last, size_t max_moves);
  size_t rank_changes() const { return rank_changes_; }

 private:
  enum class Lane { kCpu, kGpu };
  void Emit(PathKind kind, StringId name, int64_t a);
  void CpuMove();
  void GpuMove();
  void AfterKernel(const Span& kernel, uint32_t stream);
  void CollectiveMove(uint32_t instance, const Span& own);
  void ContinueBefore(size_t rank, SliceId slice);
  int64_t LatestKernelEnd(const RankLanes& l, int64_t t, const Span** kernel, uint32_t* stream) const;
  int64_t Arrival(size_t rank, const model::MatchedCollective& m) const;
  int64_t LatestCallEnd(const RankLanes& l, int64_t not_before, int64_t after, int64_t before) const;

  const TraceStore& store_;
  const model::JobModel& job_;
  LaneCache& lanes_;
  const int64_t from_, to_;
  std::unordered_map<SliceId, uint32_t> instance_of_;  // collective call's slice -> index into matched
  std::vector<RawSegment> out_;                        // backwards
  size_t rank_ = 0;
  int64_t t_ = 0;
  Lane lane_ = Lane::kCpu;
  int64_t stream_ = -1;  // the stream followed in the GPU lane, -1 = any
  size_t rank_changes_ = 0;
};

PathWalker::PathWalker(const TraceStore& store, const model::JobModel& job, LaneCache& lanes, int64_t from, int64_t to,
                       int64_t step)
    : store_(store), job_(job), lanes_(lanes), from_(from), to_(to) {
  const auto& matched = job.collectives.matched;
  for (uint32_t i = 0; i < matched.size(); ++i) {
    const model::MatchedCollective& m = matched[i];
    if (m.present < 2 || m.step < step - 1 || m.step > step + 1) continue;
    for (size_t r = 0; r < m.call.size(); ++r)
      if (m.call[r] >= 0) instance_of_[job.collectives.calls[r][static_cast<size_t>(m.call[r])].slice] = i;
  }
}

std::vector<RawSegment> PathWalker::Run(size_t last, size_t max_moves) {
  rank_ = last;
  t_ = to_;
  lane_ = Lane::kCpu;
  for (size_t moves = 0; t_ > from_; ++moves) {
    if (moves >= max_moves) {
      Emit(PathKind::kIdle, StringPool::kEmpty, from_);
      break;
    }
    lane_ == Lane::kGpu ? GpuMove() : CpuMove();
  }
  std::reverse(out_.begin(), out_.end());
  return std::move(out_);
}

// [a, t) joins the path on the current rank; t moves back to a (never before the step's start). Segments merge
// afterwards (MergePathSegments).
void PathWalker::Emit(PathKind kind, StringId name, int64_t a) {
  a = std::clamp(a, from_, t_);
  if (a == t_) return;
  out_.push_back({rank_, kind, name, a, t_});
  t_ = a;
}

// Latest min(end, t) over the kernels of `l` starting before t (kNever when none), and that kernel.
int64_t PathWalker::LatestKernelEnd(const RankLanes& l, int64_t t, const Span** kernel, uint32_t* stream) const {
  int64_t best = kNever;
  for (uint32_t s = 0; s < l.streams.size(); ++s) {
    if (stream_ >= 0 && s != stream_) continue;
    const Span* k = LastBefore(l.streams[s], t);
    if (!k) continue;
    const int64_t e = std::min(k->end, t);
    if (e > best || (e == best && *kernel && k->start > (*kernel)->start)) {
      best = e;
      *kernel = k;
      *stream = s;
    }
  }
  return best;
}

// The latest end in (after, before) of a matched call in `l` that started at or after `not_before`; kNever when
// none. Scans back from the last call starting before `before` while an earlier call can still end after `after`.
int64_t PathWalker::LatestCallEnd(const RankLanes& l, int64_t not_before, int64_t after, int64_t before) const {
  const std::vector<Span>& v = l.cpu_collectives;
  int64_t best = kNever;
  for (size_t i = FirstStartingAt(v, before); i-- > 0 && l.cpu_collectives_max_end[i] > after;)
    if (v[i].end > after && v[i].end < before && v[i].start >= not_before && instance_of_.count(v[i].slice))
      best = std::max(best, v[i].end);
  return best;
}

void PathWalker::CpuMove() {
  const RankLanes& l = lanes_[rank_];
  const SliceTable& s = store_.slices;
  if (const Span* sync = LastBefore(l.syncs, t_); sync && sync->end >= t_) {  // the host waits for the device
    const Span* k = nullptr;
    uint32_t ks = 0;
    stream_ = -1;
    const int64_t g = LatestKernelEnd(l, t_, &k, &ks);
    if (g < t_) Emit(PathKind::kWait, s.name[sync->slice.value], std::max(sync->start, g));
    if (g != kNever && g >= t_) lane_ = Lane::kGpu;  // a kernel runs at t (or ended where the wait began)
    return;
  }
  const Span* op = LastBefore(l.cpu, t_);
  const Span* covering = LatestCovering(l.cpu_collectives, l.cpu_collectives_max_end, t_);
  const Span* call = covering ? covering : LastBefore(l.cpu_collectives, t_);
  const bool call_covers = covering && instance_of_.count(covering->slice);
  const int64_t op_start = op ? s.ts_ns[op->slice.value] - OffsetOf(job_, rank_) : kNever;
  // A call on another thread that started inside the loop's op, while the loop is in that op's time around its
  // children (DDP's wait for its buckets): the loop waits in that op for it.
  if (call_covers && op && op->end >= t_ && op->gap && op_start <= call->start)
    return CollectiveMove(instance_of_.at(call->slice), *call);
  if (op && op->end >= t_) {  // else the loop's own op: a call on another thread may overlap its work
    if (auto it = instance_of_.find(op->slice); it != instance_of_.end())
      return CollectiveMove(it->second, {op_start, op->end, op->slice});
    const bool launch = store_.strings.view(s.name[op->slice.value]).find("Launch") != std::string_view::npos;
    // In a parent's gap, the op's time reaches back only to where a call it waited for ended (the rule above
    // takes over there).
    const int64_t from = op->gap ? std::max(op->start, LatestCallEnd(l, op_start, op->start, t_)) : op->start;
    return Emit(launch ? PathKind::kLaunch : PathKind::kCpu, s.name[op->slice.value], from);
  }
  int64_t prev = op ? op->end : kNever;
  if (covering) {
    if (auto it = instance_of_.find(covering->slice); it != instance_of_.end())
      return CollectiveMove(it->second, *covering);
  } else if (call) {  // every call before t ended: the latest end is where the idle gap begins
    prev = std::max(prev, l.cpu_collectives_max_end[static_cast<size_t>(call - l.cpu_collectives.data())]);
  }
  Emit(PathKind::kIdle, StringPool::kEmpty, prev);
}

void PathWalker::GpuMove() {
  const RankLanes& l = lanes_[rank_];
  const Span* k = nullptr;
  uint32_t ks = 0;
  const int64_t e = LatestKernelEnd(l, t_, &k, &ks);
  if (e < t_) {  // the device is idle at t: what the path waits on is the host
    lane_ = Lane::kCpu;
    stream_ = -1;
    return;
  }
  if (auto it = instance_of_.find(k->slice); it != instance_of_.end()) return CollectiveMove(it->second, *k);
  Emit(PathKind::kKernel, store_.slices.name[k->slice.value], k->start);
  AfterKernel(*k, ks);
}

// What `kernel` may have waited for on another stream of `l`: the latest end at or before its start of the last
// kernel to end there on each other stream (kernels of a stream run one after another: the last one starting
// before `start`, or the one before it when that one still runs), when that kernel or `kernel` is a collective
// (a compute kernel after the collective whose result it uses, a collective after the compute it sends). kNever
// when none; else `*other` is its stream. Side streams' other kernels (copies, prefetches) run beside the
// compute, not before it, and are never taken.
int64_t CollectiveWaitEnd(const RankLanes& l, const Span& kernel, uint32_t stream, uint32_t* other) {
  int64_t best = kNever;
  if (l.collective_kernels.empty()) return best;
  const bool collective = l.collective_kernels.count(kernel.slice) > 0;
  for (uint32_t s = 0; s < l.streams.size(); ++s) {
    if (s == stream) continue;
    const std::vector<Span>& v = l.streams[s];
    for (size_t i = FirstStartingAt(v, kernel.start), seen = 0; i-- > 0 && seen < 2; ++seen)
      if (v[i].end <= kernel.start) {
        if (v[i].end > best && (collective || l.collective_kernels.count(v[i].slice))) best = v[i].end, *other = s;
        break;
      }
  }
  return best;
}

// The walk is at (or before) `kernel`'s start: continue into what let it start.
void PathWalker::AfterKernel(const Span& kernel, uint32_t stream) {
  const RankLanes& l = lanes_[rank_];
  const std::vector<Span>& on_stream = l.streams[stream];
  const Span* prev = LastBefore(on_stream, kernel.start);
  const int64_t prev_end = prev ? prev->end : kNever;
  const int64_t corr = store_.slices.correlation[kernel.slice.value];
  auto it = corr == kNoCorrelation ? l.launch_end.end() : l.launch_end.find(corr);
  const int64_t launch = it == l.launch_end.end() ? kNever : it->second;
  uint32_t other = 0;
  if (const int64_t dep = CollectiveWaitEnd(l, kernel, stream, &other); dep > std::max(launch, prev_end)) {
    // Launched and its stream free before that kernel of another stream ended: it waited for it (an event the
    // stream waits on).
    Emit(PathKind::kIdle, StringPool::kEmpty, dep);
    lane_ = Lane::kGpu;
    stream_ = other;
    return;
  }
  if (launch == kNever && prev_end == kNever) {
    lane_ = Lane::kCpu;
    stream_ = -1;
    return;
  }
  if (launch >= prev_end) {
    Emit(PathKind::kLaunch, store_.slices.name[kernel.slice.value], launch);
    lane_ = Lane::kCpu;
    stream_ = -1;
  } else {
    Emit(PathKind::kIdle, StringPool::kEmpty, prev_end);
    lane_ = Lane::kGpu;
    stream_ = stream;
  }
}

int64_t PathWalker::Arrival(size_t rank, const model::MatchedCollective& m) const {
  const auto& c = job_.collectives.calls[rank][static_cast<size_t>(m.call[rank])];
  return c.start_ns - OffsetOf(job_, rank);
}

// The walk is inside a collective call `own` of the current rank.
void PathWalker::CollectiveMove(uint32_t instance, const Span& own) {
  const model::MatchedCollective& m = job_.collectives.matched[instance];
  size_t last = rank_;
  int64_t latest = own.start;
  for (size_t r = 0; r < m.call.size(); ++r) {
    if (m.call[r] < 0) continue;
    const int64_t a = Arrival(r, m);
    if (a > latest) {
      latest = a;
      last = r;
    }
  }
  Emit(PathKind::kCollective, m.key, std::max(latest, own.start));
  if (last == rank_ || !m.complete()) {
    if (!m.complete()) Emit(PathKind::kWait, m.key, own.start);
    return ContinueBefore(rank_, own.slice);
  }
  ++rank_changes_;
  rank_ = last;
  ContinueBefore(last, job_.collectives.calls[last][static_cast<size_t>(m.call[last])].slice);
}

// The walk is at the start of `slice` (a collective call) on `rank`: continue into what let it start.
void PathWalker::ContinueBefore(size_t rank, SliceId slice) {
  const RankLanes& l = lanes_[rank];
  rank_ = rank;
  stream_ = -1;
  lane_ = Lane::kCpu;
  auto it = l.stream_of.find(slice);
  if (it == l.stream_of.end()) return;
  const std::vector<Span>& on_stream = l.streams[it->second];
  const int64_t start = store_.slices.ts_ns[slice.value] - OffsetOf(job_, rank);
  for (size_t k = FirstStartingAt(on_stream, start); k < on_stream.size() && on_stream[k].start == start; ++k)
    if (on_stream[k].slice == slice) return AfterKernel(on_stream[k], it->second);
}

int64_t EndOf(const PathSegment& s) { return s.start_ns + s.dur_ns; }

// `b` starts where `a` ends, within kPathTouchNs.
bool Touch(const PathSegment& a, const PathSegment& b) { return std::abs(b.start_ns - EndOf(a)) <= kPathTouchNs; }

bool SameRankAndKind(const PathSegment& a, const PathSegment& b) { return a.rank == b.rank && a.kind == b.kind; }

// Calls f(kind, name, dur_ns) for each kind's time in `s`: its parts when it has them, else itself.
template <class F>
void ForEachKindTime(const PathSegment& s, F f) {
  if (s.parts.empty()) f(s.kind, s.name, s.dur_ns);
  for (const PathPart& p : s.parts) f(p.kind, p.name, p.dur_ns);
}

// Time by kind and name of the segments [first, last) of `v`.
using KindNameTimes = std::map<PathKind, std::map<std::string, int64_t>>;
KindNameTimes TimesOf(const std::vector<PathSegment>& v, size_t first, size_t last) {
  KindNameTimes t;
  for (size_t i = first; i < last; ++i)
    ForEachKindTime(v[i], [&](PathKind k, const std::string& name, int64_t dur) { t[k][name] += dur; });
  return t;
}

// The name holding most of `names`' time (ties: the first in byte order) and that time's sum over all names.
std::pair<std::string, int64_t> TopName(const std::map<std::string, int64_t>& names) {
  auto top = names.begin();
  int64_t sum = 0;
  for (auto it = names.begin(); it != names.end(); ++it) {
    sum += it->second;
    if (it->second > top->second) top = it;
  }
  return {top->first, sum};
}

// The segments [first, last) of `v` (touching, one rank) as one: from the first's start to the latest end, of
// the kind holding most of their time (ties: the earlier in PathKind order), named by that kind's name holding
// most of it (ties: the first in byte order). Of several kinds, its parts say each kind's time and main name;
// the touching tolerance's slack (at most kPathTouchNs a join) goes to the main kind, so they sum to dur_ns.
PathSegment Combine(const std::vector<PathSegment>& v, size_t first, size_t last) {
  PathSegment out = v[first];
  if (last - first == 1) return out;
  int64_t end = EndOf(out);
  for (size_t i = first; i < last; ++i) end = std::max(end, EndOf(v[i]));
  out.dur_ns = end - out.start_ns;
  out.parts.clear();
  int64_t main_dur = -1, summed = 0;
  for (const auto& [kind, names] : TimesOf(v, first, last)) {
    auto [name, dur] = TopName(names);
    summed += dur;
    if (dur > main_dur) {
      main_dur = dur;
      out.kind = kind;
      out.name = name;
    }
    out.parts.push_back({kind, std::move(name), dur});
  }
  for (PathPart& p : out.parts)
    if (p.kind == out.kind) p.dur_ns += out.dur_ns - summed;
  if (out.parts.size() == 1) out.parts.clear();
  return out;
}

// Appends `s` to `out`, into its last segment when both have the same rank, kind and name and touch.
void AppendMerged(std::vector<PathSegment>& out, PathSegment s) {
  if (out.empty() || !SameRankAndKind(out.back(), s) || out.back().name != s.name || !Touch(out.back(), s))
    return out.push_back(std::move(s));
  if (out.back().parts.empty() && s.parts.empty()) {
    out.back().dur_ns = std::max(EndOf(out.back()), EndOf(s)) - out.back().start_ns;
    return;
  }
  const std::vector<PathSegment> pair = {std::move(out.back()), std::move(s)};
  out.back() = Combine(pair, 0, 2);
}

// The host's own kinds: the training loop's ops, its launch calls and the gaps between them.
bool HostKind(PathKind k) { return k == PathKind::kCpu || k == PathKind::kLaunch || k == PathKind::kIdle; }

// The end of the run that starts at segment i of `v`: i + 1, or, when segment i is tiny (shorter than
// `min_width`), past the tiny segments that follow it, each touching the previous one, of its rank and kind
// (`mixed` false) or of its rank and any host kind when it is one (`mixed`).
size_t RunEnd(const std::vector<PathSegment>& v, size_t i, double min_width, bool mixed) {
  const auto tiny = [&](size_t k) { return static_cast<double>(v[k].dur_ns) < min_width; };
  const auto joins = [&](size_t k) {
    return mixed ? v[k].rank == v[i].rank && HostKind(v[k].kind) && HostKind(v[i].kind) : SameRankAndKind(v[i], v[k]);
  };
  size_t j = i + 1;
  if (tiny(i))
    while (j < v.size() && tiny(j) && joins(j) && Touch(v[j - 1], v[j])) ++j;
  return j;
}

// One pass of the merge: each run (RunEnd) combined, and joined to a touching neighbour of its name.
std::vector<PathSegment> MergeRuns(const std::vector<PathSegment>& v, double min_width, bool mixed) {
  std::vector<PathSegment> out;
  for (size_t i = 0, j = 0; i < v.size(); i = j) {
    j = RunEnd(v, i, min_width, mixed);
    AppendMerged(out, Combine(v, i, j));
  }
  return out;
}

}  // namespace

std::vector<PathSegment> MergePathSegments(std::vector<PathSegment> segments, int64_t step_ns) {
  std::vector<PathSegment> touching;
  for (PathSegment& s : segments) AppendMerged(touching, std::move(s));
  const double min_width = kPathMinSegmentShare * static_cast<double>(step_ns);
  return MergeRuns(MergeRuns(touching, min_width, false), min_width, true);
}

std::optional<int64_t> MedianStep(const model::JobModel& job, size_t ranks) {
  // (−duration, −step): ordered longest first, later steps first, so that the upper middle of an even count is
  // the shorter of the two middle spans and equal spans go to the earlier step.
  std::vector<std::pair<int64_t, int64_t>> spans;
  std::vector<std::unordered_map<int64_t, size_t>> index(ranks);
  for (size_t r = 0; r < ranks && r < job.steps.by_rank.size(); ++r)
    for (size_t i = 0; i < job.steps.by_rank[r].size(); ++i) index[r][job.steps.by_rank[r][i].step] = i;
  for (int64_t step : job.steps.steps) {
    int64_t first = std::numeric_limits<int64_t>::max(), last = kNever;
    bool everywhere = ranks > 0;
    for (size_t r = 0; r < ranks && everywhere; ++r) {
      auto it = index[r].find(step);
      if (it == index[r].end()) {
        everywhere = false;
        break;
      }
      const model::StepWindow& w = job.steps.by_rank[r][it->second];
      first = std::min(first, w.start_ns - OffsetOf(job, r));
      last = std::max(last, w.end_ns - OffsetOf(job, r));
    }
    if (everywhere) spans.emplace_back(-(last - first), -step);
  }
  if (spans.empty()) return std::nullopt;
  return -Median<EvenCount::kUpperMiddle>(std::move(spans)).second;
}

namespace {

// Time by (rank, kind) of `segments` over a step of `step_ns`, largest first, each with its main name.
std::vector<PathContributor> ContributorsOf(const std::vector<PathSegment>& segments, int64_t step_ns) {
  std::map<std::pair<int32_t, PathKind>, std::map<std::string, int64_t>> by;
  for (const PathSegment& s : segments)
    ForEachKindTime(s, [&](PathKind k, const std::string& name, int64_t dur) { by[{s.rank, k}][name] += dur; });
  const double total = static_cast<double>(std::max<int64_t>(1, step_ns));
  std::vector<PathContributor> out;
  for (const auto& [key, names] : by) {
    auto [top_name, dur] = TopName(names);
    out.push_back({key.first, key.second, std::move(top_name), dur, static_cast<double>(dur) / total});
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const PathContributor& a, const PathContributor& b) { return a.dur_ns > b.dur_ns; });
  return out;
}

}  // namespace

std::optional<CriticalPath> ComputeCriticalPath(const TraceStore& store, const std::vector<SliceRows>& rows_by_rank,
                                                const model::JobModel& job, int64_t step) {
  const size_t ranks = std::min(store.ranks.size(), rows_by_rank.size());
  if (ranks == 0) return std::nullopt;
  CriticalPath path;
  path.step = step;
  path.start_ns = std::numeric_limits<int64_t>::max();
  path.end_ns = kNever;
  size_t last = 0;
  for (size_t r = 0; r < ranks; ++r) {
    auto w = AlignedWindow(job, r, step);
    if (!w) return std::nullopt;
    path.windows.push_back({store.ranks[r].rank, w->first, w->second});
    path.start_ns = std::min(path.start_ns, w->first);
    if (w->second > path.end_ns) {
      path.end_ns = w->second;
      last = r;
    }
  }
  if (path.end_ns <= path.start_ns) return std::nullopt;
  // Slices from one step length before the step (launches of its first kernels) to its end.
  const int64_t from = path.start_ns - (path.end_ns - path.start_ns);
  for (size_t r = 0; r < ranks; ++r)
    path.slices_considered += SlicesInWindow(store, rows_by_rank[r], OffsetOf(job, r), from, path.end_ns);
  LaneCache lanes(store, rows_by_rank, job, step, from, path.end_ns);
  PathWalker walker(store, job, lanes, path.start_ns, path.end_ns, step);
  const std::vector<RawSegment> raw = walker.Run(last, 4 * path.slices_considered + 64);
  path.rank_changes = walker.rank_changes();
  std::vector<PathSegment> segments;
  for (const RawSegment& r : raw)
    segments.push_back(
        {store.ranks[r.rank].rank, r.kind, std::string(store.strings.view(r.name)), r.start, r.end - r.start});
  path.contributors = ContributorsOf(segments, path.end_ns - path.start_ns);
  path.segments = MergePathSegments(std::move(segments), path.end_ns - path.start_ns);
  return path;
}

std::vector<PathContributor> PathContributors(const CriticalPath& path) {
  return path.contributors.empty() ? ContributorsOf(path.segments, path.end_ns - path.start_ns) : path.contributors;
}

}  // namespace strata
