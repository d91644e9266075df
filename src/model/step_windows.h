// Step windows: for each rank, the time span of each training step on that rank's own clock.
// Sources, in order of preference: ProfilerStep#N annotations ("profiler-step"), the op table's step
// column ("op-table"), or none ("none": the whole trace is one window, step 0). Period detection from the
// collective sequence is done by collectives.h when no steps exist.
// Invariants: windows of a rank are sorted by start; each step number appears at most once per rank.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "store/trace_store.h"

namespace strata::model {

struct StepWindow {
  int64_t step = 0;
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  uint32_t main_track = UINT32_MAX;  // track of the ProfilerStep slice (the training loop's thread)
};

struct StepModel {
  std::string source;                            // "profiler-step", "op-table", "detected-period", "none"
  std::vector<std::vector<StepWindow>> by_rank;  // index = rank index in the store
  std::vector<int64_t> steps;                    // steps present on every rank, ascending

  /// The training loop's track of rank index `rank` in step `step`, or UINT32_MAX when unknown.
  uint32_t MainTrack(size_t rank, int64_t step) const;
};

/// `rows_by_rank[r]` = indices of rank r's slices (see SlicesByRank).
StepModel FindSteps(const TraceStore& store, const std::vector<std::vector<uint32_t>>& rows_by_rank);

/// Index of the window holding time `t` on a rank, or -1.
int FindWindow(const std::vector<StepWindow>& windows, int64_t t);

}  // namespace strata::model
