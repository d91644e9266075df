// The op-table part of the HTML report's timeline (drawn_facts.h, TimelineFacts), as the analysis measures it
// for the step and late rank MeasureTimeline chose:
//  - the peers: for a finding about a group of ranks and no single one (a slow stage), the ranks outside the
//    group; else the other dp ranks of the late rank's pipeline stage; else all other ranks; of those that
//    have the step, all up to kMaxTimelineRows − 1 for a stage's peers, else the fastest, median and slowest
//    (spread over the peers' compute times in the step);
//  - the culprit op type: the top finding's op when it names an op type the what-if knows, else the compute op
//    type whose sum in the step on the late rank exceeds the peers' median sum (PeerMedian) most;
//  - the chain: the late rank's instance of the culprit op (its order within the step, by start) that exceeds
//    the peers' median duration of the same instance most.
// Invariant: reads the store, the result and the facts, changes none of them.
#pragma once

#include <vector>

#include "analysis/diagnosis/result.h"
#include "model/job_model.h"
#include "store/trace_store.h"

namespace strata::diagnosis {

/// Fills the op-table fields of `timeline` (its step_index and late_rank set) from facts.busy_ns (compute
/// times); leaves them empty without a late rank.
void MeasureOpTimeline(const TraceStore& store, const std::vector<SliceRows>& rows_by_rank, const model::JobModel& job,
                       const DiagnosisResult& result, const DrawnFacts& facts, TimelineFacts* timeline);

}  // namespace strata::diagnosis
