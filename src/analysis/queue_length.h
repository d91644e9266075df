// HTA's queue length (get_queue_length_time_series / _summary, get_time_spent_blocked_on_full_queue): the
// number of operations launched on a GPU stream and not yet started. Over the launch pairs of a rank
// (runtime_launch.h: a runtime launch call and the device row with its correlation, hta_rows.h):
//   +1 at the launch call's start, -1 at the device row's start, on the device row's stream;
//   the series is the running sum per stream, one point per change, in time order (at equal times the +1
//   first: a kernel does not start before its launch; HTA's sort leaves such ties in no set order, which is
//   how its series went negative on the negative_queue_length_values_check trace);
//   summary per stream: the number of points, their mean (HTA's describe(): per point, not per unit of time),
//   their maximum, and the time spent at or above kFullQueue (HTA's max_queue_length: the launch queue is
//   full, the CPU blocks on the next launch), each point lasting until the next.
// Memory bandwidth over time, HTA's other augmented counter, is memory_bandwidth.h.
// Invariant: a stream's series ends at 0 when every launched row started within the rows kept.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "analysis/hta_rows.h"
#include "store/trace_store.h"

namespace strata {

inline constexpr int64_t kFullQueue = 1024;  // CUDA's launch queue depth per stream (HTA's documentation)

struct StreamQueueLength {
  int64_t stream = 0;
  std::vector<std::pair<double, int64_t>> series;  // (µs, queue length after the change)
  double mean = 0;                                 // over the points
  int64_t max = 0;
  double full_us = 0;  // time at >= kFullQueue
};

/// Every stream with a launch pair, by stream id; empty when the rank has none.
std::vector<StreamQueueLength> ComputeQueueLength(const TraceStore& store, const HtaRows& rows);

}  // namespace strata
