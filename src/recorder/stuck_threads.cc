// StuckThreads (stuck_threads.h): thread_state records for ranks whose main thread stays off CPU.
#include "recorder/stuck_threads.h"

#include <fmt/format.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "recorder/lock_owner.h"

namespace strata::recorder {
namespace {

// The first line of a /proc file, without its newline ("" when unreadable).
std::string ReadFirstLine(const std::string& path) {
  FILE* f = std::fopen(path.c_str(), "r");
  if (!f) return "";
  char buf[256] = {};
  const bool got = std::fgets(buf, sizeof buf, f) != nullptr;
  std::fclose(f);
  std::string line = got ? buf : "";
  while (!line.empty() && (line.back() == '\n' || line.back() == '\0')) line.pop_back();
  return line;
}

// The thread_state record of thread `tid` of `pid`, off CPU since `since`: what every such record holds
// (its system call and kernel wait read from /proc now); the caller adds stacks or the thread's name.
nlohmann::json ThreadStateRecord(int pid, long tid, uint64_t now, const strata_off_cpu_start& since) {
  const std::string task = fmt::format("/proc/{}/task/{}/", pid, tid);
  const std::string syscall = ReadFirstLine(task + "syscall");
  return {{"type", "thread_state"},
          {"pid", pid},
          {"tid", tid},
          {"ts_ns", now},
          {"since_ns", since.ts},
          {"state", since.state},
          {"syscall", syscall.substr(0, syscall.find(' '))},
          {"wchan", ReadFirstLine(task + "wchan")},
          {"lock_owner", LockOwnerFromSyscall(pid, tid, syscall).value_or(0)}};
}

// A thread id from a /proc/PID/task entry's name (0 when it is not one).
long TaskId(const std::string& name) {
  char* end = nullptr;
  const long tid = std::strtol(name.c_str(), &end, 10);
  return *end == '\0' && tid > 0 ? tid : 0;
}

}  // namespace

void StuckThreads::Watch(const std::map<int, ProcessInfo>& processes, uint64_t now) {
  for (const auto& [pid, info] : processes)
    if (info.exited_ns == 0 && info.rank) WatchMainThread(pid, now);  // the job's ranks, not launchers
}

// A thread with no off-CPU start that has been asleep kStuckAfterNs since the watch first saw it so (it went to
// sleep before the attach: SleepWatch).
std::optional<SleepWatch::Asleep> StuckThreads::AsleepSinceAttach(int pid, long tid, uint64_t now) {
  return sleep_watch_.Observe(tid, SleepWatch::Read(pid, tid), now, kStuckAfterNs);
}

// The thread_state record of a thread asleep since before the attach: its since is unknown (0), so a reader
// shows no start rather than the attach's; no stacks of the BPF program's (it saw no switch); its Python
// frames are read from the process's memory now.
nlohmann::json StuckThreads::AsleepRecord(int pid, long tid, uint64_t now, const SleepWatch::Asleep& asleep) {
  strata_off_cpu_start unknown{};
  unknown.state = asleep.state;
  nlohmann::json record = ThreadStateRecord(pid, tid, now, unknown);
  record["since_before_attach"] = true;
  if (auto py = io_.python_stack_now(pid, tid)) record["py_stack"] = *py;
  return record;
}

// A rank's main thread off CPU for kStuckAfterNs gets its thread_state once per sleep, and while it stays stuck
// its other threads are looked at again (one asleep since before the attach needs kStuckAfterNs of watching
// before it counts).
void StuckThreads::WatchMainThread(int pid, uint64_t now) {
  const auto since = io_.off_cpu_since(static_cast<uint32_t>(pid));
  if (!since) {
    const auto asleep = AsleepSinceAttach(pid, pid, now);
    if (!asleep) return;
    if (asleep->fresh) io_.append_meta(AsleepRecord(pid, pid, now, *asleep));
    WriteOtherThreadStates(pid, now, asleep->fresh);
    return;
  }
  if (now < since->ts || now - since->ts < kStuckAfterNs) return;
  if (!stalls_.Fresh(pid, since->ts)) {
    WriteOtherThreadStates(pid, now, false);
    return;
  }
  nlohmann::json record = ThreadStateRecord(pid, pid, now, *since);
  record["user_stack"] = since->user_stack;
  record["kernel_stack"] = since->kernel_stack;
  record["py_stack"] = io_.main_python_stack(static_cast<uint32_t>(pid));
  io_.write_stack_now(static_cast<uint32_t>(pid), since->user_stack, false);
  io_.write_stack_now(static_cast<uint32_t>(pid), since->kernel_stack, true);
  io_.append_meta(record);
  WriteOtherThreadStates(pid, now, true);
}

// The other threads of a rank whose main thread is stuck: each one off CPU for kStuckAfterNs or more gets a
// thread_state too, with its name, system call, kernel wait and Python frames (read from the process's memory
// now: the BPF program takes stacks at the switch for main threads only, and a thread asleep since before the
// stall will not switch again), so a diagnosis can say what the rest of the process does meanwhile (the thread
// that holds the lock the main thread waits for, sleeping or reading). At most kMaxOtherThreads per stall.
void StuckThreads::WriteOtherThreadStates(int pid, uint64_t now, bool new_stall) {
  size_t written = 0;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(fmt::format("/proc/{}/task", pid), ec)) {
    const long tid = TaskId(entry.path().filename().string());
    if (tid == 0 || tid == pid) continue;
    const auto since = io_.off_cpu_since(static_cast<uint32_t>(tid));
    if (!since) {
      const auto asleep = AsleepSinceAttach(pid, tid, now);
      if (asleep && asleep->fresh && ++written <= kMaxOtherThreads) {
        nlohmann::json record = AsleepRecord(pid, tid, now, *asleep);
        record["comm"] = ReadFirstLine(entry.path().string() + "/comm");
        io_.append_meta(record);
      }
      continue;
    }
    if (!new_stall || now < since->ts || now - since->ts < kStuckAfterNs) continue;
    if (++written > kMaxOtherThreads) break;
    nlohmann::json record = ThreadStateRecord(pid, tid, now, *since);
    record["comm"] = ReadFirstLine(entry.path().string() + "/comm");
    if (auto py = io_.python_stack_now(pid, tid)) record["py_stack"] = *py;
    io_.append_meta(record);
  }
}

}  // namespace strata::recorder
