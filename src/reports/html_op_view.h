// The op-table parts of the HTML report's view (html_view.h), for jobs recorded as op tables (rows with
// kSliceOpLayout: one row per op of a (step, dp rank, stage) worker, times relative to each step's start):
//  - compute: per rank index and step index, the sum of the rank's compute op durations in that step
//    (forward-compute, backward-compute, optimizer, gc: the op types whatif::IsCommunication says are not
//    communication; op types the what-if does not know are left out). It replaces "time outside collectives",
//    which is the step time for op tables (they have no collective calls of the trace kind).
//  - KS (KAIR): per rank, the sample of its compute op durations; the pairwise KS distance between ranks
//    (up to kMaxKsGroups ranks, else consecutive ranks pooled into at most kMaxKsGroups groups) and each rank's
//    score as the trace path defines it (straggler.h): mean KS distance to the other ranks up to 64 ranks,
//    else the distance to the pooled sample of all ranks.
//  - timeline: the worst step (largest spread of compute time: max − median) for the culprit rank (the top
//    finding's rank, else the first straggler, else the rank with the most compute in the step) and its
//    peers (for a finding about a group of ranks and no single one, a slow stage: the ranks outside the group;
//    else the other dp ranks of its pipeline stage; else the fastest, median and slowest other ranks), each
//    row with its compute ops, communication ops and the culprit op type's ops (the top finding's op, else the
//    compute op type the culprit rank exceeds its peers in most); the chain: the culprit rank's instance of
//    that op (by order within the step) that exceeds its peers' median of the same instance most, and the same
//    instance on every peer.
// Invariants: matrices are ranks × steps with NaN (null in JSON) where a rank lacks the step; the timeline
// holds at most kMaxTimelineRows rows and kMaxIntervals intervals per kind per row; every row has ops.
#pragma once

#include <nlohmann/json.hpp>
#include <vector>

#include "analysis/diagnosis/result.h"
#include "model/job_model.h"
#include "store/trace_store.h"

namespace strata {

inline constexpr size_t kMaxKsGroups = 64;

/// Per rank index and step index (of job.steps.steps): the rank's compute time in ns, NaN where it lacks
/// the step; empty when the store has no op-table rows of a known compute type.
std::vector<std::vector<double>> OpTableComputeNs(const TraceStore& store, const std::vector<SliceRows>& rows_by_rank,
                                                  const model::JobModel& job);

/// {"of", "labels", "matrix", "score"} of the KS divergence described above; null with fewer than 2 ranks.
nlohmann::ordered_json OpTableKs(const TraceStore& store, const std::vector<SliceRows>& rows_by_rank);

/// The timeline of the worst step `step_index` described above; null when the step has no ops to draw.
nlohmann::ordered_json OpTableTimeline(const TraceStore& store, const std::vector<SliceRows>& rows_by_rank,
                                       const model::JobModel& job, const diagnosis::DiagnosisResult& result,
                                       const std::vector<std::vector<double>>& compute, size_t step_index);

}  // namespace strata
