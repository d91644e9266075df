// StepSummaries: how each completed step of each rank in a recording's window is reduced to a RankStepSummary
// (issue 13, item 1), for the online detection and the Redis stream (the agent calls it each round; analysis
// owns it so that the agent reads the analysis' product, not the passes it is measured with). From the window's
// store (importers/recording_trace.h) and its job model: the step's span on the rank's clock (step_s),
// the rank's collective calls in it (wait_s: arrival to exit, so waiting for peers and transferring), and
// its training thread's time by class as window_profile.h splits it: on-CPU compute, data loading waits
// (io_s) and time covered by none of those. From the recording's layers in the store (RecordedLayers), over the same
// span, as the cross-layer pass measures it (cross_layer.h: MeasureRankLayers): run-queue waits behind processes
// outside the job (runq_s), cgroup throttled time (throttled_s) and Python GC pauses (gc_s). So that each class is
// counted once, GC pauses (on the CPU) are taken out of oncpu_s and every run-queue wait (off the CPU) out
// of offcpu_other_s (off the CPU for another reason).
// Steps are numbered by the job's own sequence on this node: the window's step numbers restart each round
// (they come from the collective rhythm of the window), so a cursor per job keeps the end of the last step
// emitted (on the first rank's clock) and the next number. A step is one the model matched on every rank of
// the window; it is emitted once, for all ranks together (so the node's ranks stay aligned), when a later
// step has started (it is complete) and most of it lies after the cursor (the boundaries found in the
// next round's window may move a little).
// Each summary carries its step's start on the wall clock (the recording's CLOCK_MONOTONIC plus its first
// segment header's realtime offset), by which serve lines up nodes whose counts started at different steps.
// Invariants: each (rank, step) is emitted once; summaries of a rank come in increasing step order.
#pragma once

#include <cstdint>
#include <vector>

#include "analysis/online/step_summary.h"
#include "store/trace_store.h"

namespace strata::online {

struct StepCursor {
  int64_t emitted_end_ns = INT64_MIN;  // end of the last step emitted (the store's first rank's clock)
  int64_t next_step = 0;
};

/// The completed steps of `store` (a recording's, with its RecordedLayers) not emitted before `cursor`
/// (updated), one summary per rank and step.
std::vector<RankStepSummary> SummarizeNewSteps(const TraceStore& store, StepCursor* cursor);

}  // namespace strata::online
