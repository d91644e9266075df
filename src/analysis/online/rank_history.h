// RankHistory: what the online detector remembers of one rank (issue 25, items 1 and 2).
//  - Its self baseline: the median and MAD of its own work (step − collective wait) over its last
//    kOnlineSelfWindow learned steps, as NVIDIA's "individual" straggler score, with its usual step (the
//    median step time of those steps) and each summary class's mean over them (what a cause named from the
//    self score is measured against). Score() compares a step with it: the self score (lateness, robust z).
//  - A one-sided CUSUM of the deciding score's robust z (thresholds.h, "Onset"): where a change began.
//  - Which of its last 32 judged steps were late, clearly late and pauses (persistence: lasting, recurring,
//    one-off) and the wall-clock starts of those steps (a detection's onset_unix).
// The baseline learns a step only when the detector says so (Record's `learn`: the rank was on time by the
// deciding score and no change is in progress), so a slowdown in progress is never learned as its normal.
// Invariants: steps are recorded in increasing order; Score() changes nothing and costs O(kOnlineSelfWindow)
// without allocating (the learned values are also kept sorted); memory is O(kOnlineSelfWindow) per rank (the class
// means are exponential, O(1)); a step the rank did not report shifts no bit (bit i is the i-th last step it reported,
// taken as step last − i).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string_view>

#include "analysis/diagnosis/contract_vocabulary.h"
#include "analysis/diagnosis/thresholds.h"
#include "analysis/online/step_summary.h"

namespace strata::online {

/// How a detection's lateness behaves over time (from the late steps since its onset): lasting, recurring or
/// one-off, a closed vocabulary named in one place (contract_vocabulary.h).
using diagnosis::ParsePersistence;
using diagnosis::Persistence;
using diagnosis::PersistenceName;

/// A step against the rank's own past. Without kOnlineSelfMinHistory learned steps it is not `ready` and
/// its lateness and z are 0.
struct SelfScore {
  size_t history = 0;       // learned steps in the baseline
  bool ready = false;       // history >= kOnlineSelfMinHistory
  double baseline_s = 0;    // median own work of the learned steps
  double spread_s = 0;      // their MAD, floored at kOnlineMadFloorShare of usual_step_s
  double usual_step_s = 0;  // median step time of the learned steps
  double late_s = 0;        // own work − baseline_s
  double z = 0;             // 0.6745 late_s / spread_s
};

class RankHistory {
 public:
  SelfScore Score(const RankStepSummary& s) const;
  /// Each summary class's mean over the learned steps (step_summary.h's order).
  const std::array<double, 6>& ClassBaseline() const { return class_mean_; }

  /// Records a judged step: whether the rank was late, clearly late and paused (late by kOnlinePauseSteps
  /// usual steps) in it by the deciding score, the deciding score's z for the CUSUM, and whether the baseline
  /// learns it (the CUSUM's own alarm also stops learning).
  void Record(const RankStepSummary& s, bool late, bool clear, bool pause, double deciding_z, bool learn);

  uint32_t late_bits() const { return late_bits_; }    // bit i: late i reported steps ago
  uint32_t clear_bits() const { return clear_bits_; }  // bit i: clearly late i reported steps ago
  uint32_t pause_bits() const { return pause_bits_; }  // bit i: a pause i reported steps ago
  /// Consecutive on-time steps up to the last recorded one (32 when none of the last 32 was late).
  size_t OnTimeRun() const;
  /// The step at which the CUSUM last rose from 0, or -1 while it is at 0.
  int64_t ChangeStart() const { return cusum_ > 0 ? cusum_start_ : -1; }
  bool ChangeInProgress() const { return cusum_ >= diagnosis::thresholds::kOnlineCusumAlarm; }
  /// The wall-clock start of a step among the last 32 recorded (0: unknown or older).
  double StartOf(int64_t step) const;
  /// Persistence of the late steps from `onset` through the last recorded step (at most 32 steps). With
  /// `pauses`, of the pauses alone (a pause's detection: what recurs is another pause, not a step late by
  /// the minimum effect within its hold, which one pause among noisy steps would otherwise read as recurring),
  /// unless the rank's late run still goes after kOnlineLongWindow steps (lasting: a slowdown that began
  /// with a pause).
  Persistence PersistenceSince(int64_t onset, bool pauses = false) const;
  /// kOnlineRecurringRuns evenly spaced runs of clearly late steps in the last kOnlineRecurringWindow steps,
  /// the last of them ending at the last recorded step: the first run's step; else -1.
  int64_t RecurringOnset() const;

 private:
  struct Learned {
    float work = 0, step = 0;
  };
  std::array<Learned, diagnosis::thresholds::kOnlineSelfWindow> window_{};  // in learning order (a ring)
  // The same values, each sorted: the medians in O(1) and the MAD in O(window) per step.
  std::array<float, diagnosis::thresholds::kOnlineSelfWindow> sorted_work_{}, sorted_step_{};
  size_t count_ = 0, next_ = 0;
  std::array<double, 6> class_mean_{};
  uint32_t late_bits_ = 0, clear_bits_ = 0, pause_bits_ = 0;
  int64_t last_step_ = -1;
  double cusum_ = 0;
  int64_t cusum_start_ = -1;
  std::array<double, 32> starts_{};  // by step % 32, for the steps last_step_ − 31 ... last_step_
};

}  // namespace strata::online
