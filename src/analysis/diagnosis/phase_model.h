// PhaseModel: each step of a Kineto-style job as a sequence of compute phases separated by collectives,
// on aligned clocks. For step s, rank r and the k-th collective instance present on every rank:
//   arrival a[k][r], completion e[k][r];  compute phase seg[k][r] = a[k][r] − e[k−1][r] (k = 0: from the
//   step start), clamped at 0;  tail[r] = step end − e[K−1][r].
// This is the data-parallel form of the OSDI'25 dependency model (a collective starts when its last rank
// arrives, ends a transfer time later) and the input of straggler localization and the what-if replay.
// Invariants: all vectors of a step have one entry per rank; instances are in execution order.
#pragma once

#include <cstdint>
#include <vector>

#include "model/clock_alignment.h"
#include "model/collectives.h"
#include "model/step_windows.h"

namespace strata::diagnosis {

struct StepPhases {
  int64_t step = 0;                 // the unit's number: the step's, or the collective's (collective_units.h)
  int64_t trace_step = 0;           // the step of the trace the window lies in (its main track's step)
  std::vector<int64_t> start, end;  // per rank, aligned step window
  std::vector<const model::MatchedCollective*> instances;
  std::vector<std::vector<int64_t>> arrival;     // [k][r], aligned
  std::vector<std::vector<int64_t>> completion;  // [k][r], aligned
  std::vector<std::vector<int64_t>> seg;         // [k][r]
  std::vector<int64_t> tail;                     // per rank
  int64_t time_ns = 0;                           // last end − first start over ranks
};

struct PhaseModel {
  std::vector<StepPhases> steps;
  // The collectives do not synchronize their ranks (CPU-side NCCL calls return at launch): a rank's
  // lateness at collective k carries its lateness at k−1, and its peers wait only where the step syncs, so
  // a step's lateness is the one at its last collective.
  bool cumulative = false;
};

PhaseModel BuildPhases(const model::StepModel& steps, const model::CollectiveModel& collectives,
                       const model::ClockAlignment& clocks, size_t ranks);

}  // namespace strata::diagnosis
