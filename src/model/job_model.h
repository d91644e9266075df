// JobModel: the one model of a run that every analysis pass reads, built once per diagnosis from whatever
// source filled the store (profiler traces, an op table, or a recording through importers/recording_trace):
// each rank's steps, its collective calls matched across ranks, and the clock offsets that align the ranks.
// Invariants: `collectives` was matched against `steps` (MatchCollectives may have replaced steps found in
// no marker with steps from the collective sequence); `clocks` comes from `collectives`.
#pragma once

#include <cstdint>
#include <vector>

#include "model/clock_alignment.h"
#include "model/collectives.h"
#include "model/step_windows.h"
#include "store/trace_store.h"

namespace strata::model {

struct JobModel {
  StepModel steps;
  CollectiveModel collectives;
  ClockAlignment clocks;
};

/// `rows_by_rank[r]` = indices of rank r's slices.
JobModel BuildJobModel(const TraceStore& store, const std::vector<SliceRows>& rows_by_rank);

}  // namespace strata::model
