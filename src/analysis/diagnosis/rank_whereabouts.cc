// Where a rank's process was over an interval of a recording (see rank_whereabouts.h).
#include "analysis/diagnosis/rank_whereabouts.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <map>
#include <set>

#include "analysis/diagnosis/thresholds.h"
#include "store/stack_frames.h"

namespace strata::diagnosis {
namespace {

constexpr size_t kMaxPythonFrames = 8;

// A segment's named stacks, indexed once (RankLocator).
struct StackRefs {
  const UserStacks& user;
  const PythonStacks& python;
};

void SetPython(const StackRefs& stacks, uint32_t pid, int32_t id, StalledRankState* out) {
  auto it = stacks.python.find({pid, id});
  if (it == stacks.python.end()) return;
  out->python_stack.clear();
  out->data_loading = InDataLoading(it->second);
  for (size_t i = 0; i < it->second.size() && i < kMaxPythonFrames; ++i)
    out->python_stack.push_back(PythonFrameName(it->second[i]));
  if (!out->python_stack.empty()) out->frame = out->python_stack.front();
}

void SetNative(const StackRefs& stacks, uint32_t pid, int32_t id, StalledRankState* out) {
  auto it = stacks.user.find({pid, id});
  if (it == stacks.user.end() || it->second.empty()) return;
  out->native_frame = CulpritFrame(it->second);
  if (out->frame.empty()) out->frame = out->native_frame;
}

// The Python stack id recorded with the main thread's latest off-CPU interval or sample before `to_mono`.
int32_t LastPythonStack(const RecordedSegment& seg, uint32_t pid, uint64_t to_mono) {
  uint64_t best_ts = 0;
  int32_t best = -1;
  for (const segments::PySampleRow& p : seg.data.py_samples)
    if (p.tid == pid && p.ts_ns <= to_mono && p.ts_ns >= best_ts) {
      best_ts = p.ts_ns;
      best = p.py_stack;
    }
  return best;
}

bool FromExit(const RecordedSegment& seg, const StackRefs& stacks, const RecordedProcess& proc, int64_t to,
              StalledRankState* out) {
  if (proc.exited_ns == 0 || seg.UnixNs(proc.exited_ns) > to) return false;
  if (proc.exit_signal) {
    const char* abbrev = sigabbrev_np(*proc.exit_signal);
    out->state = fmt::format("killed by signal {}{}", *proc.exit_signal, abbrev ? fmt::format(" (SIG{})", abbrev) : "");
  } else if (proc.exit_code) {
    out->state =
        *proc.exit_code == 0 ? "exited normally (code 0)" : fmt::format("exited with code {}", *proc.exit_code);
  } else {
    out->state = "exited";
  }
  out->since_unix_s = static_cast<double>(seg.UnixNs(proc.exited_ns)) / 1e9;
  SetPython(stacks, static_cast<uint32_t>(proc.pid), LastPythonStack(seg, proc.pid, proc.exited_ns), out);
  out->observed_by = "process exit";
  return true;
}

bool FromThreadState(const RecordedSegment& seg, const StackRefs& stacks, uint32_t pid, uint64_t from, uint64_t to,
                     StalledRankState* out) {
  const RecordedThreadState* best = nullptr;
  for (const RecordedThreadState& t : seg.thread_states)
    if (t.tid == pid && t.since_ns <= to && (!best || t.since_ns >= best->since_ns)) best = &t;
  if (!best) return false;
  for (const segments::OffCpuRow& r : seg.data.off_cpu)
    if (r.tid == pid && r.start_ns == best->since_ns && r.end_ns < from) return false;  // woke before the stall
  out->state = BlockedStateName(best->syscall, best->wchan, best->state);
  out->kernel_wait = best->wchan;
  out->lock_owner_tid = best->lock_owner;
  out->since_unix_s = seg.SinceUnixS(*best);
  SetPython(stacks, pid, best->py_stack, out);
  SetNative(stacks, pid, best->user_stack, out);
  out->observed_by = "thread state";
  return true;
}

bool FromOffCpu(const RecordedSegment& seg, const StackRefs& stacks, uint32_t pid, uint64_t from, uint64_t to,
                StalledRankState* out) {
  const segments::OffCpuRow* best = nullptr;
  uint64_t best_overlap = 0;
  for (const segments::OffCpuRow& r : seg.data.off_cpu) {
    if (r.tid != pid || r.end_ns <= from || r.start_ns >= to) continue;
    const uint64_t overlap = std::min(r.end_ns, to) - std::max(r.start_ns, from);
    if (overlap > best_overlap) {
      best_overlap = overlap;
      best = &r;
    }
  }
  if (!best || to <= from || best_overlap < (to - from) / 2) return false;
  out->state = best->state & 2    ? "in uninterruptible I/O (D state)"
               : best->state == 0 ? "runnable, waiting for a CPU"
                                  : "sleeping (off CPU)";
  out->since_unix_s = static_cast<double>(seg.UnixNs(best->start_ns)) / 1e9;
  for (const segments::PySampleRow& p : seg.data.py_samples)
    if (p.tid == pid && p.ts_ns == best->end_ns) SetPython(stacks, pid, p.py_stack, out);
  out->observed_by = "off-CPU interval";
  return true;
}

bool FromSamples(const RecordedSegment& seg, const StackRefs& stacks, uint32_t pid, uint64_t from, uint64_t to,
                 StalledRankState* out) {
  std::map<uint64_t, int32_t> python_of;  // sample time -> Python stack id
  for (const segments::PySampleRow& p : seg.data.py_samples)
    if (p.tid == pid && p.ts_ns >= from && p.ts_ns <= to) python_of[p.ts_ns] = p.py_stack;
  std::map<std::string, size_t> names;
  std::map<std::string, std::pair<int32_t, int32_t>> example;  // name -> (user stack, Python stack)
  size_t samples = 0;
  uint64_t first = 0;
  for (const segments::SampleRow& s : seg.data.samples) {
    if (s.tid != pid || s.ts_ns < from || s.ts_ns > to) continue;
    if (samples++ == 0) first = s.ts_ns;
    auto native = stacks.user.find({pid, s.user_stack});
    auto py_id = python_of.find(s.ts_ns);
    auto python = py_id == python_of.end() ? stacks.python.end() : stacks.python.find({pid, py_id->second});
    const std::string name = SampleName(native == stacks.user.end() ? std::vector<StackFrame>{} : native->second,
                                        python == stacks.python.end() ? nullptr : &python->second);
    ++names[name];
    example.try_emplace(name, s.user_stack, py_id == python_of.end() ? -1 : py_id->second);
  }
  if (samples < thresholds::kMinSpinSamples) return false;
  auto top =
      std::max_element(names.begin(), names.end(), [](const auto& a, const auto& b) { return a.second < b.second; });
  out->state = "on CPU (spinning)";
  out->since_unix_s = static_cast<double>(seg.UnixNs(first)) / 1e9;
  SetPython(stacks, pid, example[top->first].second, out);
  SetNative(stacks, pid, example[top->first].first, out);
  out->frame = top->first;
  out->observed_by = "CPU samples";
  return true;
}

// What a thread blocked in a system call (x86-64 number) waits for, and whether that wait is what an idle
// pool thread does (a lock, condition or event wait: futex, poll, select, epoll).
struct BlockedCall {
  const char* name;
  bool idle;
};
const std::map<std::string, BlockedCall>& BlockedCalls() {
  static const std::map<std::string, BlockedCall> kBySyscall = {
      {"202", {"blocked on a lock (futex)", true}},      {"0", {"waiting for I/O (read)", false}},
      {"17", {"waiting for I/O (pread)", false}},        {"19", {"waiting for I/O (readv)", false}},
      {"45", {"waiting for I/O (recvfrom)", false}},     {"47", {"waiting for I/O (recvmsg)", false}},
      {"7", {"waiting for I/O (poll)", true}},           {"271", {"waiting for I/O (ppoll)", true}},
      {"23", {"waiting for I/O (select)", true}},        {"270", {"waiting for I/O (pselect)", true}},
      {"232", {"waiting for I/O (epoll_wait)", true}},   {"281", {"waiting for I/O (epoll_pwait)", true}},
      {"441", {"waiting for I/O (epoll_pwait2)", true}}, {"35", {"sleeping (nanosleep)", false}},
      {"230", {"sleeping (clock_nanosleep)", false}},    {"61", {"waiting for a child process", false}},
      {"247", {"waiting for a child process", false}},   {"34", {"paused (pause)", false}},
      {"1", {"waiting for I/O (write)", false}},         {"44", {"waiting for I/O (sendto)", false}},
      {"46", {"waiting for I/O (sendmsg)", false}}};
  return kBySyscall;
}

}  // namespace

bool IsIdleWait(const std::string& syscall, uint32_t state) {
  if (state & 2) return false;
  auto it = BlockedCalls().find(syscall);
  return it != BlockedCalls().end() && it->second.idle;
}

std::string BlockedStateName(const std::string& syscall, const std::string& wchan, uint32_t state) {
  if (state & 2) return "in uninterruptible I/O (D state)";
  if (auto it = BlockedCalls().find(syscall); it != BlockedCalls().end()) return it->second.name;
  if (wchan.find("futex") != std::string::npos) return "blocked on a lock (futex)";
  if (wchan.find("nanosleep") != std::string::npos) return "sleeping (nanosleep)";
  if (wchan.find("pipe") != std::string::npos || wchan.find("sk_wait") != std::string::npos ||
      wchan.find("wait_woken") != std::string::npos || wchan.find("poll") != std::string::npos)
    return "waiting for I/O";
  if (!syscall.empty() && syscall != "running" && syscall != "-1")
    return fmt::format("sleeping in system call {}", syscall);
  return "sleeping (off CPU)";
}

namespace {

// The threads of `pid` other than its main thread that the recorder found off CPU during [from, to]: the
// latest record of each, the busy ones (not idle in a lock, condition or event wait) first.
std::vector<StalledRankState::OtherThread> OtherThreads(const RecordedSegment& seg, const StackRefs& stacks,
                                                        uint32_t pid, uint64_t from, uint64_t to) {
  std::map<uint32_t, const RecordedThreadState*> latest;
  for (const RecordedThreadState& t : seg.thread_states)
    if (t.pid == pid && t.tid != pid && t.ts_ns >= from && t.since_ns <= to)
      if (auto& slot = latest[t.tid]; !slot || t.ts_ns >= slot->ts_ns) slot = &t;
  std::vector<StalledRankState::OtherThread> out;
  for (const auto& [tid, t] : latest) {
    StalledRankState::OtherThread& o = out.emplace_back();
    o.tid = tid;
    o.name = t->comm;
    o.state = BlockedStateName(t->syscall, t->wchan, t->state);
    o.since_unix_s = seg.SinceUnixS(*t);
    o.idle = IsIdleWait(t->syscall, t->state);
    if (auto it = stacks.python.find({pid, t->py_stack}); it != stacks.python.end())
      for (size_t i = 0; i < it->second.size() && i < kMaxPythonFrames; ++i)
        o.python_stack.push_back(PythonFrameName(it->second[i]));
    if (!o.python_stack.empty()) o.frame = o.python_stack.front();
  }
  std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return !a.idle && b.idle; });
  return out;
}

}  // namespace

StalledRankState RankLocator::Locate(size_t segment, uint32_t pid, int32_t rank, int64_t from_unix_ns,
                                     int64_t to_unix_ns) const {
  StalledRankState out;
  out.rank = rank;
  const RecordedSegment& seg = run_.segments[segment];
  const StackRefs stacks{seg.user_stacks, seg.python_stacks};
  const uint64_t from = seg.MonoNs(from_unix_ns), to = seg.MonoNs(to_unix_ns);
  auto proc = seg.processes.find(static_cast<int>(pid));
  if (proc != seg.processes.end() && FromExit(seg, stacks, proc->second, to_unix_ns, &out)) return out;
  out.other_threads = OtherThreads(seg, stacks, pid, from, to);
  if (FromThreadState(seg, stacks, pid, from, to, &out)) {
    std::stable_partition(out.other_threads.begin(), out.other_threads.end(),
                          [&](const StalledRankState::OtherThread& t) { return t.tid == out.lock_owner_tid; });
    return out;
  }
  if (FromOffCpu(seg, stacks, pid, from, to, &out)) return out;
  if (FromSamples(seg, stacks, pid, from, to, &out)) return out;
  out.state = "not observed (no sample or scheduler event of its main thread during the stall)";
  out.observed_by = "none";
  return out;
}

}  // namespace strata::diagnosis
