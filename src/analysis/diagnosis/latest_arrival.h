// Where a late rank arrived latest in a step: per step, the matched collective (of the job's model) at which
// the rank's arrival minus its peers' median arrival (PeerMedian, peer_difference.h: the rank's lateness
// against its peers, straggler.h) is largest, on the diagnosis's clock offsets. The Perfetto export draws a
// finding about the rank in that step there, with its blame arrows to the peers' calls of that instance; the
// HTML timeline draws it as the blame chain's collective.
// Invariants: only instances the rank and at least one other rank have count; a step none of which the rank
// shares with a peer is absent; ties keep the earliest instance (matched order).
#pragma once

#include <cstdint>
#include <map>
#include <vector>

#include "model/job_model.h"
#include "store/trace_store.h"

namespace strata::diagnosis {

/// Per step, the index in job.collectives.matched of the instance where rank index `rank` arrived latest
/// against its peers' median arrival; `offset_ns[r]`: rank index r's clock offset (aligned = time − offset).
std::map<int64_t, size_t> LatestArrivals(const model::JobModel& job, size_t rank,
                                         const std::vector<int64_t>& offset_ns);

}  // namespace strata::diagnosis
