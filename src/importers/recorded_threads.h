// The one decoder of where a recording's ranked processes were (store/recorded_threads.h), which the stall
// analysis reads instead of the rows: each process's exit, its threads' states, its main thread's off-CPU
// intervals and CPU samples, with their native and Python stacks named here, once (store/stack_frames.h).
#pragma once

#include "store/recorded_run.h"
#include "store/recorded_threads.h"

namespace strata {

/// The threads of every ranked process of every segment of `run`. O(rows log rows) for the rows of ranked
/// processes, plus the naming of each distinct stack they reference once.
RecordedThreads DecodeRecordedThreads(const RecordedRun& run);

}  // namespace strata
