// Straggler localization (DESIGN.md, Diagnosis 4) on a PhaseModel.
//  - Arrival lateness: in each collective instance the last rank to arrive makes the others wait; it is
//    blamed for (its arrival − the second-latest arrival). Per (step, rank): blame = sum over instances.
//    The straggler also records the shortest collective (it waits for no one): kept as evidence.
//  - A (step, rank) is late when its blame ≥ min_effect × step time. Persistence (lateness_rule.h, the one
//    rule the recording's confirmation also uses): a rank late in ≥ persistent_share of
//    the steps is a persistent straggler. Otherwise it is an intermittent one when it holds most of the
//    job's late (step, rank) pairs and its clearly late steps (≥ 60 % of its worst lateness) include three
//    late by ≥ 2 × min_effect, or two late by ≥ 4 × min_effect; it is reported with its clearly late steps,
//    and with those of its lateness against the peers (below) when that measure, judged by the same rule
//    against its own peers' worst, makes a cluster too: blame is only the lead over the second-latest, and a
//    fault that also slows a rank sharing the core under-reads there (8-rank CPU contention, held-out run at
//    e62086a: blame of 46, 35 and 12.5 ms in its three steps; in the third the fault rank was ~41 ms behind
//    the peers' median and the second-latest, a victim, ~28).
//    ("Holds most" counts late pairs, or weighs them: its clearly late steps carry ≥ 2/3 of the job's lateness.) Two
//    moderate hiccups of one rank are what a loaded machine produces by itself (seen in clean recorded runs). A rank
//    late in most steps is intermittent too when such a cluster (fewer than persistent_share of the steps) stands far
//    above its other late steps (their mean lateness under a fifth of the cluster's): a fault switched on in some
//    steps, with small after-effects in the next ones.
//  - Lateness against the peers: per step, the sum over collective instances of the rank's arrival minus the
//    median arrival of the other ranks. Unlike last-arrival blame it stays large when several ranks are
//    slowed alike (they hide each other there, and the slowest of them changes from step to step), so the
//    recorder's cross-layer pass can confirm a cause it sees on several ranks (cross_layer.h), and:
//  - Ranks slowed alike: when blame names no straggler, the same persistence rule is applied to each rank's
//    lateness against its peers, late from kSlowedAlikeLateMultiple x min_effect of the step (that measure
//    carries half the peers' arrival spread); when at least kMinSlowedAlikeRanks ranks are persistently late by it
//    (e.g. the ranks on a slower core or socket), they are the stragglers (`slowed_alike`), their late steps and
//    lateness are that measure's. Not a verdict of ranks taking turns (data_imbalance.h): the same ranks are behind in
//    most steps. Needs lateness against the peers (the flat data-parallel path).
//  - A rank behind its peers: when neither names a straggler, the rank that is the latest against its peers'
//    median by min_effect in persistent_share of the steps is a persistent straggler, judged by that measure
//    (`behind_peers`). Last-arrival blame is only the lead over the second-latest: on a busy 8-rank job a rank
//    6-16 ms behind its peers' median in every step of ~200 ms (a fault of 0.08 of the device time, tuning
//    seed 90800) led the second-latest by 1-6 ms, under the 3 % minimum in most steps, and blame named no one.
//    Being the latest in most steps is what noise alone does not do (1 in the rank count per step).
//  - KAIR's KS abnormality: per rank, the sample of its own-work phases (OwnWorkSamples); its score by the one
//    KS rule (ks_divergence.h, KsScores) among all ranks (pairwise up to 64 ranks, else against the pooled
//    sample); robust z over ranks (median/MAD) reported as evidence. The reports' KAIR panel draws these.
// Ranks: the analysis knows the job's ranks only by index (RankIndex, core/rank_id.h): its per-rank vectors and
// its stragglers are by index. NumberedStragglers is the one place its stragglers get their rank numbers.
// Invariant: a healthy job (no late (step, rank) pairs) yields no straggler.
#pragma once

#include <cstdint>
#include <vector>

#include "analysis/diagnosis/phase_model.h"
#include "analysis/diagnosis/result.h"
#include "analysis/diagnosis/thresholds.h"
#include "core/rank_id.h"

namespace strata::diagnosis {

struct StragglerOptions {
  double min_effect = thresholds::kMinEffect;              // share of step time
  double persistent_share = thresholds::kPersistentShare;  // share of steps
  // An intermittent straggler whose clearly late steps hold this share of all lateness of the job's late
  // (step, rank) pairs dominates it, however many small late pairs other ranks have.
  double dominant_blame_share = thresholds::kDominantBlameShare;
};

/// A straggler as the analysis found it: by its rank index (the contract's Straggler has its rank number and
/// evidence; NumberedStragglers makes one of the other). Fields as Straggler's (result.h), unrounded.
struct LocatedStraggler {
  RankIndex rank;
  double score = 0;
  double late_ms_per_step = 0;
  std::vector<int64_t> steps;
  bool persistent = false;
};

struct StragglerAnalysis {
  std::vector<std::vector<double>> blame_ns;              // [step index][rank]
  std::vector<std::vector<bool>> late;                    // [step index][rank]
  std::vector<double> ks_score;                           // per rank
  std::vector<double> ks_z;                               // per rank
  std::vector<double> mean_collective_ms;                 // per rank: mean duration of its collective calls
  std::vector<std::vector<double>> lateness_vs_peers_ns;  // [step index][rank] (see above)
  std::vector<LocatedStraggler> stragglers;               // latest first
  size_t late_pairs = 0;                                  // (step, rank) pairs that were late
  std::vector<RankIndex> late_ranks;                      // distinct ranks ever late, ascending
  // The stragglers are ranks slowed alike (see above): late, late_pairs and late_ranks then hold their
  // lateness against the peers, not their blame.
  bool slowed_alike = false;
  // The straggler is a rank behind its peers (see above): late, late_pairs and late_ranks hold its lateness
  // against the peers in the steps it was the latest rank.
  bool behind_peers = false;
};

/// The lateness the analysis judged (step index, rank index): blame, or lateness against the peers when the
/// stragglers are ranks slowed alike or a rank behind its peers.
double JudgedLatenessNs(const StragglerAnalysis& analysis, size_t step, size_t rank);

/// The analysis's stragglers under their rank numbers (`rank_numbers`: the number of each rank index, as
/// TraceStore::RankNumbers()), in the analysis's order (the k-th is analysis.stragglers[k]), score and lateness
/// rounded as the contract shows them; their evidence is the caller's to fill. A new value: the analysis keeps
/// its indices.
std::vector<Straggler> NumberedStragglers(const StragglerAnalysis& analysis, const std::vector<int32_t>& rank_numbers);

StragglerAnalysis LocateStragglers(const PhaseModel& phases, size_t ranks, const StragglerOptions& options = {});

/// Each rank's own-work phases over `phases`, sorted ascending: its compute phase before each collective (seg)
/// and its tail after the last, in every step. The samples its KS score compares.
std::vector<std::vector<double>> OwnWorkSamples(const PhaseModel& phases, size_t ranks);

/// The lateness rules above on given blame: fills late, late_pairs, late_ranks and stragglers of `out` from
/// out.blame_ns ([step index][rank], ns), the steps' durations and numbers, and, when out.lateness_vs_peers_ns
/// is filled and blame names no straggler, ranks slowed alike. Used by LocateStragglers and by other
/// localizers (process-group jobs) so that every path applies the same persistence rules.
void ClassifyStragglers(const std::vector<int64_t>& step_time_ns, const std::vector<int64_t>& step_numbers,
                        size_t ranks, const StragglerOptions& options, StragglerAnalysis* out);

}  // namespace strata::diagnosis
