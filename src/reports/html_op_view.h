// The op-table parts of the HTML report's view (html_view.h), for jobs recorded as op tables (rows with
// kSliceOpLayout: one row per op of a (step, dp rank, stage) worker, times relative to each step's start). It
// renders what the diagnosis measured for it (DiagnosisResult::drawn, drawn_facts.h) and computes none of it:
//  - timeline: the diagnosis's step, late rank, peers, culprit op and chain instance (op_timeline_facts.h),
//    each row with the rank's compute ops, communication ops and the culprit op type's ops in the step; the
//    chain's instance on every row, and the late rank's duration of it against its peers' median.
// Invariants: the timeline holds at most kMaxTimelineRows rows and kMaxIntervals intervals per kind per row;
// every row has ops; no figure shown is computed here.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <vector>

#include "analysis/diagnosis/result.h"
#include "model/job_model.h"
#include "store/trace_store.h"

namespace strata {

/// The timeline of `facts` described above; null when the diagnosis names no late rank or the step has no ops to
/// draw.
nlohmann::ordered_json OpTableTimeline(const TraceStore& store, const std::vector<SliceRows>& rows_by_rank,
                                       const model::JobModel& job, const diagnosis::TimelineFacts& facts);

}  // namespace strata
