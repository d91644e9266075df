// OnlineDetector: straggler detection as steps end, in O(ranks) per step (issue 13, item 2), with each rank's
// memory of its own past (issue 25). Two scores per rank and step:
//  - the peer score: its own work (step − collective wait) against the robust reference of its group's
//    peers in the same step (median, MAD floored);
//  - the self score: its own work against its own recent past (rank_history.h: median and MAD of its last
//    kOnlineSelfWindow on-time steps, counted from kOnlineSelfMinHistory of them).
// Which one decides (thresholds.h, kOnlinePeerMinRanks): from 4 ranks in a group, the peer score; with 2 or 3,
// where one or two peers are no robust reference, the self score, and only when the rank is late against
// itself by the minimum effect more than the median of its peers is against themselves (a change they share
// names nobody); alone, the self score. Either way a rank is late in a step by the minimum effect (of the
// step, for the peer score; of its usual step, for the self score) and a robust z of kOnlineMinZ. A detection
// opens when the rank is:
//  - clearly late (kOnlineClearFactor × the minimum effect) in kOnlinePersist of the last kOnlineWindow steps,
//    or late in kOnlineLongPersist of the last kOnlineLongWindow, each window stretched to span
//    kOnlinePersistMinS / kOnlineLongPersistMinS of the usual step with the same share late (so one noisy
//    step, a blip of a few short steps, or jitter at the minimum effect for a few steps, raises nothing);
//  - or late by kOnlinePauseSteps usual steps in one step, with its self history (a pause; not warm-up);
//  - or clearly late in kOnlineRecurringRuns evenly spaced runs of the last kOnlineRecurringWindow steps.
// A detection carries its onset (onset_step, onset_unix: where the rank's CUSUM over the deciding z last rose
// from 0, or the run's first late step if later; for a recurring pattern its first run) and its persistence
// (lasting, recurring, one_off), re-read each step while it is open: from the rank's late steps, or, when
// its run held a pause, from its pauses alone (another pause recurs; a step late by the minimum effect within
// the hold, as a loaded machine makes now and then, does not; a late run going on past kOnlineLongWindow steps
// is lasting). It closes, with hysteresis, after
// kOnlineWindow consecutive on-time steps when lasting, kOnlineOneOffHold when one_off (a pause closes on
// its own; one that recurs meanwhile makes it recurring), kOnlineRecurringWindow when recurring.
// A detection's cause is named by the one rule, NameCause of cause_choice.h, over the late run that opened it
// (LateRun: every late step from the run's first, not the detecting step alone): each class of the step
// summary (on-CPU, run queue, throttled, GC, I/O, other off-CPU time) has an excess, the rank's time in it
// beyond its reference in each late step (its peers' median when the peer score decides; its own mean over
// its learned steps when the self score does), summed over the run; the largest names its cause when it
// covers at least kMinExplainedShare of the run's summed lateness, and the confidence is that share (excess /
// lateness, clamped to [0, 1]); otherwise the cause is "unknown" with confidence 0 (docs/confidence.md,
// "online").
// Invariants: steps are fed in increasing order; each detection is returned once, when it opens (open()
// shows its persistence as it is now); memory is O(ranks × kOnlineSelfWindow).
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "analysis/diagnosis/contract_vocabulary.h"
#include "analysis/diagnosis/thresholds.h"
#include "analysis/online/rank_history.h"
#include "analysis/online/step_summary.h"

namespace strata::online {

/// Which score decided a detection (see the top of this file): peers or self (contract_vocabulary.h).
using diagnosis::DecidingScore;
using diagnosis::DecidingScoreName;
using diagnosis::ParseDecidingScore;

struct Detection {
  int32_t rank = -1;
  int64_t step = -1;        // the step at which it was detected
  int64_t first_step = -1;  // the first late step of the run that opened it
  double detected_at = 0;   // the caller's clock (Unix seconds for the agent)
  double late_s = 0;        // lateness by the deciding score, per late step of the run that opened it (see LateRun)
  double step_s = 0;        // the group's median step time in that step
  diagnosis::Cause cause = diagnosis::Cause::kUnknown;  // from the summary classes (NameCause), or unknown
  double excess_s = 0;    // the largest class's excess over its reference (named or not), per late step of the run
  double explained = 0;   // excess_s / late_s, clamped to [0, 1]
  double confidence = 0;  // `explained` when a cause is named, else 0 (cause_choice.h)
  // Both scores in the detecting step.
  DecidingScore decided_by = DecidingScore::kPeers;
  int32_t peers = 0;         // ranks it was compared with (0: alone, no peer score)
  double peer_late_s = 0;    // own work beyond the peers' median
  double peer_z = 0;         // robust z of that against the peers' spread
  int32_t self_history = 0;  // learned steps of its baseline (under kOnlineSelfMinHistory: no self score)
  double self_late_s = 0;    // own work beyond its own baseline (0 without a self score)
  double self_z = 0;
  double self_baseline_s = 0;  // its baseline own work per step
  // When the change began and how it behaves.
  int64_t onset_step = -1;
  double onset_unix = 0;  // the onset step's wall-clock start (0: unknown)
  Persistence persistence = Persistence::kLasting;
  // Its run held a pause (a step late by kOnlinePauseSteps usual steps): its persistence is read from the
  // rank's pauses alone, so a step late by the minimum effect within its hold does not make it recurring.
  bool pause = false;
};

/// The late steps of a rank's current run (from its first late step, until kOnlineWindow steps pass on
/// time): each summary class's excess over its reference in that step, and the lateness, summed over them.
/// A detection's cause is named from the run, not from the detecting step alone: a blip behind the run queue
/// whose detecting step shows little of it is still named for it.
struct LateRun {
  std::array<double, 6> excess_s{};
  double late_s = 0;
  size_t steps = 0;
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
    RankHistory history;
    int64_t first_late = -1;  // the first late step of the current run (reset after kOnlineWindow on time)
    LateRun run;              // its late steps (restarted with first_late)
  };
  struct Scored;
  class PeerClasses;
  void Judge(const std::vector<const RankStepSummary*>& group, int64_t step, double now,
             std::vector<Detection>* opened);
  void Decide(const std::vector<const RankStepSummary*>& group, double step_median, std::vector<Scored>* scored) const;
  void AddToRun(const Scored& s, PeerClasses* peer_classes, int64_t step, RankState* st);
  void Update(const Scored& s, PeerClasses* peer_classes, int64_t step, double step_median, double now,
              std::vector<Detection>* opened);

  OnlineOptions options_;
  std::unordered_map<int32_t, RankState> state_;  // by rank: looked up for every rank every step
  std::map<int32_t, Detection> open_;
};

}  // namespace strata::online
