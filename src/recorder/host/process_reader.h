// Per traced process (tgid): scheduler and memory counters summed over its threads.
//   /proc/PID/task/TID/schedstat -> proc.oncpu_ns, proc.runq_wait_ns, proc.timeslices (every sample)
//   /proc/PID/task/TID/status    -> proc.voluntary_ctxt_switches, proc.nonvoluntary_ctxt_switches (per
//                                   thread in the kernel: /proc/PID/status has the main thread's only).
//                                   status is ~15x dearer to read than schedstat, so it is read every
//                                   `status_every` samples (1 Hz at the default 10 Hz) and these two series
//                                   are emitted on those samples only; switches of a thread that exits
//                                   between two such samples since the last one are not counted.
//   /proc/PID/stat               -> proc.minflt, proc.majflt (whole process, exited threads included)
//   /proc/PID/statm              -> proc.rss_bytes
//   the task listing             -> proc.threads
// One series per pid, not per thread. Threads come and go: the reader keeps each thread's last values and
// adds deltas (a new thread adds all it has), so the sums never go backwards when a thread exits. Each
// thread's schedstat stays open between samples (re-read from offset 0: ~6x cheaper than opening it
// again), up to a budget of descriptors taken from RLIMIT_NOFILE; past it files are opened each time. A pid
// that vanishes is reported once; a pid reused by a new process (different start time) starts afresh
// without the series going backwards.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "recorder/host/counter_sink.h"

namespace strata::recorder {

class ProcessReader {
 public:
  /// `max_kept_fds`: budget of schedstat descriptors kept open; by default a quarter of RLIMIT_NOFILE's soft
  /// limit, at most 8192.
  static constexpr size_t kFdBudgetFromRlimit = ~size_t{0};
  explicit ProcessReader(const std::string& proc_root, int status_every = 10,
                         size_t max_kept_fds = kFdBudgetFromRlimit);
  size_t kept_fds() const { return kept_fds_; }
  /// Reads one pid; false when the process is gone.
  bool Sample(int pid, CounterSink& sink);
  /// Drops the state of pids that are no longer traced.
  void Retain(const std::vector<int>& pids);

 private:
  struct ThreadCounters {
    uint64_t oncpu_ns = 0;
    uint64_t runq_wait_ns = 0;
    uint64_t timeslices = 0;
    uint64_t voluntary = 0;
    uint64_t nonvoluntary = 0;
  };
  struct ThreadState {
    ThreadCounters last;  // values at the last sample
    uint64_t round = 0;   // the sample that last saw the thread
    UniqueFd schedstat;   // kept open; -1 when not (yet) opened or over the budget
  };
  struct PidState {
    uint64_t start_time = 0;
    bool gone = false;
    std::unordered_map<int, ThreadState> threads;
    ThreadCounters total;  // sums of per-thread deltas since the pid was first seen
    uint64_t round = 0;
  };
  /// Reads TID/schedstat (and TID/status when `with_status`) under the open task directory into *out;
  /// false when the thread is gone.
  bool ReadThread(int task_fd, std::string_view tid, bool with_status, ThreadState* thread, ThreadCounters* out);
  static size_t KeptFds(const PidState& state);

  std::string proc_root_;
  int status_every_;
  long page_size_ = 0;
  long clock_tick_hz_ = 0;  // sysconf(_SC_CLK_TCK): /proc/PID/stat times are in these ticks
  size_t kept_fds_ = 0;
  size_t max_kept_fds_;
  std::unordered_map<int, PidState> pids_;
  FileReader file_;
  std::vector<std::string_view> fields_;
};

}  // namespace strata::recorder
