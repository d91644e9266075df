// What-if replay on a PhaseModel (DESIGN.md, Diagnosis 7, for jobs whose dependency structure is
// "compute, then a collective every rank joins"): per step, rank r reaches collective k at
//   a[k][r] = e[k−1][r] + seg[k][r];  the collective starts at L = max_r a[k][r] and ends at L + transfer[k];
//   the step ends at max_r (e[K−1][r] + tail[r]).
// transfer[k] = median over ranks of (e[k][r] − max_r' a[k][r']) (waiting removed). Launch delays (ranks
// starting the step at different times) are removed in every replay.
// Ideal: each compute phase at the mean of its position (k, or the tail) over the ranks that are not named
// stragglers (all ranks when none is, or when every rank is) and all steps; each transfer at the median
// transfer of its collective over all steps. S = mean no-delay step / mean ideal. (DESIGN.md takes the mean
// over every rank: a straggler's own excess then raises the ideal, so S understates what fixing it recovers
// and its saving could not fit under 1 − 1/S; docs/impact.md.)
// Attribution: restore one rank's recorded phases and transfers on top of the ideal (ratio to the ideal);
// impact: replay the recorded job with one rank's phases set to its peers' means (the rank and the named
// stragglers excluded) and report the share of step time saved. Fixing every straggler gives the ideal's
// compute, so a straggler's saving fits under 1 − 1/S up to transfer jitter.
// Invariant: replaying recorded phases reproduces each step's duration up to launch delays.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "analysis/diagnosis/phase_model.h"
#include "store/trace_store.h"

namespace strata::diagnosis {

struct PhaseWhatIf {
  double slowdown = 1.0;
  double no_delay_step_ms = 0;
  double ideal_step_ms = 0;
  std::vector<double> by_rank;               // per rank index: restored / ideal
  std::vector<double> fix_rank_saving;       // per rank index: share of no-delay step time saved by fixing it
  std::map<std::string, double> by_op_type;  // "compute" and each collective name
  std::vector<std::vector<double>> fix_rank_step_saving;  // [rank][step index] saving share per step
};

/// `stragglers`: rank indices left out of the ideal's compute pools (empty: none).
PhaseWhatIf ComputePhaseWhatIf(const PhaseModel& phases, const TraceStore& store, size_t ranks,
                               const std::vector<size_t>& stragglers = {});

}  // namespace strata::diagnosis
