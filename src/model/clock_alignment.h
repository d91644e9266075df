// Clock alignment from collective completions (DESIGN.md, Diagnosis 3): the completions of a blocking
// collective are nearly simultaneous on all ranks, so each rank's offset is the median over instances of
// (its completion − the instance's median completion). aligned time = rank time − offset. With process
// groups smaller than the world the estimate is repeated on corrected clocks until it converges.
// Invariants: offsets are 0 when no instance spans two ranks; the median offset over ranks is 0.
#pragma once

#include <cstdint>
#include <vector>

#include "model/collectives.h"

namespace strata::model {

struct ClockAlignment {
  std::vector<int64_t> offset_ns;  // per rank index
  double residual_us = 0;          // median |aligned completion − instance median| over all calls
  size_t instances_used = 0;
};

ClockAlignment AlignClocks(const CollectiveModel& collectives, size_t ranks);

}  // namespace strata::model
