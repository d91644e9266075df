// Where one rank's process was over an interval of a recording (for a stall: from the last completed
// collective to the end of the stall), from the best evidence the recording has, in this order:
//  1. its exit, when the process ended before the interval's end ("exited with code 1", "killed by signal
//     9 (KILL)"), with the last Python stack seen on its main thread;
//  2. a "thread_state" record of its main thread (written by the recorder for a thread off CPU for a
//     second or more): the state (rank_state.h) from the system call it waits in (futex: "blocked on a lock
//     (futex)"; read, poll, recv...: "waiting for I/O"; nanosleep: "sleeping"; uninterruptible: "in
//     uninterruptible I/O (D state)"), the native and Python stacks it went to sleep in, and the thread
//     holding the lock it waits on when the lock names its owner (a pthread mutex: recorder/lock_owner.h);
//  3. an off-CPU interval of its main thread covering most of the interval, with its Python stack;
//  4. CPU samples of its main thread in the interval: "on CPU (spinning)" in the most sampled stack.
// Otherwise the state says nothing was observed. Frames are named as everywhere (store/stack_frames.h), by the
// decoder of the recording's threads (importers/recorded_threads.h); no row of the recording is read here.
// Beside it, the rank's other threads the recorder found off CPU for a second or more while the main thread
// was stuck (their thread_state records: name, state, since when, Python frames), the lock's owner first, then
// the busy ones (not idle in a futex, poll, epoll or select wait: e.g. the thread holding the lock, asleep).
#pragma once

#include <cstdint>
#include <map>

#include "analysis/diagnosis/evidence.h"
#include "store/recorded_threads.h"

namespace strata::diagnosis {

/// Locates ranks of one recording, from its decoded threads.
class RankLocator {
 public:
  explicit RankLocator(const RecordedThreads& threads) : threads_(threads) {}
  /// The whereabouts of process `pid` of segment `segment` over [from_unix_ns, to_unix_ns]; `rank` is copied
  /// into the result.
  StalledRankState Locate(size_t segment, uint32_t pid, int32_t rank, int64_t from_unix_ns, int64_t to_unix_ns) const;

 private:
  const RecordedThreads& threads_;
};

/// The state a blocked thread is in, from its system call number (x86-64, as /proc/PID/syscall gives it), its
/// kernel wait function and its scheduler state (2 = uninterruptible).
RankState BlockedState(const std::string& syscall, const std::string& wchan, uint32_t state);
/// Whether that wait is what an idle pool thread does (a futex, poll, select or epoll wait, not
/// uninterruptible): such threads are listed after the busy ones.
bool IsIdleWait(const std::string& syscall, uint32_t state);

}  // namespace strata::diagnosis
