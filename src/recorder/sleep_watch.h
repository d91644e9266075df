// SleepWatch: threads asleep since before the recorder attached. The BPF program learns when a thread goes
// off CPU at its switch, so a thread that went to sleep before the attach (a rank stuck on a lock before the
// agent switched its flight recorder to a new chunk, or before `strata record --pid` was pointed at a hung
// job) never switches again and has no off-CPU start. SleepWatch reads the thread's scheduler state and CPU
// time from /proc each time it is asked: a thread in S or D whose CPU time has not moved for min_ns since
// the watch first saw it so has been asleep at least that long; since when before that, nothing says.
// It also says which observation is the first to find a sleep min_ns long, so each sleep is reported once.
// Invariants: a thread that ran (its CPU time moved), is not asleep, or could not be read starts over (its
// next sleep is another, reported afresh); of the observations finding one sleep, exactly the first is fresh.
#pragma once

#include <cstdint>
#include <map>
#include <optional>

namespace strata::recorder {

class SleepWatch {
 public:
  // A thread's scheduler state letter ('R', 'S', 'D', ...) and its time on CPU (ns), as /proc shows them.
  struct Seen {
    char state = '?';
    uint64_t cpu_ns = 0;
  };
  // A thread asleep for min_ns or more: its state as thread_state records write it (1 sleeping, 2
  // uninterruptible), and since when the watch has seen it so (the key of one report per sleep).
  struct Asleep {
    uint32_t state = 0;
    uint64_t watched_since = 0;
    bool fresh = false;  // the first observation to find this sleep min_ns long: the one to report
  };

  // /proc/PID/task/TID/stat's state and schedstat's CPU time; nullopt when the thread is gone or unreadable.
  static std::optional<Seen> Read(int pid, long tid);

  // Feeds what `tid` looks like at `now` (nullopt: unreadable) and says whether it has been asleep for min_ns.
  std::optional<Asleep> Observe(long tid, const std::optional<Seen>& seen, uint64_t now, uint64_t min_ns);

 private:
  struct Watch {
    uint64_t cpu_ns = 0, since = 0;
    bool reported = false;  // an observation found this sleep min_ns long already
  };
  std::map<long, Watch> watched_;
};

}  // namespace strata::recorder
