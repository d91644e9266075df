// StuckThreads: the recorder's watch over ranks that stopped making progress (a hang). Each pass (every second)
// a rank's main thread off CPU for at least kStuckAfterNs gets one "thread_state" meta record per stall: since
// when, its state, the system call it waits in, the kernel function and the lock owner (/proc), and where it went
// to sleep (its native and Python stacks, named now so a live reader sees them). A rank stopped on a lock or a
// read never comes back on CPU, so no off_cpu row would say where it is. While it stays stuck, its other threads
// off CPU that long get a thread_state too (name, system call, Python frames read from memory now), so a
// diagnosis can say what the rest of the process does meanwhile. A thread asleep since before the recorder
// attached (no off-CPU start) counts once it has been watched asleep for kStuckAfterNs (SleepWatch).
// Invariants: one main-thread record per (process, off-CPU start) (StallReports); one record per sleep of a
// thread asleep since before the attach; at most kMaxOtherThreads other threads per stall; only ranks (processes
// with a rank) that have not exited are watched; everything it writes goes through Io.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>

#include <nlohmann/json.hpp>

#include "recorder/bpf/record_events.h"
#include "recorder/process_info.h"
#include "recorder/sleep_watch.h"
#include "recorder/stall_reports.h"

namespace strata::recorder {

class StuckThreads {
 public:
  static constexpr uint64_t kStuckAfterNs = 1'000'000'000;
  static constexpr size_t kMaxOtherThreads = 256;

  /// What the watch reads and writes through: the recording's BPF session, Python stacks and segment.
  struct Io {
    std::function<std::optional<strata_off_cpu_start>(uint32_t tid)> off_cpu_since;  // the switch's record
    std::function<int32_t(uint32_t pid)> main_python_stack;  // the main thread's Python stack id at its switch
    std::function<std::optional<int32_t>(int pid, long tid)> python_stack_now;  // nullopt: not a Python process
    std::function<void(uint32_t tgid, int32_t id, bool kernel)> write_stack_now;
    std::function<void(const nlohmann::json& record)> append_meta;
  };

  explicit StuckThreads(Io io) : io_(std::move(io)) {}

  /// One pass over the processes the recording knows, at monotonic time `now`.
  void Watch(const std::map<int, ProcessInfo>& processes, uint64_t now);

 private:
  std::optional<SleepWatch::Asleep> AsleepSinceAttach(int pid, long tid, uint64_t now);
  nlohmann::json AsleepRecord(int pid, long tid, uint64_t now, const SleepWatch::Asleep& asleep);
  void WatchMainThread(int pid, uint64_t now);
  void WriteOtherThreadStates(int pid, uint64_t now, bool new_stall);

  Io io_;
  StallReports stalls_;     // which pass is the first to see a main thread stuck, per stall (stall_reports.h)
  SleepWatch sleep_watch_;  // threads asleep since before the attach (no off-CPU start), each sleep reported once
};

}  // namespace strata::recorder
