// Notes that keep the what-if attribution consistent with the verdict (issue 10): when the what-if ranks
// another rank above a named straggler, or its slowdown S is below 1, the result says why, in notes.
//  - collective-phases model: by_rank restores one rank's recorded compute phases on the ideal with every
//    rank starting each step together; a rank that computes longer but started its steps earlier made no
//    one wait in the recorded job, so it can rank above the straggler there. A straggler that enters its
//    steps late (its lateness is a launch delay, removed in every replay) can rank low.
//  - op-table model: by_rank is by data-parallel rank (all stages of it), not by worker.
//  - S < 1: the ideal uses each phase's mean over all steps and ranks and each collective's median transfer,
//    so steps whose transfers were faster than the median can replay faster than the "ideal".
// Invariant: adds notes only; never changes a figure.
#pragma once

#include "analysis/diagnosis/result.h"

namespace strata::diagnosis {

void ExplainWhatIf(DiagnosisResult* result);

}  // namespace strata::diagnosis
