// Which thread holds the lock a sleeping thread waits for, read from the futex it waits on: the system call
// and its first two arguments from /proc/PID/task/TID/syscall, the lock's words from the process's memory.
// Two lock layouts name their owner, and only those are believed:
//  - a priority-inheritance futex (FUTEX_LOCK_PI, LOCK_PI2): the futex word holds the owner's tid;
//  - glibc's pthread mutex (FUTEX_WAIT / WAIT_BITSET on a word of 1 or 2, "locked" and "locked, waiters"):
//    the mutex's __owner field, 8 bytes after the word (x86-64 and aarch64 glibc layout).
// Invariant: a tid is returned only when it is another live thread of the same process; anything else (a
// semaphore such as CPython's threading.Lock, whose word is 0 while waited on, a condition variable, an
// unreadable word) is "unknown" (nullopt), never a guess.
#pragma once

#include <optional>
#include <string>

namespace strata::recorder {

/// The tid of the thread of `pid` that holds the lock thread `tid` is blocked on now; nullopt when `tid`
/// is not in a futex wait or the owner cannot be read. `proc_root` for tests.
std::optional<long> LockOwnerOf(int pid, long tid, const std::string& proc_root = "/proc");

}  // namespace strata::recorder
