// Diagnosis of jobs whose collectives run in process groups smaller than the world — tensor, data and
// pipeline parallelism, where no collective spans every rank and the phase model of data-parallel jobs
// (phase_model.h) does not apply. Inputs: steps, group-matched collectives and aligned clocks.
//
// Algorithm, per step and rank (own clock for durations, aligned clocks across ranks):
//  - comm time = time in communication kernels; self time = step window − comm time (the rank's own work
//    and its own host-side gaps; waiting for a group is inside its collective kernels and is excluded);
//  - transfer of a call = its duration minus its wait (latest arrival in its group − its arrival, clamped
//    to the call), compared with a low quantile (10 %) of the transfers of the same collective (kernel
//    name, group size) in that step; a rank's groups are all slow only when it is the common member of
//    the slow groups (a slow link of its own), so the communication blame of a rank is its transfer excess
//    when every one of its groups is >= 20 % slower than usual, else 0;
//  - roles: pipeline stages from the chains of 2-rank send/recv groups (stage 0 is the end whose first
//    p2p call is a send); self excess = self time − median of the same-stage peers (KAIR-style comparison
//    with role peers), stage excess = a stage's self time beyond an even split of the stages' (stage_excess.h,
//    the statistic the op-table path uses too);
//  - blame = max(0, self excess) + communication blame → the persistence rules of straggler.h;
//  - cause of a straggler: transfer excess > self excess → slow_communication; otherwise the window
//    differential against its stage peers (data loading, host gap, host compute with device idle,
//    device busy) as in the data-parallel path;
//  - a stage late in >= 60 % of the steps with no single rank to blame → stage_imbalance (its ranks are
//    the stragglers); several ranks late in turn with none persistent → data_imbalance.
// What-if (WhatIfModel::kBlameSubtraction, "blame-subtraction"): no replay; ideal step = step − the largest per-rank
// blame of that step. Invariant: a job whose ranks do equal work in equal groups yields no straggler and no finding.
#pragma once

#include <vector>

#include "analysis/diagnosis/diagnose.h"
#include "analysis/diagnosis/result.h"
#include "model/clock_alignment.h"
#include "model/collectives.h"
#include "model/step_windows.h"

namespace strata::diagnosis {

/// The grouped path's product (PathResult, result.h), on top of `described` (the job model as the trace path
/// described it: steps, clocks, notes).
PathResult DiagnoseGroupedTraces(const TraceStore& store, const std::vector<SliceRows>& rows_by_rank,
                                 const model::StepModel& steps, const model::CollectiveModel& collectives,
                                 const model::ClockAlignment& clocks, PathResult described);

/// Pipeline stage of each rank index from 2-rank send/recv groups (0 for all when there are none or the
/// groups do not form chains).
std::vector<int32_t> PipelineStages(const TraceStore& store, const model::CollectiveModel& collectives, size_t ranks);

}  // namespace strata::diagnosis
