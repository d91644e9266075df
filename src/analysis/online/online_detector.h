// OnlineDetector: straggler detection as steps end, in O(ranks) per step (issue 13, item 2). Each rank's
// own work (step − collective wait) is compared with the robust reference of its group's peers in the same
// step (median, MAD floored); a rank late by the minimum effect and a robust z of kOnlineMinZ is late in
// that step; clearly late (kOnlineClearFactor × the minimum effect) in kOnlinePersist of the last
// kOnlineWindow steps, or late in kOnlineLongPersist of the last kOnlineLongWindow, opens a detection (so
// one noisy step, or jitter at the minimum effect for a few steps, raises nothing), on time for
// kOnlineWindow steps closes it. A detection's cause is named by the one rule, NameCause of cause_choice.h: each class
// of the step summary (on-CPU, run queue, throttled, GC, I/O, other off-CPU time) has an excess, the rank's time in it
// beyond its peers' median in the detecting step; the largest names its cause when it covers at least
// kMinExplainedShare of the lateness (own work beyond the peers' median), and the confidence is that share
// (excess / lateness, clamped to [0, 1]); otherwise the cause is "unknown" with confidence 0
// (docs/confidence.md, "online").
// Invariants: steps are fed in increasing order; each open detection is reported once, when it opens;
// memory is O(ranks) (a bit window per rank).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "analysis/diagnosis/contract_vocabulary.h"
#include "analysis/diagnosis/thresholds.h"
#include "analysis/online/step_summary.h"

namespace strata::online {

struct Detection {
  int32_t rank = -1;
  int64_t step = -1;                                    // the step at which it was detected
  int64_t first_step = -1;                              // the first late step of the run that opened it
  double detected_at = 0;                               // the caller's clock (Unix seconds for the agent)
  double late_s = 0;                                    // own work beyond the peers' median, in the detecting step
  double step_s = 0;                                    // the group's median step time in that step
  diagnosis::Cause cause = diagnosis::Cause::kUnknown;  // from the summary classes (NameCause), or unknown
  double excess_s = 0;    // the largest class's excess over the peers' median (named or not), that step
  double explained = 0;   // excess_s / late_s, clamped to [0, 1]
  double confidence = 0;  // `explained` when a cause is named, else 0 (cause_choice.h)
};

struct OnlineOptions {
  double min_effect = diagnosis::thresholds::kMinEffect;  // share of the step
};

class OnlineDetector {
 public:
  explicit OnlineDetector(OnlineOptions options = {});

  /// Feeds every summary of step `step` (one per rank; others are ignored) and returns the detections
  /// that open at this step.
  std::vector<Detection> AddStep(int64_t step, const std::vector<RankStepSummary>& ranks, double now);

  /// Detections open now (by rank).
  const std::map<int32_t, Detection>& open() const { return open_; }

 private:
  struct RankState {
    uint32_t late_bits = 0;   // bit i: late i steps ago (kOnlineLongWindow bits)
    uint32_t clear_bits = 0;  // bit i: clearly late i steps ago (kOnlineWindow bits)
    int64_t first_late = -1;
  };
  void Judge(const std::vector<const RankStepSummary*>& group, int64_t step, double now,
             std::vector<Detection>* opened);

  OnlineOptions options_;
  std::map<int32_t, RankState> state_;
  std::map<int32_t, Detection> open_;
};

}  // namespace strata::online
