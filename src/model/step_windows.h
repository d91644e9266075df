// Step windows: for each rank, the time span of each training step on that rank's own clock.
// Sources, in order of preference: ProfilerStep#N annotations ("profiler-step"), the op table's step
// column ("op-table"), or none ("none": the whole trace is one window, step 0). Period detection from the
// collective sequence is done by collectives.h when no steps exist.
// Invariants: windows of a rank are sorted by start; each step number appears at most once per rank; two
// instances of a step number merge only when they overlap (nested annotations), else the later is dropped
// and counted.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "store/trace_store.h"

namespace strata::model {

/// Where the step windows came from. detected-rhythm (the calls' timing, when every call is the same
/// collective) is not in DESIGN.md's list; the JSON contract's field is a free string.
enum class StepSource { kNone, kProfilerStep, kOpTable, kDetectedPeriod, kDetectedRhythm };
/// "none", "profiler-step", "op-table", "detected-period", "detected-rhythm": the contract's names.
std::string_view StepSourceName(StepSource source);

struct StepWindow {
  int64_t step = 0;
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  TrackId main_track = kNoTrack;  // track of the ProfilerStep slice (the training loop's thread)
};

struct StepModel {
  StepSource source = StepSource::kNone;
  std::vector<std::vector<StepWindow>> by_rank;  // index = rank index in the store
  std::vector<int64_t> steps;                    // steps present on every rank, ascending
  // Step markers that cannot be trusted, per rank index: a ProfilerStep#N seen again apart from (not nested
  // in or overlapping) its first instance — the first is kept — and markers whose numbers do not increase
  // with time. Reported, never merged into one window.
  std::vector<size_t> duplicate_markers;
  std::vector<size_t> out_of_order_markers;

  /// The training loop's track of rank index `rank` in step `step`, or kNoTrack when unknown.
  TrackId MainTrack(size_t rank, int64_t step) const;
};

/// `rows_by_rank[r]` = indices of rank r's slices (see SlicesByRank).
StepModel FindSteps(const TraceStore& store, const std::vector<SliceRows>& rows_by_rank);

/// The training loop's thread of a rank when no ProfilerStep names it: the CPU thread whose slices (all
/// depths) hold the most time, since the loop's thread carries the nested framework ops. kNoTrack when
/// the rank has no CPU thread.
TrackId MainThreadTrack(const TraceStore& store, const SliceRows& rows);

/// Index of the window holding time `t` on a rank, or -1.
int FindWindow(const std::vector<StepWindow>& windows, int64_t t);

}  // namespace strata::model
