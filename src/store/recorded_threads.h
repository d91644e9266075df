// RecordedThreads: where each ranked process of a recording was, decoded once from the segment's rows and
// meta records by importers/recorded_threads.h, for the stall analysis (analysis/diagnosis/rank_whereabouts.h:
// where a stopped rank is): its exit, the thread states the recorder wrote for threads off CPU for a second
// or more, its main thread's off-CPU intervals and CPU samples, with their stacks already named
// (store/stack_frames.h). No row, stack id or segment type appears here; the rules that turn these into a
// rank's state are analysis's.
// Times are Unix nanoseconds (each segment's monotonic clock put on the wall clock by its header).
// Invariants: segments[i] is decoded from the recording's segments[i]; a process's tables keep the order of
// the recording's rows and records; `python` and `native` fields index the process's `stacks` and
// `native_frames` (-1: none recorded or not known), `name` indexes `sample_names`.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace strata {

/// How many of a Python stack's innermost frames are named (the stall shows no more).
inline constexpr size_t kNamedPythonFrames = 8;

/// A Python stack as the stall shows it: its innermost kNamedPythonFrames frames named ("Python Net.forward
/// (train.py:42)"), innermost first, and whether it runs PyTorch's data loading code (any of its frames).
struct NamedPythonStack {
  std::vector<std::string> frames;
  bool data_loading = false;
};

/// A thread the recorder found off CPU for a second or more (a "thread_state" record), with its stacks.
struct ThreadStateRecord {
  uint32_t tid = 0;
  int64_t seen_unix_ns = 0;
  int64_t since_unix_ns = 0;         // when its sleep began; 0 when unknown (asleep since before the attach)
  bool since_before_attach = false;  // asleep since before the recorder attached
  int64_t woke_unix_ns = 0;    // the end of the off-CPU interval that began at `since` (it woke), 0 when none ended
  uint32_t state = 0;          // scheduler state: 1 sleeping, 2 uninterruptible
  std::string syscall, wchan;  // the system call it waits in (x86-64 number, "" unknown), the kernel function
  std::string comm;            // the thread's name
  uint32_t lock_owner = 0;     // the thread holding the lock it waits on, 0 unknown
  int32_t python = -1, native = -1;
};

/// An off-CPU interval of the process's main thread; `python`: the stack sampled when it came back.
struct MainThreadOffCpu {
  int64_t start_unix_ns = 0, end_unix_ns = 0;
  uint32_t state = 0;  // 0 runnable (preempted), 1 sleeping, 2 uninterruptible
  int32_t python = -1;
};

/// A CPU sample of the process's main thread, named as every report names samples (SampleName).
struct MainThreadSample {
  int64_t unix_ns = 0;
  uint32_t name = 0;
  int32_t python = -1, native = -1;
};

struct ProcessThreads {
  int32_t rank = -1;
  uint32_t pid = 0, ppid = 0;
  std::optional<int64_t> exited_unix_ns;
  std::optional<int> exit_code, exit_signal;
  int32_t python_at_exit = -1;                   // the main thread's last Python stack sampled at or before its exit
  std::vector<ThreadStateRecord> thread_states;  // of the process's threads (records of its pid, or of its main thread)
  std::vector<MainThreadOffCpu> off_cpu;
  std::vector<MainThreadSample> samples;
  std::vector<NamedPythonStack> stacks;
  std::vector<std::string> native_frames;  // each native stack's culprit frame (CulpritFrame)
  std::vector<std::string> sample_names;
};

struct RecordedThreadsSegment {
  std::map<uint32_t, ProcessThreads> processes;  // the ranked processes (a rank's DataLoader workers too), by pid
};

struct RecordedThreads {
  std::vector<RecordedThreadsSegment> segments;
  bool empty() const { return segments.empty(); }
};

}  // namespace strata
