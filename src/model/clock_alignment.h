// Clock alignment from collective completions (DESIGN.md, Diagnosis 3): the completions of a blocking
// collective are nearly simultaneous on all ranks, so each rank's offset is the median over instances of
// (its completion − the instance's median completion). aligned time = rank time − offset. With process
// groups smaller than the world the estimate is repeated on corrected clocks until it converges.
// CPU-side NCCL calls return at launch: their ends are not a common instant, and aligning by them moves a
// late-launching rank back by its lateness. With epoch-based clocks they are not aligned at all (host_clocks);
// with per-process clocks they are aligned by the ends all the same (nothing better exists), and say so.
// Invariants: offsets are 0 when no instance spans two ranks; the median offset over ranks is 0.
#pragma once

#include <cstdint>
#include <vector>

#include "model/collectives.h"

namespace strata::model {

struct ClockAlignment {
  std::vector<int64_t> offset_ns;  // per rank index
  // The ranks' own clocks were kept: the collectives' ends are no common instant (CPU-side NCCL calls)
  // and the clocks are epoch-based host clocks (one host: one clock; across hosts NTP's milliseconds).
  bool host_clocks = false;
  double residual_us = 0;  // median |aligned completion − instance median| over all calls
  size_t instances_used = 0;
};

ClockAlignment AlignClocks(const CollectiveModel& collectives, size_t ranks);

}  // namespace strata::model
