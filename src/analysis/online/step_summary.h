// RankStepSummary: what an agent keeps of one rank's step once it ends (issue 13): its duration, the time
// it waited in collectives, and where the rest went by class. The online detector compares ranks by these
// alone, so no clock is shared between nodes: a straggler makes every rank's step equally long but waits
// least, i.e. its own work (step − wait) is the longest.
// `step` is the publisher's own count (each agent numbers steps from its own start); `start_unix` (the
// step's start on the node's wall clock) is what lines ranks of different nodes up (online_job.h): it needs
// the nodes' clocks within a fraction of a step of each other (NTP keeps them within milliseconds); the
// detection itself compares durations only.
// Invariants: times in seconds, non-negative; `group` holds ranks that do the same work (a pipeline stage;
// 0 when the layout is unknown); `step` increases per rank; `start_unix` is 0 when unknown.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

#include "analysis/diagnosis/contract_vocabulary.h"

namespace strata::online {

struct RankStepSummary {
  int32_t rank = -1;
  int32_t group = 0;
  int64_t step = -1;
  double start_unix = 0;  // the step's start, Unix seconds on the publishing node's clock (0: unknown)
  double step_s = 0;      // the rank's step duration
  double wait_s = 0;      // inside collectives (waiting for peers and transferring)
  // Classes of the rest (may overlap the step partly; each compared with the peers on its own).
  double oncpu_s = 0, runq_s = 0, throttled_s = 0, gc_s = 0, io_s = 0, offcpu_other_s = 0;

  double own_work_s() const { return step_s > wait_s ? step_s - wait_s : 0; }
};

/// The classes above, in a fixed order, with the cause each one's excess stands for.
inline constexpr std::array<std::string_view, 6> kSummaryClasses = {"oncpu", "runq", "throttled",
                                                                    "gc",    "io",   "offcpu_other"};
/// Each with its layer, as the offline passes name them (cause_choice.h, cross_layer.h).
struct SummaryCause {
  diagnosis::Cause cause;
  diagnosis::Layer layer;
};
inline constexpr std::array<SummaryCause, 6> kSummaryCauses = {{
    SummaryCause{diagnosis::Cause::kSlowCompute, diagnosis::Layer::kCpu},
    SummaryCause{diagnosis::Cause::kCpuContention, diagnosis::Layer::kCpu},
    SummaryCause{diagnosis::Cause::kCpuThrottling, diagnosis::Layer::kCpu},
    SummaryCause{diagnosis::Cause::kGcPause, diagnosis::Layer::kPython},
    SummaryCause{diagnosis::Cause::kIoStall, diagnosis::Layer::kOs},
    SummaryCause{diagnosis::Cause::kHostStall, diagnosis::Layer::kHost},
}};
/// The layer of a cause the classes stand for (kNone for unknown or any other).
inline diagnosis::Layer SummaryLayer(diagnosis::Cause cause) {
  for (const SummaryCause& c : kSummaryCauses)
    if (c.cause == cause) return c.layer;
  return diagnosis::Layer::kNone;
}
inline std::array<double, 6> ClassValues(const RankStepSummary& s) {
  return {s.oncpu_s, s.runq_s, s.throttled_s, s.gc_s, s.io_s, s.offcpu_other_s};
}

}  // namespace strata::online
