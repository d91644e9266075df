// RecordedRun: what `strata record` wrote for a job (one or more segment files), indexed for analysis:
// processes with their ranks, probes and counter series by id, stacks, and the raw rows (no JSON: the meta
// records are read once, when a segment is indexed: importers/segment_index). Built by the job loader beside the
// TraceStore of the profiler traces of the same run. Holds the store's own row types (store/recorded_rows.h),
// nothing of the file format (segments/ is above the store).
// Invariants: a process's rank comes from its own environment (RANK, or SLURM_PROCID, OMPI_COMM_WORLD_RANK,
// PMI_RANK) as the recorder read it, or from its
// nearest ancestor that has one (a DataLoader worker belongs to its rank); processes of different
// segment files are kept apart by (segment, pid).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "store/probe_kind.h"
#include "store/recorded_rows.h"
#include "store/stack_frames.h"

namespace strata {

struct RecordedProcess {
  int pid = 0, ppid = 0;
  std::optional<int> rank;  // own or inherited
  std::string comm;
  std::string cgroup;
  uint64_t first_seen_ns = 0, exited_ns = 0;
  std::optional<int> exit_code;                // exited: its exit code (a normal exit)
  std::optional<int> exit_signal;              // exited: the signal that killed it
  std::optional<int> world_size;               // its WORLD_SIZE (or the launcher's equivalent), when set
  std::optional<int> local_rank;               // its LOCAL_RANK (or the launcher's equivalent), when set
  std::optional<std::string> visible_devices;  // its CUDA_VISIBLE_DEVICES, when set
};

// A main thread the recorder found off CPU for a second or more ("thread_state" meta record): since when,
// its scheduler state (1 sleeping, 2 uninterruptible), the system call it waited in (number, as
// /proc/PID/syscall says; "" unknown), the kernel function (wchan), and where it went to sleep (stack ids of
// the "stack" records, -1 none; py_stack: a "py_stack" record of pid, -1 none). ts_ns: when it was seen.
struct RecordedThreadState {
  uint32_t pid = 0, tid = 0;
  uint64_t ts_ns = 0, since_ns = 0;
  uint32_t state = 0;
  std::string syscall, wchan;
  int32_t user_stack = -1, kernel_stack = -1, py_stack = -1;
  std::string comm;         // the thread's name (other threads of a stuck rank; "" for its main thread)
  uint32_t lock_owner = 0;  // the thread of pid holding the lock it waits on (recorder/lock_owner.h), 0 unknown
  bool since_before_attach = false;  // asleep since before the recorder attached: since_ns unknown (0)
};

// A communicator the NCCL profiler plugin saw a process join ("communicator" meta record).
struct RecordedCommunicator {
  uint64_t comm = 0;
  int nranks = 0, rank = -1;
  uint32_t pid = 0;
};

struct RecordedProbe {
  std::string symbol, op;
  ProbeKind kind = ProbeKind::kUnknown;
  std::string library;
};

struct RecordedSeries {
  std::string name;
  int pid = -1;
  int index = -1;
  std::string label, unit;
  bool cumulative = false;
};

struct RecordedSegment {
  RecordedRows data;                         // the rows; the meta records are read into the members below when indexed
  std::map<int, RecordedProcess> processes;  // by pid
  std::vector<RecordedProbe> probes;         // by probe id
  std::vector<RecordedSeries> series;        // by series id
  std::map<int, std::string> other_processes;  // pid -> comm of processes outside the job that took CPUs
  int recorder_pid = 0;                  // the recorder itself (its own CPU use is not another process's contention)
  bool finished = false;                 // the closing "recording" record was written: the recorder stopped cleanly
  bool launched = false;                 // the recorder started the command (saw every process from its start)
  std::string source = "strata record";  // or "nccl_profiler": written by the NCCL plugin inside a rank
  std::string host;                      // the host it was recorded on, when the segment says
  std::vector<std::string> gaps;         // what the recorder could not write (disk full), as sentences
  uint64_t dropped_events = 0;
  size_t meta_records = 0;         // how many meta records the file held
  double sample_hz = 0;            // the recorder's CPU sampling rate (its "recording" record), 0 when not said
  std::string stats_record;        // the recorder's "stats" record (events, drops, its own CPU time) as JSON text, for
                                   // reports to echo; "" when the segment has none
  std::vector<std::string> notes;  // the recorder's own notes (probes it could not attach, ...)
  std::vector<RecordedThreadState> thread_states;  // in file order
  std::vector<RecordedCommunicator> communicators;
  uint64_t end_ns = 0;         // when the recorder stopped (its "stats" record), 0 when it did not say
  uint64_t alive_ns = 0;       // the last "alive" record of a writer that says it still runs (the NCCL plugin)
  uint64_t attached_ns = 0;    // when every program and probe was attached (the recorder's "attached" record);
                               // rows before it may miss their partners (a call whose algorithm ran unprobed)
  UserStacks user_stacks;      // the symbolized user stacks of the meta records, by (pid, id), indexed once
  PythonStacks python_stacks;  // the Python stacks of the meta records, by (pid, id), indexed once

  // The rank of a process (nullopt when it is not part of a rank, e.g. the launcher).
  std::optional<int> RankOf(uint32_t pid) const;
  // Each CPU sample's Python stack id, by (tid, ts_ns): the recorder writes a py_sample row with the thread
  // and timestamp of the CPU sample it was taken with (the one rule for pairing them). O(n log n) to build.
  std::map<std::pair<uint32_t, uint64_t>, int32_t> PythonStackOfSamples() const;
  // A time of this segment's tables (CLOCK_MONOTONIC ns) on the Unix clock, and back, by the header's offset;
  // clamped to [0, 2^62] so that a damaged header or row cannot overflow the differences taken later.
  int64_t UnixNs(uint64_t mono_ns) const;
  uint64_t MonoNs(int64_t unix_ns) const;
  // When process `p` exited, on the Unix clock; nullopt while it had not (its exit record not yet written).
  std::optional<int64_t> ExitedUnixNs(const RecordedProcess& p) const;
  // When a thread state's sleep began, in Unix seconds; 0 when unknown (asleep since before the attach).
  double SinceUnixS(const RecordedThreadState& t) const;
};

struct RecordedRun {
  std::vector<RecordedSegment> segments;
  bool empty() const { return segments.empty(); }
  /// The rank of process `pid` in whichever segment saw it; nullopt when none did, or when segments (hosts)
  /// disagree (the same pid on two hosts).
  std::optional<int> RankOfPid(int64_t pid) const;
};

/// A recording of one process tree in which no process has a rank variable (single-process training under
/// `strata record -- python3 train.py`): its root, the one recorded process whose parent was not recorded,
/// becomes rank 0 and every process descending from it inherits that. Returns the root's pid, or nullopt when
/// the segment already has a rank or holds several roots (left as they are). For offline readers of a whole
/// recording; the agent watches ranks it was given.
std::optional<int> TakeRootAsRankZero(RecordedSegment* seg);

// Folds each NCCL profiler plugin segment into the `strata record` segment of the same host that saw its
// process (its probes appended, its call rows renumbered to them), so that one rank's device-side
// collectives and its host-side recording are one recording. A plugin segment no recorder segment claims
// stays a recording of its own.
void MergePluginSegments(RecordedRun* run);

}  // namespace strata
