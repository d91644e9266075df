// KAIR's KS divergence of an op table's ranks (drawn_facts.h, KsDivergence): per rank, the sample of its
// compute op durations (rank_step_busy.h's compute ops); the pairwise KS distance between ranks (up to
// kMaxKsGroups ranks, else between consecutive ranks pooled into at most kMaxKsGroups groups) and each rank's
// score as the trace path defines it (straggler.h): its mean KS distance to the other ranks up to kMaxKsGroups
// ranks, else its distance to the pooled sample of all ranks.
// Invariant: the matrix is symmetric with a zero diagonal; none with fewer than 2 ranks.
#pragma once

#include <optional>
#include <vector>

#include "analysis/diagnosis/drawn_facts.h"
#include "store/trace_store.h"

namespace strata {

/// The divergence described above, none with fewer than 2 ranks.
std::optional<diagnosis::KsDivergence> OpTableKs(const TraceStore& store, const std::vector<SliceRows>& rows_by_rank);

}  // namespace strata
