// Recording as a trace source (see recording_trace.h).
#include "importers/recording_trace.h"
#include "store/slice_names.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <optional>
#include <set>

#include "core/skip_reasons.h"
#include "importers/gloo_buffer_bytes.h"
#include "importers/main_process.h"
#include "importers/recorded_gpu.h"
#include "importers/recording_tables.h"
#include "store/stack_frames.h"

namespace strata {
namespace {

// The collective family a probe's calls stand for, and whether the call blocks until the collective is
// done (gloo's algorithms) or only enqueues it (NCCL, c10d).
struct ProbeRole {
  std::string name;    // "gloo:all_reduce", ...; empty: not a collective
  int preference = 0;  // per rank, only the calls of the highest preference are kept
};

// NCCL's kernels measured on the device by the profiler plugin are preferred over everything: NCCL calls
// return on the CPU before the collective runs, so only the device says when a rank arrived.
constexpr int kC10dEnqueue = 1, kNcclEnqueue = 2, kGlooAlgorithm = 3, kNcclDevice = 4;

ProbeRole RoleOf(const RecordedProbe& p) {
  if (p.kind == ProbeKind::kCollectiveDevice) return {"nccl:" + p.op, kNcclDevice};
  if (p.kind == ProbeKind::kCollective) return {"gloo:" + p.op, kGlooAlgorithm};
  if (p.kind != ProbeKind::kCollectiveEnqueue) return {};
  const bool nccl = p.library.find("libnccl") != std::string::npos;
  if (nccl) return {"nccl:" + p.op, kNcclEnqueue};
  const bool cuda = p.library.find("torch_cuda") != std::string::npos;
  return {(cuda ? "nccl:" : "gloo:") + p.op, kC10dEnqueue};
}

std::string Backend(const std::vector<RecordedProbe>& probes) {
  for (const auto& p : probes)
    if (p.kind == ProbeKind::kCollectiveDevice || p.library.find("libnccl") != std::string::npos ||
        p.library.find("torch_cuda") != std::string::npos)
      return "nccl";
  return probes.empty() ? std::string() : std::string("gloo");
}

struct RankBuild {
  std::set<uint32_t> pids;
  uint32_t main_pid = 0;
  uint32_t input = 0;
};

class Builder {
 public:
  Builder(const RecordedSegment& seg, uint32_t input, TraceStore* store) : seg_(seg), input_(input), store_(*store) {
    py_of_sample_ = seg.PythonStackOfSamples();
    sample_hz_ = seg.sample_hz;
  }

  void Build() {
    ReadGlooBytes();
    CountUnknownSeries();
    std::map<int, RankBuild> ranks;
    const MainProcessRule main_process(seg_);
    for (const auto& [pid, p] : seg_.processes) {
      if (!p.rank) continue;
      RankBuild& r = ranks[*p.rank];
      r.pids.insert(static_cast<uint32_t>(pid));
      if (r.main_pid == 0 || main_process.Better(static_cast<uint32_t>(pid), r.main_pid))
        r.main_pid = static_cast<uint32_t>(pid);
    }
    for (const auto& [rank, r] : ranks) AddRank(rank, r);
  }

 private:
  TrackId TrackOf(uint32_t rank_index, uint32_t pid, uint32_t tid, const std::string& name) {
    auto [it, inserted] = tracks_.try_emplace({pid, tid}, store_.next_track());
    if (inserted) {
      Track t;
      t.rank = rank_index;
      t.kind = TrackKind::kCpuThread;
      t.pid = pid;
      t.tid = tid;
      t.name = store_.strings.intern(name);
      store_.tracks.push_back(t);
    }
    return it->second;
  }

  SliceId Add(TrackId track, int64_t start, int64_t end, std::string_view name, std::string_view category) {
    const SliceId slice =
        store_.slices.append(start, end - start, store_.strings.intern(name), store_.strings.intern(category), track,
                             kNoCorrelation, kSliceComplete | kSliceHasCategory);
    ++store_.ranks.back().events;
    ++store_.inputs[input_].events;
    return slice;
  }

  // Counter samples of a series the segment does not declare are read by nothing (importers/recorded_layers.h
  // leaves them out as well): counted here, once per segment, so every output says they were skipped.
  void CountUnknownSeries() {
    for (const CounterRow& c : seg_.data.counters)
      if (c.series >= seg_.series.size()) store_.inputs[input_].skipped.Add(SkipId::kCounterUnknownSeries);
  }

  // The bytes of every gloo algorithm of the segment (gloo_buffer_bytes.h); thread ids are the system's, so
  // one pass over all processes' rows keeps each thread's buffers apart.
  void ReadGlooBytes() {
    const bool buffers = std::any_of(seg_.probes.begin(), seg_.probes.end(),
                                     [](const RecordedProbe& p) { return p.kind == ProbeKind::kCollectiveBuffer; });
    if (!buffers) return;  // no createUnboundBuffer probe (NCCL, older recordings): no size to read
    std::vector<const CallEnterRow*> enters;
    for (const CallEnterRow& e : seg_.data.call_enters) enters.push_back(&e);
    std::stable_sort(enters.begin(), enters.end(), [](const auto* a, const auto* b) { return a->ts_ns < b->ts_ns; });
    std::map<CallEntryKey, uint64_t> returns;
    for (const CallRow& c : seg_.data.calls) returns[{c.tid, c.probe, c.start_ns}] = c.end_ns;
    gloo_bytes_ = GlooAlgorithmBytes(seg_, enters, returns);
  }

  // A gloo algorithm's bytes on its slice, as the collective arguments a trace would carry (one byte elements),
  // so that the communication table reads its size and bandwidth; unknown sizes (0) add nothing.
  void AddGlooBytes(SliceId slice, const CallRow& c) {
    const auto it = gloo_bytes_.find({c.tid, c.probe, c.start_ns});
    if (it == gloo_bytes_.end() || it->second == 0) return;
    CollectiveArgs a;
    a.collective = store_.strings.intern(seg_.probes[c.probe].op);
    a.dtype = store_.strings.intern("uint8");
    a.in_nelems = static_cast<int64_t>(it->second);
    store_.slices.args[slice.value] = static_cast<uint32_t>(store_.collective_args.size());
    store_.slices.flags[slice.value] |= kSliceCollectiveArgs;
    store_.collective_args.push_back(a);
  }

  void AddRank(int rank, const RankBuild& r) {
    RankInfo info;
    info.rank = rank;
    info.rank_source = "recording";
    info.backend = Backend(seg_.probes);
    info.input = input_;
    store_.ranks.push_back(info);
    const auto rank_index = static_cast<uint32_t>(store_.ranks.size() - 1);
    AddCollectives(rank_index, r);
    AddMainThread(rank_index, r.main_pid);
    AddWorkerWaits(rank_index, r);
    AddDataLoadingWaits(rank_index, r);
    AddGpuCounters(rank_index, r);
  }

  // The series of the rank's GPU (recorded_gpu.h: SM clock, throttle reasons, PCIe throughput, power,
  // utilization) as the rank's counter tracks, named as the recorder named them ("gpu.sm_clock_mhz", ...),
  // so that the counter evidence reads a recording's GPU as it reads a trace's counters.
  void AddGpuCounters(uint32_t rank_index, const RankBuild& r) {
    const auto proc = seg_.processes.find(static_cast<int>(r.main_pid));
    if (proc == seg_.processes.end()) return;
    const std::optional<int> gpu = NvmlIndexOfProcess(proc->second, seg_.series);
    if (!gpu) return;
    std::map<uint32_t, TrackId> track_of_series;
    for (size_t id = 0; id < seg_.series.size(); ++id) {
      const RecordedSeries& s = seg_.series[id];
      if (s.index != *gpu || s.cumulative || s.name.rfind("gpu.", 0) != 0) continue;
      Track t;
      t.rank = rank_index;
      t.kind = TrackKind::kCounter;
      t.pid = r.main_pid;
      t.name = store_.strings.intern(s.name);
      track_of_series[static_cast<uint32_t>(id)] = store_.next_track();
      store_.tracks.push_back(t);
    }
    if (track_of_series.empty()) return;
    for (const CounterRow& c : seg_.data.counters) {
      const auto it = track_of_series.find(c.series);
      if (it == track_of_series.end()) continue;
      store_.counters.track.push_back(it->second);
      store_.counters.ts_ns.push_back(static_cast<int64_t>(c.ts_ns));
      store_.counters.value.push_back(c.value);
    }
  }

  // The rank's collectives: the calls of its most telling probe kind. Gloo's algorithms run on a worker
  // thread that picks the work up after c10d's enqueue on the calling thread; when both were recorded in
  // equal numbers per op, a collective spans from the enqueue (the rank asked for it: its arrival) to the
  // algorithm's return (its completion), so that a worker woken late does not count as the rank arriving late.
  void AddCollectives(uint32_t rank_index, const RankBuild& r) {
    int best = 0;
    for (const auto& c : seg_.data.calls)
      if (r.pids.count(c.tgid) && c.probe < seg_.probes.size())
        best = std::max(best, RoleOf(seg_.probes[c.probe]).preference);
    if (best == 0) return;
    std::map<std::string, std::vector<const CallRow*>> kept, asked;
    for (const auto& c : seg_.data.calls) {
      if (!r.pids.count(c.tgid)) continue;
      if (c.probe >= seg_.probes.size()) {
        store_.inputs[input_].skipped.Add(SkipId::kCallUnknownProbe);
        continue;
      }
      const ProbeRole role = RoleOf(seg_.probes[c.probe]);
      if (role.preference == 0) continue;
      if (c.end_ns < c.start_ns) {
        store_.inputs[input_].skipped.Add(SkipId::kCallEndBeforeStart);
        continue;
      }
      if (role.preference == best)
        kept[role.name].push_back(&c);
      else if (best == kGlooAlgorithm && role.preference == kC10dEnqueue)
        asked[role.name].push_back(&c);
    }
    auto by_start = [](const CallRow* a, const CallRow* b) { return a->start_ns < b->start_ns; };
    for (auto& [name, calls] : kept) {
      std::sort(calls.begin(), calls.end(), by_start);
      auto& enqueued = asked[name];
      std::sort(enqueued.begin(), enqueued.end(), by_start);
      const bool paired = enqueued.size() == calls.size();
      for (size_t i = 0; i < calls.size(); ++i) {
        const CallRow& c = *calls[i];
        const uint64_t start = paired ? std::min(c.start_ns, enqueued[i]->start_ns) : c.start_ns;
        const std::string thread = c.tid == c.tgid ? "main thread" : fmt::format("thread {}", c.tid);
        const SliceId slice = Add(TrackOf(rank_index, c.tgid, c.tid, thread), static_cast<int64_t>(start),
                                  static_cast<int64_t>(c.end_ns), name, "recorded_collective");
        if (best == kGlooAlgorithm) AddGlooBytes(slice, c);
      }
    }
  }

  // On-CPU intervals of the main thread, with one child per stack sample named by its culprit frame. The
  // off-CPU records bound the on-CPU time between them; before the first and after the last, what shows the
  // thread on CPU bounds it: its samples (half a period either side) and its exit (a thread exits running).
  // Without those ends a loop that keeps the CPU until it exits lost its last stretch and every sample in it.
  void AddMainThread(uint32_t rank_index, uint32_t pid) {
    std::vector<std::pair<uint64_t, uint64_t>> off;
    for (const auto& o : seg_.data.off_cpu)
      if (o.tid == pid && o.end_ns > o.start_ns) off.emplace_back(o.start_ns, o.end_ns);
    std::sort(off.begin(), off.end());
    const std::optional<std::pair<uint64_t, uint64_t>> life = OnCpuLife(pid, off);
    if (!life) return;
    const TrackId track = TrackOf(rank_index, pid, pid, "main thread");
    Add(track, static_cast<int64_t>(life->first), static_cast<int64_t>(life->second), kRecordedMainThread,
        "user_annotation");
    std::vector<std::pair<uint64_t, uint64_t>> on;
    uint64_t cursor = life->first;
    for (const auto& [start, end] : off) {
      if (start > cursor) on.emplace_back(cursor, start);
      cursor = std::max(cursor, end);
    }
    if (life->second > cursor) on.emplace_back(cursor, life->second);
    for (const auto& [start, end] : on)
      Add(track, static_cast<int64_t>(start), static_cast<int64_t>(end), kRecordedOnCpu, "cpu_op");
    AddSamples(track, pid, on);
  }

  // The span of the main thread's recorded life: its off-CPU records widened to its samples and its exit;
  // nullopt when nothing of it was recorded.
  std::optional<std::pair<uint64_t, uint64_t>> OnCpuLife(uint32_t pid,
                                                         const std::vector<std::pair<uint64_t, uint64_t>>& off) const {
    uint64_t first = UINT64_MAX, last_off = 0;
    for (const auto& [start, end] : off) {
      first = std::min(first, start);
      last_off = std::max(last_off, end);
    }
    uint64_t last = last_off;
    const uint64_t half = sample_hz_ > 0 ? static_cast<uint64_t>(0.5e9 / sample_hz_) : 0;
    for (const auto& s : seg_.data.samples) {
      if (s.tid != pid || s.user_stack < 0) continue;
      first = std::min(first, s.ts_ns > half ? s.ts_ns - half : 0);
      last = std::max(last, s.ts_ns + half);
    }
    if (first == UINT64_MAX) return std::nullopt;
    if (const auto proc = seg_.processes.find(static_cast<int>(pid));
        proc != seg_.processes.end() && proc->second.exited_ns >= std::max(first, last_off))
      last = proc->second.exited_ns;  // it ran until it exited; no sample comes after that
    return std::make_pair(first, std::max(first, last));
  }

  // Off-CPU intervals of the main thread ended by another process of the same rank: a PyTorch DataLoader's
  // workers are such processes (the main thread waits on their queue), so the wait is data loading.
  void AddWorkerWaits(uint32_t rank_index, const RankBuild& r) {
    const uint32_t main = r.main_pid;
    for (const auto& o : seg_.data.off_cpu)
      if (o.tid == main && o.end_ns > o.start_ns && o.waker != main && r.pids.count(o.waker))
        Add(TrackOf(rank_index, main, main, "main thread"), static_cast<int64_t>(o.start_ns),
            static_cast<int64_t>(o.end_ns), kRecordedWorkerWait, "recorded_wait");
  }

  // Off-CPU intervals of the main thread spent inside PyTorch's data loading code (its Python frames when
  // it left the CPU): a DataLoader with num_workers=0 whose Dataset waits (reads a file, sleeps) stalls the
  // training loop in the main thread itself. Intervals a worker process ended are AddWorkerWaits'.
  void AddDataLoadingWaits(uint32_t rank_index, const RankBuild& r) {
    const uint32_t main = r.main_pid;
    for (const auto& o : seg_.data.off_cpu) {
      if (o.tid != main || o.end_ns <= o.start_ns || (o.waker != main && r.pids.count(o.waker))) continue;
      const auto py = py_of_sample_.find({o.tid, o.end_ns});
      if (py == py_of_sample_.end()) continue;
      const auto frames = seg_.python_stacks.find({main, py->second});
      if (frames == seg_.python_stacks.end() || frames->second.empty() || !InDataLoading(frames->second)) continue;
      Add(TrackOf(rank_index, main, main, "main thread"), static_cast<int64_t>(o.start_ns),
          static_cast<int64_t>(o.end_ns), "DataLoader: off CPU in " + PythonFrameName(frames->second.front()),
          "recorded_wait");
    }
  }

  void AddSamples(TrackId track, uint32_t pid, const std::vector<std::pair<uint64_t, uint64_t>>& on) {
    if (sample_hz_ <= 0) return;
    const auto half = static_cast<uint64_t>(0.5e9 / sample_hz_);
    for (const auto& s : seg_.data.samples) {
      if (s.tid != pid || s.user_stack < 0) continue;
      auto it = std::upper_bound(on.begin(), on.end(), std::make_pair(s.ts_ns, UINT64_MAX));
      if (it == on.begin()) continue;
      --it;
      if (s.ts_ns >= it->second) continue;  // sampled while the off-CPU record says it slept: keep the record
      const auto frames = seg_.user_stacks.find({pid, s.user_stack});
      if (frames == seg_.user_stacks.end()) continue;
      const std::vector<PythonFrameRef>* python = nullptr;
      if (auto py = py_of_sample_.find({s.tid, s.ts_ns}); py != py_of_sample_.end())
        if (auto st = seg_.python_stacks.find({pid, py->second}); st != seg_.python_stacks.end()) python = &st->second;
      const uint64_t start = std::max(it->first, s.ts_ns > half ? s.ts_ns - half : 0);
      const uint64_t end = std::min(it->second, s.ts_ns + half);
      if (end > start)
        Add(track, static_cast<int64_t>(start), static_cast<int64_t>(end), SampleName(frames->second, python),
            "cpu_op");
    }
  }

  const RecordedSegment& seg_;
  uint32_t input_;
  TraceStore& store_;
  // (tid, ts) -> py_stack id: the Python frames of the sample at ts, or of the off-CPU interval ending at ts
  std::map<std::pair<uint32_t, uint64_t>, int32_t> py_of_sample_;
  double sample_hz_ = 0;
  std::map<std::pair<uint32_t, uint32_t>, TrackId> tracks_;
  std::map<CallEntryKey, uint64_t> gloo_bytes_;  // per gloo algorithm entry: its bytes (0: unknown)
};

}  // namespace

Expected<TraceStore> TraceStoreFromRecording(const RecordedRun& run) {
  // One store per segment (host), appended in the order of their first rank.
  std::vector<std::pair<int, TraceStore>> parts;
  for (const RecordedSegment& seg : run.segments) {
    TraceStore part;
    InputInfo in;
    in.path = seg.data.path;
    in.format = InputFormat::kRecording;
    part.inputs.push_back(in);
    Builder(seg, 0, &part).Build();
    int first = INT32_MAX;
    for (const RankInfo& r : part.ranks) first = std::min(first, r.rank);
    parts.emplace_back(first, std::move(part));
  }
  std::map<int32_t, std::string> owner;  // a rank recorded by two segments: two jobs, or two runs, mixed
  for (const auto& [first, part] : parts)
    for (const RankInfo& r : part.ranks)
      if (auto [it, inserted] = owner.emplace(r.rank, part.inputs[0].path); !inserted)
        return Status::BadInput(
            fmt::format("rank {} is in two recordings: {} and {} (two runs or two jobs given "
                        "together?)",
                        r.rank, it->second, part.inputs[0].path));
  std::stable_sort(parts.begin(), parts.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  TraceStore store;
  for (auto& [first, part] : parts) store.append(std::move(part));
  if (store.ranks.empty())
    return Status::BadInput(
        fmt::format("{}: the recording holds no process with a rank (RANK, SLURM_PROCID, "
                    "OMPI_COMM_WORLD_RANK or PMI_RANK in its environment): nothing to compare",
                    run.segments.empty() ? std::string("(no segment)") : run.segments[0].data.path));
  store.shrink_to_fit();
  SetRecordingTables(run, &store);
  return store;
}

}  // namespace strata
