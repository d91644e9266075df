// StallReports: which observation of a rank's stall is the first. The recorder looks at each rank's main thread
// every second; one off CPU for long enough is stalled, and its thread_state record is written once per stall,
// the stall known by the off-CPU start the BPF program took at the switch. Later passes of the same stall look at
// the process's other threads again without writing the main thread's record twice.
// Invariants: of the observations of one (process, off-CPU start), exactly the first is fresh; a new off-CPU start
// of the same process is another stall, fresh again; processes are independent.
#pragma once

#include <cstdint>
#include <map>

namespace strata::recorder {

class StallReports {
 public:
  // Whether the stall of `pid` that began off CPU at `off_cpu_start` is seen here for the first time (remembered
  // from now on).
  bool Fresh(int pid, uint64_t off_cpu_start) {
    auto [it, inserted] = reported_.try_emplace(pid, off_cpu_start);
    if (inserted) return true;
    if (it->second == off_cpu_start) return false;
    it->second = off_cpu_start;
    return true;
  }

 private:
  std::map<int, uint64_t> reported_;  // process -> the off-CPU start its last fresh stall had
};

}  // namespace strata::recorder
