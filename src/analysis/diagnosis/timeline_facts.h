// The HTML report's timeline as the analysis measures it (drawn_facts.h, TimelineFacts): which step it draws,
// whose, and what it compares there. One place for each rule:
//  - the step: the one whose busy time (rank_step_busy.h) spreads most over the ranks (max − median; the
//    first such step; step index 0 when no rank has any);
//  - the late rank: the top finding's rank, else the first straggler, else the busiest in the step of the ranks
//    the top finding names (a slow stage's, ranks taking turns); none when the diagnosis names no rank;
//  - traces: the chain is the collective of the step the late rank arrived latest at (latest_arrival.h); its
//    busy time against the peers' median (PeerMedian) of the other ranks of its stage when stages are known,
//    else of all other ranks that have the step;
//  - op tables: op_timeline_facts.h.
// Also each rank's pipeline stage (RankStages), which the heatmap groups rows by and the comparison's peers use.
// Invariant: reads the result and the model, changes neither.
#pragma once

#include <cstdint>
#include <map>
#include <vector>

#include "analysis/diagnosis/result.h"
#include "model/job_model.h"
#include "store/trace_store.h"

namespace strata::diagnosis {

/// Pipeline stage per rank index: the op table's stage column, else the send/recv chains of a job with pipeline
/// stages (result.layout.pipeline_stages); empty when there is one stage or it is unknown.
std::vector<int32_t> RankStages(const TraceStore& store, const model::JobModel& job, const DiagnosisResult& result);

/// The timeline of `result` over `facts` (busy_ns, stages and latest_arrival filled): see above. Op tables'
/// part is filled by MeasureOpTimeline.
TimelineFacts MeasureTimeline(const TraceStore& store, const model::JobModel& job, const DiagnosisResult& result,
                              const DrawnFacts& facts);

}  // namespace strata::diagnosis
