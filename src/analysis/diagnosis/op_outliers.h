// Operation outliers within a straggler (DESIGN.md, Diagnosis 5). An op identity is (name, occurrence
// index of that name within the step) on the rank's training-loop thread and GPU streams. For each
// identity the straggler's duration and start offset within the step are compared
//  - across ranks, in the same step: robust z (median/MAD, MAD floored at 5 % of the median and 10 µs)
//    when there are at least 3 ranks, and the excess over the peers' median always;
//  - across steps, on the straggler itself: robust z of its late-step mean against its other steps
//    (when there are at least 3 other steps).
// Identities are ranked by mean excess duration over the straggler's late steps.
// Invariant: an identity missing on a peer counts as 0 ms there (extra work is all excess).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <vector>

#include "analysis/diagnosis/window_profile.h"

namespace strata::diagnosis {

struct OpOccurrence {
  StringId name;
  uint32_t index = 0;  // occurrence of this name within the window
  double dur_ns = 0;
  double offset_ns = 0;  // start − window start
  bool leaf = true;      // no other op of its track starts inside it (its time is all its own)
  bool compute = false;  // the rank's own work: a host compute op or a computation kernel
};

/// Every op (all nesting depths) that starts in [start, end) on `main_track` and the rank's GPU streams,
/// in start order.
std::vector<OpOccurrence> OpsInWindow(const TraceStore& store, const TrackIndex& index, size_t rank, TrackId main_track,
                                      int64_t start, int64_t end);

struct OpOutlier {
  StringId name;
  uint32_t index = 0;
  double excess_ms = 0;                  // mean over late steps of (straggler − peers' median)
  double duration_ms = 0;                // straggler, mean over late steps
  double peer_ms = 0;                    // peers' median, mean over late steps
  std::optional<double> z_across_ranks;  // mean over late steps
  std::optional<double> z_across_steps;
  std::optional<double> offset_z_across_ranks;
};

class OpOutlierCollector {
 public:
  OpOutlierCollector(size_t ranks, size_t straggler) : ranks_(ranks), straggler_(straggler) {}
  /// One step's ops per rank; `late` marks the straggler's late steps.
  void AddStep(const std::vector<std::vector<OpOccurrence>>& per_rank, bool late);
  std::vector<OpOutlier> Top(size_t n) const;

 private:
  struct Acc {
    double excess = 0, dur = 0, peer = 0, z = 0, offset_z = 0;
    size_t late_steps = 0, z_count = 0;
    std::vector<double> other_step_durs;  // straggler's duration in steps that were not late
  };
  size_t ranks_, straggler_;
  std::map<std::pair<StringId, uint32_t>, Acc> acc_;
};

}  // namespace strata::diagnosis
