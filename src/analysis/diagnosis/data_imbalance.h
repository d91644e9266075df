// The data_imbalance verdict of the trace paths (flat data-parallel jobs and process-group jobs): per-step
// load uneven across ranks, no single bad worker (DESIGN.md's cause vocabulary). Op tables have their own
// rule (op_table_diagnosis.cc: per-step compute loads are in the table).
//
// Ranks late in turn are also what a loaded machine makes of a clean job: a preempted op or a late
// wake-up here and there. What tells uneven load apart is where the late rank's extra time is: more data
// makes the rank's ops slower across the board (every matmul of a longer batch), a hiccup makes one op or
// one gap longer and leaves the typical op as fast as its peers'. So for each late (step, rank) the op
// scaling is measured: over the rank's leaf compute ops (own work, no nesting; not waits or collectives)
// of at least 10 µs, the ratio of its duration to the median duration of the same op identity (name,
// occurrence in the step) on its role peers, and the duration-weighted median of those ratios. A late
// pair is "broad" when its scaling is at least 1 + min_effect (the least lateness that counts, spread
// over the step's work) and the extra time of those ops (own − peers' median, summed) covers at least
// kMinExplainedShare of the pair's lateness: more data makes the rank late by its ops' extra time, while a
// busy or slower machine also stretches what the ops do not cover (a wake-up, the interpreter between ops).
// Seen on held-out clean 4- and 8-rank lab jobs (2026-11-28, seeds 11000+): ranks late in turn by 2-11 ms whose
// compared ops, 0.2-0.6 ms of work, ran 5-28 % slower (0.02-0.4 ms of extra time); constructed imbalance
// (bench/accuracy's synth cases) has its lateness all in its ops' extra time.
// Several ranks slowed alike (a slower core under half of them) also make the slowest rank change from step to
// step; they are found first, as stragglers by their lateness against the peers (straggler.h), so that this
// verdict is never given for them.
// Invariants: reported only when no straggler was found, at least two ranks were late in turn, a late
// rank shows in at least half of the steps, at least half of the measured late pairs are broad, and the
// loss is at least the minimum effect.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "analysis/diagnosis/op_outliers.h"
#include "analysis/diagnosis/result.h"
#include "analysis/diagnosis/straggler.h"

namespace strata::diagnosis {

/// Data imbalance's lateness pattern: at least two ranks late in turn, and a late rank in at least half of
/// the steps (two or more). A few late steps spread over ranks are what per-step jitter produces by itself
/// in a clean job, the more so the more ranks there are.
bool RanksLateInTurn(const StragglerAnalysis& analysis);

/// A rank's ops against its peers' in one step, over its leaf compute ops of at least 10 µs (by the peers'
/// median) that at least one peer also ran.
struct OpComparison {
  double scaling = 1;    // duration-weighted median of (own duration / the peers' median of that op identity)
  double excess_ns = 0;  // sum of (own duration − the peers' median) over those ops
};

/// nullopt when no op compares.
std::optional<OpComparison> CompareOps(const std::vector<OpOccurrence>& own,
                                       const std::vector<std::vector<OpOccurrence>>& peers);

/// Op scaling over the late (step, rank) pairs of an analysis.
struct LoadScaling {
  size_t measured = 0;          // late pairs with a scaling
  size_t broad = 0;             // of those, scaling >= 1 + min_effect and their ops' excess explaining the lateness
  std::vector<double> scaling;  // per measured pair, in step order
};

/// The ops of rank index `rank` in step index `step` (its whole step window).
using StepOps = std::function<std::vector<OpOccurrence>(size_t step, size_t rank)>;

/// Measures every late pair of `analysis` (its lateness: JudgedLatenessNs); a rank's peers are the other ranks of the
/// same `role` (e.g. pipeline stage; empty = one role for all), or all other ranks when it has none.
LoadScaling MeasureLoadScaling(const StragglerAnalysis& analysis, const StepOps& ops, const std::vector<int32_t>& role,
                               double min_effect);

/// The finding when the rule holds: `rank_numbers` maps the analysis' rank indices to rank numbers;
/// `loss_share` is what balancing would save, as a share of step time; `load` the late pairs' op scaling.
std::optional<Finding> DataImbalanceFinding(const StragglerAnalysis& analysis, const std::vector<int32_t>& rank_numbers,
                                            double loss_share, const LoadScaling& load,
                                            const std::vector<Straggler>& stragglers, double min_effect);

}  // namespace strata::diagnosis
