// RecordedCollectiveCalls: a recording's collective calls, per rank process, decoded once from the segment's
// entry and return rows by importers/recorded_calls.h, for the model's collective progress
// (model/collective_progress.h: sequence numbers, states, the stall). What a probe is (the NCCL profiler
// plugin's enqueue/start/done, c10d's process-group method, gloo's blocking algorithm, NCCL's API), the bytes
// gloo's algorithm was given and each call's return are read here; no row, probe id or segment type appears.
// Times are Unix nanoseconds (each segment's monotonic clock put on the wall clock by its header).
// Invariants: `processes` holds each ranked process with at least one call row (of any probe: a process whose
// probed calls are none of a collective's is listed with no calls), in (segment, pid) order; its `calls` are in
// entry-time order (ties in row order); c10d calls entered before the recorder had every probe attached are left out
// (their gloo algorithm may have run unseen, so pairing them in order would give every later call its successor's
// algorithm); `returned_unix_ns` is 0 for a call that had not returned.
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace strata {

/// Which probe saw a call.
enum class RecordedCallSource : uint8_t {
  kPluginEnqueue,  // the NCCL profiler plugin: a collective enqueued on communicator `comm` (its commHash)
  kPluginStart,    // ... its kernel started on the device
  kPluginDone,     // ... its kernel completed
  kC10d,           // a c10d process-group method (`comm`: the process group object); returns at enqueue
  kAlgorithm,      // a blocking gloo algorithm: returns when the collective completed
  kNcclApi,        // NCCL's API (ncclAllReduce...): returns at launch
};

struct RecordedCall {
  RecordedCallSource source = RecordedCallSource::kC10d;
  std::string op;      // "all_reduce", "send", ... as the probe catalog names it
  uint64_t comm = 0;   // the communicator's key in the process (see the source); 0 when the probe has none
  uint64_t count = 0;  // elements, where the probe reads them; else 0
  uint64_t bytes = 0;  // kAlgorithm: the buffer bytes gloo was given (importers/gloo_buffer_bytes.h); else 0
  uint32_t tid = 0;
  int64_t entered_unix_ns = 0;
  int64_t returned_unix_ns = 0;  // 0: not returned within the recording
};

/// One ranked process's collective calls and how its recording ended for it.
struct RecordedRankCalls {
  int32_t rank = -1;
  uint32_t pid = 0;
  size_t segment = 0;     // index of its segment in the recording
  bool launched = false;  // the recorder started the job (saw every collective from the first)
  std::vector<RecordedCall> calls;
  int64_t segment_end_unix_ns = 0;  // the segment's end: the recorder's end record, else its latest row
  std::optional<int64_t> exited_unix_ns;
  std::optional<int> exit_code, exit_signal;
};

struct RecordedCollectiveCalls {
  std::vector<RecordedRankCalls> processes;
  std::set<int32_t> ranks_seen;       // ranks with a process in the recording (calls or not)
  std::optional<int32_t> world_size;  // from the processes' WORLD_SIZE or the plugin's communicators
  int64_t end_unix_ns = 0;            // the latest segment end; 0 for no segment
  size_t segments = 0;                // how many segments the recording has
};

}  // namespace strata
