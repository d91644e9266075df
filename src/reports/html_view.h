// The per-rank data the HTML report draws beside the diagnosis JSON (which has no per-rank × step data):
// the job's model (steps, step windows, collectives, clock offsets) and what the diagnosis measured for the
// report (DiagnosisResult::drawn, drawn_facts.h), rendered; it computes no comparison of ranks itself.
//  - step_ms[rank index][step index]: the step window's length on that rank; busy_ms: the diagnosis's busy time
//    (rank_step_busy.h: the time outside the rank's collective calls of that step); lateness_ms: the
//    diagnosis's lateness against peers at collectives when it has it (data-parallel trace path).
//    An op table (html_op_view.h) has compute_ms instead of busy_ms (the sum of the rank's compute ops per
//    step), and its timeline (kind "op_table") draws the culprit rank's ops beside its peers' same ops.
//  - ks: KAIR's KS divergence between the ranks as the diagnosis measured it (html_ks_view.h), null without.
//  - layers: {"finding": the index of the finding the layers panel draws, "peers_median": its peers' median of
//    each layer metric, keyed as the evidence's cross_layer} (DrawnFacts::layers), null without a recording's
//    layer comparison.
//  - stages[rank index]: the pipeline stage when the job has several, else null; the heatmap groups its rows.
//  - timeline: the diagnosis's step and late rank (timeline_facts.h) for a bounded set of ranks (all of them up
//    to 16, else the stragglers, their neighbours and the fastest/median/slowest ranks: a choice of rows to
//    draw, no figure shown), on the aligned clock in ms from the step's first start; with the top finding's
//    culprit op on the late rank, the collective it arrived latest at (the blame chain) and its time outside
//    collectives in that step against its peers' median ("compare"), both as the diagnosis measured them.
// Invariants: every matrix is ranks × steps with null where a rank lacks a step; the timeline holds at most
// kMaxTimelineRows rows and kMaxIntervals intervals per row, so the page stays small at any world size.
#pragma once

#include <nlohmann/json.hpp>

#include "analysis/diagnosis/result.h"
#include "store/trace_store.h"

namespace strata {

inline constexpr size_t kMaxTimelineRows = diagnosis::kMaxTimelineRows;
inline constexpr size_t kMaxIntervals = 400;

/// The view described above; an object with empty arrays when the store has no steps.
nlohmann::ordered_json BuildReportView(const TraceStore& store, const diagnosis::DiagnosisResult& result);

}  // namespace strata
