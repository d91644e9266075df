// KAIR's KS divergence between ranks (drawn_facts.h, KsDivergence): the one rule for a rank's KS score, which
// the trace path's straggler localization weighs (straggler.h) and the reports draw, and the one way the
// reports' KS matrix is measured from the ranks' samples.
//  - A rank's score is measured among its peers: the ranks of its pipeline stage when stages are given, else
//    all ranks. With at most kMaxKsGroups peers (itself included), its mean KS distance to each other peer;
//    beyond that, its KS distance to the peers' samples pooled (its own included): linear in the ranks.
//  - The matrix's groups: the ranks ordered by stage (when given) then index, cut into groups of at most
//    ceil(ranks / kMaxKsGroups) ranks that never span two stages (the HTML heatmap's grouping); the matrix
//    holds the KS distance between the groups' pooled samples.
//  - Each group's lead is its rank of highest score (ties: the slower by its median sample, then the lower
//    index); the ranking orders the groups by their lead's score, highest first (ties: the slower lead by its
//    median sample, then the group's order).
// Invariants: the matrix is square, symmetric, with a zero diagonal and every entry in [0, 1]; every rank index
// is in exactly one group; scores are in [0, 1]; the ranking is a permutation of the groups.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "analysis/diagnosis/drawn_facts.h"

namespace strata::diagnosis {

/// Each rank's score over its sorted samples (`sorted[r]`, ascending), among the peers `stages` gives (one
/// stage per rank index; empty: all ranks are peers). A rank without samples, or without a peer, scores 0.
std::vector<double> KsScores(const std::vector<std::vector<double>>& sorted, const std::vector<int32_t>& stages);

/// The divergence of ranks with sorted samples `sorted`, scored `score` (KsScores), grouped by `stages` (empty:
/// one stage); `of` and `peers` say what was measured. None with fewer than 2 ranks or no sample at all.
std::optional<KsDivergence> KsDivergenceOf(const std::vector<std::vector<double>>& sorted, std::vector<double> score,
                                           const std::vector<int32_t>& stages, KsSample of, KsPeers peers);

}  // namespace strata::diagnosis
