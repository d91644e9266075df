// Recording as a trace source: builds the TraceStore of a job from what `strata record` wrote alone (no
// profiler ran), so that the same model and analysis passes read it (issue 12: production jobs do not run
// the PyTorch profiler). Per rank (processes with a rank variable; a rank's main process is the one that
// made its collective calls), per segment file (one host):
//  - its collective calls as CPU collective ops on the calling thread (gloo's blocking algorithms
//    `gloo:<op>`, else NCCL's enqueue calls `nccl:<op>`, else c10d's): entry = arrival, exit − entry = wait;
//    a gloo algorithm whose buffers' bytes are known (gloo_buffer_bytes.h) carries them as collective
//    arguments (dtype uint8, in_nelems = bytes), as a trace's args would;
//  - its main thread's on-CPU intervals (between recorded off-CPU intervals, and before the first and after the
//    last as far as its samples and its exit show it on CPU) as compute slices "on-CPU",
//    each holding one slice per stack sample, named by the sample's culprit frame (frame.h), so that an
//    op excess names a function;
//  - the main thread's waits that another process of the same rank ended (its DataLoader workers) as
//    data-loading slices "DataLoader: waiting for a worker process";
//  - one annotation spanning the main thread's recorded life, so that the model takes it as the training
//    loop's thread.
// Steps are not invented here: the model finds them in the collective sequence (step_rhythm.h).
// Times stay on each host's CLOCK_MONOTONIC; the model aligns hosts by collectives.
// Invariants: one InputInfo per segment (format "strata-recording"), one RankInfo per (segment, rank);
// calls whose probe id is unknown or whose end precedes their start are skipped and counted by reason.
#pragma once

#include "core/status.h"
#include "store/recorded_run.h"
#include "store/trace_store.h"

namespace strata {

/// Builds `store` from `run`. An error when no segment holds a process with a rank.
Expected<TraceStore> TraceStoreFromRecording(const RecordedRun& run);

}  // namespace strata
