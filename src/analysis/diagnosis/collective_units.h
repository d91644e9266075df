// Collectives as the unit of comparison when a job has too few steps (issue 46, item 5).
// A trace of one step (Megatron's one profiled iteration, a short capture) cannot tell a straggler from noise
// by steps, but its step may hold dozens of collectives, each a point where the ranks meet. CollectiveUnits
// turns the one step into one unit per collective instance: unit k spans, on each rank, from the end of
// collective k−1 (the step start for k = 0) to the end of collective k, and holds collective k alone. The
// work after the step's last collective is in no unit: no collective follows it in the trace, so it made no
// rank wait (and a unit that held it would be unlike every other in the what-if's pools). The straggler rules, the
// what-if and the findings then run on the units as on steps: a rank late at most of the collectives is named, the late
// launcher of each. When the collectives do not synchronize (CPU-side NCCL calls that return at launch, phase_model.h),
// a rank's lateness at collective k carries its lateness at k−1: each unit's times on rank r are moved back by r's
// lateness at k−1 against the median rank, so a unit blames the rank that fell further behind in it (the
// late launcher of that interval), and the units' lateness adds up to the step's instead of counting one
// delay at every later launch.
// The units are no repetitions of one thing, as steps are: the step is still what the job pays for. So when the
// rules on units name no straggler, StepStraggler names the rank that holds most of the step's lateness when
// its peers wait at least the minimum effect of the step for it, however few collectives it was late at (a
// data stall before the first collective, one slow layer), as an intermittent straggler of its late units.
// Invariants: units are numbered 1..K in execution order, each has exactly one instance, trace_step is the
// step they lie in; the result is empty (and the caller keeps its steps) unless the input has exactly one
// step with at least thresholds::kMinCollectiveUnits instances.
#pragma once

#include "analysis/diagnosis/phase_model.h"
#include "analysis/diagnosis/straggler.h"

namespace strata::diagnosis {

/// The one step of `phases` as one unit per collective, or an empty model (see above).
PhaseModel CollectiveUnits(const PhaseModel& phases);

/// Adds to `analysis` (of `units`, with no straggler) the rank that holds the step's lateness (see above), if
/// one does: at least options.dominant_blame_share of all ranks' blame, at least options.min_effect of the
/// units' summed time, and late (by the rule) at one unit or more.
void AddStepStraggler(const PhaseModel& units, const StragglerOptions& options, StragglerAnalysis* analysis);

/// The share of the one step of `phases` that its units cover (median over ranks of the time from the step's
/// start to its last collective's end, over the step's time on that rank); 0 without collectives.
double CollectiveUnitCoverage(const PhaseModel& phases);

}  // namespace strata::diagnosis
