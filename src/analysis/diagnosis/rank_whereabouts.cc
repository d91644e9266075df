// Where a rank's process was over an interval of a recording (see rank_whereabouts.h).
#include "analysis/diagnosis/rank_whereabouts.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <map>
#include <set>

#include "analysis/diagnosis/thresholds.h"

namespace strata::diagnosis {
namespace {

void SetPython(const ProcessThreads& p, int32_t id, StalledRankState* out) {
  if (id < 0 || static_cast<size_t>(id) >= p.stacks.size()) return;
  const NamedPythonStack& stack = p.stacks[static_cast<size_t>(id)];
  out->python_stack = stack.frames;
  out->data_loading = stack.data_loading;
  if (!out->python_stack.empty()) out->frame = out->python_stack.front();
}

void SetNative(const ProcessThreads& p, int32_t id, StalledRankState* out) {
  if (id < 0 || static_cast<size_t>(id) >= p.native_frames.size()) return;
  out->native_frame = p.native_frames[static_cast<size_t>(id)];
  if (out->frame.empty()) out->frame = out->native_frame;
}

bool FromExit(const ProcessThreads& p, int64_t to, StalledRankState* out) {
  if (!p.exited_unix_ns || *p.exited_unix_ns > to) return false;
  if (p.exit_signal) {
    const char* abbrev = sigabbrev_np(*p.exit_signal);
    out->state = {RankStateKind::kKilled,
                  fmt::format("{}{}", *p.exit_signal, abbrev ? fmt::format(" (SIG{})", abbrev) : ""), ""};
  } else if (p.exit_code) {
    out->state = *p.exit_code == 0 ? RankState{RankStateKind::kExitedNormally, "", ""}
                                   : RankState{RankStateKind::kExited, std::to_string(*p.exit_code), ""};
  } else {
    out->state = {RankStateKind::kExited, "", ""};
  }
  out->since_unix_s = static_cast<double>(*p.exited_unix_ns) / 1e9;
  SetPython(p, p.python_at_exit, out);
  out->observed_by = Observer::kProcessExit;
  return true;
}

double SinceS(const ThreadStateRecord& t) { return static_cast<double>(t.since_unix_ns) / 1e9; }

bool FromThreadState(const ProcessThreads& p, int64_t from, int64_t to, StalledRankState* out) {
  const ThreadStateRecord* best = nullptr;
  for (const ThreadStateRecord& t : p.thread_states)
    if (t.tid == p.pid && t.since_unix_ns <= to && (!best || t.since_unix_ns >= best->since_unix_ns)) best = &t;
  if (!best) return false;
  if (best->woke_unix_ns != 0 && best->woke_unix_ns < from) return false;  // woke before the stall
  out->state = BlockedState(best->syscall, best->wchan, best->state);
  out->kernel_wait = best->wchan;
  out->lock_owner_tid = best->lock_owner;
  out->since_unix_s = SinceS(*best);
  SetPython(p, best->python, out);
  SetNative(p, best->native, out);
  out->observed_by = Observer::kThreadState;
  return true;
}

bool FromOffCpu(const ProcessThreads& p, int64_t from, int64_t to, StalledRankState* out) {
  const MainThreadOffCpu* best = nullptr;
  int64_t best_overlap = 0;
  for (const MainThreadOffCpu& r : p.off_cpu) {
    if (r.end_unix_ns <= from || r.start_unix_ns >= to) continue;
    const int64_t overlap = std::min(r.end_unix_ns, to) - std::max(r.start_unix_ns, from);
    if (overlap > best_overlap) {
      best_overlap = overlap;
      best = &r;
    }
  }
  if (!best || to <= from || best_overlap < (to - from) / 2) return false;
  out->state.kind = best->state & 2    ? RankStateKind::kUninterruptible
                    : best->state == 0 ? RankStateKind::kRunnable
                                       : RankStateKind::kOffCpu;
  out->since_unix_s = static_cast<double>(best->start_unix_ns) / 1e9;
  SetPython(p, best->python, out);
  out->observed_by = Observer::kOffCpuInterval;
  return true;
}

bool FromSamples(const ProcessThreads& p, int64_t from, int64_t to, StalledRankState* out) {
  std::map<uint32_t, size_t> names;                     // sample name -> samples
  std::map<uint32_t, const MainThreadSample*> example;  // sample name -> its first sample
  size_t samples = 0;
  int64_t first = 0;
  for (const MainThreadSample& s : p.samples) {
    if (s.unix_ns < from || s.unix_ns > to) continue;
    if (samples++ == 0) first = s.unix_ns;
    ++names[s.name];
    example.try_emplace(s.name, &s);
  }
  if (samples == 0 || samples < thresholds::kMinSpinSamples) return false;
  // The most sampled name (on ties, the first in name order, as names were compared before they were indexed).
  uint32_t top = names.begin()->first;
  for (const auto& [name, n] : names)
    if (n > names.at(top) || (n == names.at(top) && p.sample_names[name] < p.sample_names[top])) top = name;
  const MainThreadSample* e = example.at(top);
  out->state = {RankStateKind::kOnCpu, "", ""};
  out->since_unix_s = static_cast<double>(first) / 1e9;
  SetPython(p, e->python, out);
  SetNative(p, e->native, out);
  out->frame = p.sample_names[top];
  out->observed_by = Observer::kCpuSamples;
  return true;
}

// What a thread blocked in a system call (x86-64 number) waits for: the kind of its state and the call's name
// when the state shows it, and whether that wait is what an idle pool thread does (a lock, condition or event
// wait: futex, poll, select, epoll).
struct BlockedCall {
  RankStateKind kind;
  const char* name;
  bool idle;
};
const std::map<std::string, BlockedCall>& BlockedCalls() {
  using K = RankStateKind;
  static const std::map<std::string, BlockedCall> kBySyscall = {{"202", {K::kLock, "futex", true}},
                                                                {"0", {K::kIoWait, "read", false}},
                                                                {"17", {K::kIoWait, "pread", false}},
                                                                {"19", {K::kIoWait, "readv", false}},
                                                                {"45", {K::kIoWait, "recvfrom", false}},
                                                                {"47", {K::kIoWait, "recvmsg", false}},
                                                                {"7", {K::kIoWait, "poll", true}},
                                                                {"271", {K::kIoWait, "ppoll", true}},
                                                                {"23", {K::kIoWait, "select", true}},
                                                                {"270", {K::kIoWait, "pselect", true}},
                                                                {"232", {K::kIoWait, "epoll_wait", true}},
                                                                {"281", {K::kIoWait, "epoll_pwait", true}},
                                                                {"441", {K::kIoWait, "epoll_pwait2", true}},
                                                                {"35", {K::kSleeping, "nanosleep", false}},
                                                                {"230", {K::kSleeping, "clock_nanosleep", false}},
                                                                {"61", {K::kChildWait, "", false}},
                                                                {"247", {K::kChildWait, "", false}},
                                                                {"34", {K::kPaused, "pause", false}},
                                                                {"1", {K::kIoWait, "write", false}},
                                                                {"44", {K::kIoWait, "sendto", false}},
                                                                {"46", {K::kIoWait, "sendmsg", false}}};
  return kBySyscall;
}

}  // namespace

bool IsIdleWait(const std::string& syscall, uint32_t state) {
  if (state & 2) return false;
  auto it = BlockedCalls().find(syscall);
  return it != BlockedCalls().end() && it->second.idle;
}

RankState BlockedState(const std::string& syscall, const std::string& wchan, uint32_t state) {
  if (state & 2) return {RankStateKind::kUninterruptible, "", ""};
  if (auto it = BlockedCalls().find(syscall); it != BlockedCalls().end()) return {it->second.kind, it->second.name, ""};
  if (wchan.find("futex") != std::string::npos) return {RankStateKind::kLock, "futex", ""};
  if (wchan.find("nanosleep") != std::string::npos) return {RankStateKind::kSleeping, "nanosleep", ""};
  if (wchan.find("pipe") != std::string::npos || wchan.find("sk_wait") != std::string::npos ||
      wchan.find("wait_woken") != std::string::npos || wchan.find("poll") != std::string::npos)
    return {RankStateKind::kIoWait, "", ""};
  if (!syscall.empty() && syscall != "running" && syscall != "-1") return {RankStateKind::kInSyscall, syscall, ""};
  return {RankStateKind::kOffCpu, "", ""};
}

namespace {

// The threads of the process other than its main thread that the recorder found off CPU during [from, to]:
// the latest record of each, the busy ones (not idle in a lock, condition or event wait) first.
std::vector<StalledRankState::OtherThread> OtherThreads(const ProcessThreads& p, int64_t from, int64_t to) {
  std::map<uint32_t, const ThreadStateRecord*> latest;
  for (const ThreadStateRecord& t : p.thread_states)
    if (t.tid != p.pid && t.seen_unix_ns >= from && t.since_unix_ns <= to)
      if (auto& slot = latest[t.tid]; !slot || t.seen_unix_ns >= slot->seen_unix_ns) slot = &t;
  std::vector<StalledRankState::OtherThread> out;
  for (const auto& [tid, t] : latest) {
    StalledRankState::OtherThread& o = out.emplace_back();
    o.tid = tid;
    o.name = t->comm;
    o.state = BlockedState(t->syscall, t->wchan, t->state);
    o.since_unix_s = SinceS(*t);
    o.idle = IsIdleWait(t->syscall, t->state);
    if (t->python >= 0 && static_cast<size_t>(t->python) < p.stacks.size())
      o.python_stack = p.stacks[static_cast<size_t>(t->python)].frames;
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
  const ProcessThreads* p = nullptr;
  if (segment < threads_.segments.size())
    if (auto it = threads_.segments[segment].processes.find(pid); it != threads_.segments[segment].processes.end())
      p = &it->second;
  if (p) {
    if (FromExit(*p, to_unix_ns, &out)) return out;
    out.other_threads = OtherThreads(*p, from_unix_ns, to_unix_ns);
    if (FromThreadState(*p, from_unix_ns, to_unix_ns, &out)) {
      std::stable_partition(out.other_threads.begin(), out.other_threads.end(),
                            [&](const StalledRankState::OtherThread& t) { return t.tid == out.lock_owner_tid; });
      return out;
    }
    if (FromOffCpu(*p, from_unix_ns, to_unix_ns, &out)) return out;
    if (FromSamples(*p, from_unix_ns, to_unix_ns, &out)) return out;
  }
  out.state = {RankStateKind::kNotObserved, "", ""};
  out.observed_by = Observer::kNone;
  return out;
}

}  // namespace strata::diagnosis
