// Diagnosis of op-table jobs from the what-if dependency model (see diagnose.h, second path):
//  - a worker whose restored/ideal ratio stands out (robust z over workers > 3.5 and ≥ min effect) is a
//    straggler; when the outstanding workers are exactly all dp ranks of one stage it is a stage imbalance;
//  - a stage whose ratio exceeds the others' median by ≥ min effect with uniform dp ranks is a stage
//    imbalance;
//  - when S is above the minimum effect but no worker or stage explains it, and the slowest dp rank changes
//    from step to step, it is a data imbalance.
// The cause of a single straggling worker comes from its compute op durations against its stage peers.
#pragma once

#include "analysis/diagnosis/diagnose.h"
#include "analysis/diagnosis/result.h"

namespace strata::diagnosis {

/// The op-table path's product (PathResult, result.h).
PathResult DiagnoseOpTable(const TraceStore& store);

}  // namespace strata::diagnosis
