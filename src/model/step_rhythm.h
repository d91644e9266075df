// Step rhythm: where training steps begin in a rank's sequence of collective calls when nothing marks
// them (no ProfilerStep, no step column) and the calls' names alone do not repeat with a useful period —
// e.g. a DDP job whose every collective is an all_reduce (gradient buckets, then the loss), recorded by
// `strata record` with no profiler. A step is the stretch of host work (data loading, forward, most of the
// backward) between two bursts of collectives, so the gaps between consecutive calls that open a step are
// the largest of their step. The rhythm is the (period, phase) whose boundary gaps are the largest in
// their step in at least kRhythmMinConsistency of the steps and exceed the largest other gap of the step by
// kRhythmMinSeparation in the median; the smallest such period wins (a multiple of the true period puts a
// real boundary among the "other" gaps and fails the separation). One call per step (period 1) is chosen
// when no larger period qualifies and the calls are spaced regularly.
// Invariants: period == 0 means no rhythm; else 1 <= first <= period (call 0 has no gap before it) and at
// least kRhythmMinSteps whole steps follow `first`. Complexity O(n · P) for n calls and periods up to P =
// kRhythmMaxPeriod. The kRhythm* thresholds are in model/model_thresholds.h.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace strata::model {

struct Rhythm {
  size_t period = 0;  // calls per step
  size_t first = 0;   // index of the first call of the first whole step
};

/// `calls` = (start, end) of one rank's collective calls in start order.
Rhythm DetectRhythm(const std::vector<std::pair<int64_t, int64_t>>& calls);

}  // namespace strata::model
