// DecodeRecordedThreads: where each ranked process of a recording was (see recorded_threads.h).
#include "importers/recorded_threads.h"

#include <algorithm>
#include <iterator>
#include <map>
#include <utility>

#include "store/stack_frames.h"

namespace strata {
namespace {

// Names a process's stacks, each once: the recorder's stack ids become indexes of the process's tables.
class StackNamer {
 public:
  StackNamer(const RecordedSegment& seg, uint32_t pid, ProcessThreads* out) : seg_(seg), pid_(pid), out_(*out) {}

  // The Python stack `id` of the process, -1 when the recording holds none by that id.
  int32_t Python(int32_t id) {
    const std::vector<PythonFrameRef>* frames = PythonFrames(id);
    if (!frames) return -1;
    auto [it, added] = python_.try_emplace(id, static_cast<int32_t>(out_.stacks.size()));
    if (added) {
      NamedPythonStack& named = out_.stacks.emplace_back();
      named.data_loading = InDataLoading(*frames);
      for (size_t i = 0; i < frames->size() && i < kNamedPythonFrames; ++i)
        named.frames.push_back(PythonFrameName((*frames)[i]));
    }
    return it->second;
  }

  // The culprit frame of native stack `id`, -1 when the recording holds none by that id or it is empty.
  int32_t Native(int32_t id) {
    auto stack = seg_.user_stacks.find({pid_, id});
    if (stack == seg_.user_stacks.end() || stack->second.empty()) return -1;
    auto [it, added] = native_.try_emplace(id, static_cast<int32_t>(out_.native_frames.size()));
    if (added) out_.native_frames.push_back(CulpritFrame(stack->second));
    return it->second;
  }

  // The name of a CPU sample with native stack `user_id` and Python stack `python_id` (SampleName).
  uint32_t SampleNameOf(int32_t user_id, int32_t python_id) {
    auto [it, added] = sample_name_.try_emplace({user_id, python_id}, 0);
    if (!added) return it->second;
    auto native = seg_.user_stacks.find({pid_, user_id});
    const std::string name = SampleName(native == seg_.user_stacks.end() ? std::vector<StackFrame>{} : native->second,
                                        PythonFrames(python_id));
    auto [named, fresh] = name_index_.try_emplace(name, static_cast<uint32_t>(out_.sample_names.size()));
    if (fresh) out_.sample_names.push_back(name);
    it->second = named->second;
    return it->second;
  }

 private:
  const std::vector<PythonFrameRef>* PythonFrames(int32_t id) const {
    auto it = seg_.python_stacks.find({pid_, id});
    return it == seg_.python_stacks.end() ? nullptr : &it->second;
  }

  const RecordedSegment& seg_;
  uint32_t pid_;
  ProcessThreads& out_;
  std::map<int32_t, int32_t> python_, native_;
  std::map<std::pair<int32_t, int32_t>, uint32_t> sample_name_;
  std::map<std::string, uint32_t> name_index_;
};

// One process's main-thread rows, gathered in one pass over the segment.
struct MainRows {
  std::vector<const OffCpuRow*> off_cpu;
  std::vector<const SampleRow*> samples;
  std::vector<const PySampleRow*> py_samples;
};

std::map<uint32_t, MainRows> MainThreadRows(const RecordedSegment& seg, const RecordedThreadsSegment& out) {
  std::map<uint32_t, MainRows> rows;
  for (const auto& [pid, p] : out.processes) rows[pid];
  auto of = [&rows](uint32_t tid) -> MainRows* {
    auto it = rows.find(tid);
    return it == rows.end() ? nullptr : &it->second;
  };
  for (const OffCpuRow& r : seg.data.off_cpu)
    if (MainRows* m = of(r.tid)) m->off_cpu.push_back(&r);
  for (const SampleRow& s : seg.data.samples)
    if (MainRows* m = of(s.tid)) m->samples.push_back(&s);
  for (const PySampleRow& p : seg.data.py_samples)
    if (MainRows* m = of(p.tid)) m->py_samples.push_back(&p);
  return rows;
}

// The main thread's Python stack ids by time: (ts, id) sorted by time, rows of one time in row order.
using PythonIdsAt = std::vector<std::pair<uint64_t, int32_t>>;

PythonIdsAt PythonIdsByTime(const MainRows& rows) {
  PythonIdsAt ids;
  ids.reserve(rows.py_samples.size());
  for (const PySampleRow* py : rows.py_samples) ids.emplace_back(py->ts_ns, py->py_stack);
  std::stable_sort(ids.begin(), ids.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  return ids;
}

// The rows of `ids` at exactly `ts`, in row order.
std::pair<PythonIdsAt::const_iterator, PythonIdsAt::const_iterator> IdsAt(const PythonIdsAt& ids, uint64_t ts) {
  return std::equal_range(ids.begin(), ids.end(), std::pair<uint64_t, int32_t>{ts, 0},
                          [](const auto& a, const auto& b) { return a.first < b.first; });
}

// The last Python stack recorded at exactly `ts` that the recording names (-1 none), as the stall shows a
// stack sampled with an off-CPU interval's end.
int32_t PythonAt(const PythonIdsAt& ids, uint64_t ts, StackNamer* names) {
  int32_t out = -1;
  const auto [first, last] = IdsAt(ids, ts);
  for (auto it = first; it != last; ++it)
    if (const int32_t id = names->Python(it->second); id >= 0) out = id;
  return out;
}

// The Python stack id of the main thread's latest sample at or before `to` (the last such row on ties), -1 none.
int32_t LastPythonId(const PythonIdsAt& ids, uint64_t to) {
  auto after = std::upper_bound(ids.begin(), ids.end(), to, [](uint64_t t, const auto& id) { return t < id.first; });
  return after == ids.begin() ? -1 : std::prev(after)->second;
}

// The earliest end of the main thread's off-CPU intervals by their start (0: none began then).
using WokeBySince = std::map<uint64_t, uint64_t>;

void AddThreadState(const RecordedSegment& seg, const RecordedThreadState& t, const WokeBySince* woke_by_since,
                    StackNamer* names, ProcessThreads* p) {
  ThreadStateRecord r;
  r.tid = t.tid;
  r.seen_unix_ns = seg.UnixNs(t.ts_ns);
  r.since_unix_ns = t.since_ns != 0 ? seg.UnixNs(t.since_ns) : 0;
  r.since_before_attach = t.since_before_attach;
  r.state = t.state;
  r.syscall = t.syscall;
  r.wchan = t.wchan;
  r.comm = t.comm;
  r.lock_owner = t.lock_owner;
  r.python = names->Python(t.py_stack);
  r.native = names->Native(t.user_stack);
  if (woke_by_since)
    if (auto it = woke_by_since->find(t.since_ns); it != woke_by_since->end() && it->second != 0)
      r.woke_unix_ns = seg.UnixNs(it->second);
  p->thread_states.push_back(std::move(r));
}

RecordedThreadsSegment DecodeThreadsSegment(const RecordedSegment& seg) {
  RecordedThreadsSegment out;
  for (const auto& [pid, proc] : seg.processes) {
    if (!proc.rank) continue;
    ProcessThreads& p = out.processes[static_cast<uint32_t>(pid)];
    p.rank = *proc.rank;
    p.pid = static_cast<uint32_t>(pid);
    p.ppid = static_cast<uint32_t>(std::max(proc.ppid, 0));
    p.exited_unix_ns = seg.ExitedUnixNs(proc);
    p.exit_code = proc.exit_code;
    p.exit_signal = proc.exit_signal;
  }
  const std::map<uint32_t, MainRows> rows = MainThreadRows(seg, out);
  for (auto& [pid, p] : out.processes) {
    const MainRows& main = rows.at(pid);
    StackNamer names(seg, pid, &p);
    const PythonIdsAt python_ids = PythonIdsByTime(main);
    const RecordedProcess& proc = seg.processes.at(static_cast<int>(pid));
    if (proc.exited_ns != 0) p.python_at_exit = names.Python(LastPythonId(python_ids, proc.exited_ns));
    WokeBySince woke;  // only for the main thread's thread states (a few), in one pass over its intervals
    for (const RecordedThreadState& t : seg.thread_states)
      if (t.tid == pid) woke.try_emplace(t.since_ns, 0);
    if (!woke.empty())
      for (const OffCpuRow* o : main.off_cpu)
        if (auto it = woke.find(o->start_ns); it != woke.end())
          it->second = it->second == 0 ? o->end_ns : std::min(it->second, o->end_ns);
    for (const RecordedThreadState& t : seg.thread_states)
      if (t.tid == pid || t.pid == pid) AddThreadState(seg, t, t.tid == pid ? &woke : nullptr, &names, &p);
    for (const OffCpuRow* o : main.off_cpu)
      p.off_cpu.push_back(
          {seg.UnixNs(o->start_ns), seg.UnixNs(o->end_ns), o->state, PythonAt(python_ids, o->end_ns, &names)});
    for (const SampleRow* s : main.samples) {
      const auto [first, last] = IdsAt(python_ids, s->ts_ns);  // the sample's Python stack: the last row of its time
      const int32_t py_id = first == last ? -1 : std::prev(last)->second;
      p.samples.push_back({seg.UnixNs(s->ts_ns), names.SampleNameOf(s->user_stack, py_id), names.Python(py_id),
                           names.Native(s->user_stack)});
    }
  }
  return out;
}

}  // namespace

RecordedThreads DecodeRecordedThreads(const RecordedRun& run) {
  RecordedThreads out;
  for (const RecordedSegment& seg : run.segments) out.segments.push_back(DecodeThreadsSegment(seg));
  return out;
}

}  // namespace strata
