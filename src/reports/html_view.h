// The per-rank data the HTML report draws beside the diagnosis JSON (which has no per-rank × step data):
// built from the job's model (steps, collectives, clock offsets), never changes the JSON contract.
//  - step_ms[rank index][step index]: the step window's length on that rank; busy_ms: the same minus the
//    rank's time in collective calls of that step (the time it was not waiting for others); lateness_ms:
//    the diagnosis's lateness against peers at collectives when it has it (data-parallel trace path).
//    An op table (html_op_view.h) has compute_ms instead of busy_ms (the sum of the rank's compute ops per
//    step; its busy time would be its step time) and ks (KAIR's KS divergence of the ranks' compute op
//    durations), and its timeline (kind "op_table") draws the culprit rank's ops beside its peers' same ops.
//  - stages[rank index]: the pipeline stage when the job has several (op table column or send/recv chains),
//    else null; the heatmap groups its rows by it.
//  - timeline: the worst step (largest spread of busy time, or compute time, over ranks) for a bounded set of ranks
//  (all of
//    them up to 16, else the stragglers, their neighbours and the fastest/median/slowest ranks), on the
//    aligned clock in ms from the step's first start; with the top finding's culprit op on the straggler
//    and the collective it arrived last at (the blame chain), and its time outside collectives in that step
//    against its peers' median ("compare": the other ranks of its stage when stages are known, else all others).
// Invariants: every matrix is ranks × steps with null where a rank lacks a step; the timeline holds at most
// kMaxTimelineRows rows and kMaxIntervals intervals per row, so the page stays small at any world size.
#pragma once

#include <nlohmann/json.hpp>

#include "analysis/diagnosis/result.h"
#include "store/trace_store.h"

namespace strata {

inline constexpr size_t kMaxTimelineRows = 16;
inline constexpr size_t kMaxIntervals = 400;

/// The view described above; an object with empty arrays when the store has no steps.
nlohmann::ordered_json BuildReportView(const TraceStore& store, const diagnosis::DiagnosisResult& result);

}  // namespace strata
