// KAIR's KS divergence of an op table's ranks (drawn_facts.h, KsDivergence): per rank, the sample of its
// compute op durations (rank_step_busy.h's compute ops), scored and grouped by the one KS rule
// (ks_divergence.h) among the ranks of its pipeline stage when stages are given, else among all ranks.
// Invariant: reads the store, changes nothing; none with fewer than 2 ranks.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "analysis/diagnosis/drawn_facts.h"
#include "store/trace_store.h"

namespace strata {

/// The divergence described above (`stages`: one per rank index, or empty), none with fewer than 2 ranks.
std::optional<diagnosis::KsDivergence> OpTableKs(const TraceStore& store, const std::vector<SliceRows>& rows_by_rank,
                                                 const std::vector<int32_t>& stages);

}  // namespace strata
