// OnlineJob: the online detection of one job, the same in `strata agent` (its node's ranks) and in
// `strata serve` (every rank of the job, from all nodes). Summaries arrive rank by rank in any interleaving;
// each rank's steps are numbered by its agent's own count, which starts wherever that agent first saw the
// job, so nodes' counts differ by a constant. Steps are lined up across nodes by their wall-clock start:
// a rank's first summary takes the job step whose start is nearest its own (steps apart by its step time),
// and keeps that offset while its starts stay within `realign_steps` step times of the job step's; past
// that (its agent restarted and counts from 0 again, or missed steps) it is anchored anew (counted). A
// summary without a start (0) keeps its own number. A step is judged (fed to the OnlineDetector) once
// every rank seen so far has reported it, or once some rank is `max_lag` steps past it and it has waited
// `max_wait_s` since a round first saw it (the missing ranks are then counted as gaps): agents publish a
// second's steps at once, so a node's steps may arrive many steps after another's without being missing.
// After each judged step the Gaussian mixture is fitted over the last `mixture_steps` judged steps'
// (rank, step) feature vectors; its low-likelihood points are counted per rank and shown beside the
// detector's findings (a detection the mixture also flags is marked corroborated). Every judged step goes
// to the detector, whatever its number of ranks: with fewer than 4 the detector decides by each rank's self
// score (its own past; online_detector.h), so 1-, 2- and 3-rank jobs are judged too (issue 25).
// Invariants: each (rank, job step) counts once: a summary at or below its rank's last job step is a
// duplicate; one for a step already judged is late (kept as the rank's last step, not judged); steps are
// judged in increasing order; `judged_own` maps judged_through back to each rank's own numbering (what serve
// commits for the job's next owner, job_commit.h, which seeds the next owner's numbering and anchoring: Seed); memory
// is O(ranks × (max_lag + mixture_steps)) plus the starts of the last 64 judged steps.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <string>
#include <vector>

#include "analysis/diagnosis/result.h"
#include "analysis/diagnosis/thresholds.h"
#include "analysis/online/online_detector.h"
#include "analysis/online/step_summary.h"

namespace strata::agent {

struct OnlineJobOptions {
  int64_t max_lag = 3;      // steps a rank may run ahead before an incomplete step is judged anyway
  double max_wait_s = 2.5;  // ... and seconds it waits first (agents publish once a second)
  // A detection that closed (a one-off pause closes after kOnlineOneOffHold on-time steps, often within one
  // round) stays in the view this many seconds of the caller's clock after the call that saw it close.
  double closed_shown_s = 5.0;
  size_t mixture_steps = 8;          // judged steps the mixture is fitted over
  size_t mixture_max_points = 4096;  // the mixture is left out when the window holds more points
  double realign_steps = 0.75;       // a start this many step times from its job step's re-anchors the rank
};

/// What the status and metrics show of a job's online detection.
struct OnlineView {
  std::map<int32_t, int64_t> last_step;  // by rank
  std::map<int32_t, online::RankStepSummary> last_summary;
  uint64_t summaries = 0, duplicates = 0, late = 0, gaps = 0, steps_judged = 0;
  uint64_t summaries_judged = 0;   // summaries in the judged steps (each rank's summary of a step at most once)
  uint64_t steps_self_judged = 0;  // judged steps of fewer than kOnlinePeerMinRanks ranks (self score decides)
  uint64_t realigned = 0;          // ranks anchored anew after their starts left their job steps'
  int64_t judged_through = -1;
  double judged_through_start = 0;        // wall-clock start (Unix s) of judged_through; 0 when not known
  std::map<int32_t, int64_t> judged_own;  // rank -> its own step number (its agent's) of judged_through
  int mixture_k = 0;
  size_t mixture_points = 0;
  std::map<int32_t, int> mixture_anomalies;  // rank -> low-likelihood points in the window
  std::vector<online::Detection> open;       // the detector's open detections, and those closed within
                                             // closed_shown_s (their last state)
  std::map<int32_t, bool> corroborated;      // rank -> the mixture flags it too
};

class OnlineJob {
 public:
  explicit OnlineJob(OnlineJobOptions options = {}) : options_(options) {}

  /// Takes one summary (its step is renumbered to the job's); false when it was a duplicate or late (counted).
  bool Add(online::RankStepSummary s);
  /// Before any summary: continues an earlier owner's numbering (job_commit.h). `judged_through` is that owner's
  /// last judged step (its start `judged_start`, 0 if not known): summaries at or below it are late; each rank
  /// in `offsets` (job step − its own step) is lined up as that owner lined it up, not anchored anew.
  void Seed(int64_t judged_through, double judged_start, const std::map<int32_t, int64_t>& offsets);
  /// Judges every step that is ready; returns the detections that opened (detected_at = `now`).
  std::vector<online::Detection> Advance(double now);
  const OnlineView& view() const { return view_; }

 private:
  struct PendingStep {
    std::vector<online::RankStepSummary> ranks;
    double first_seen = -1;  // `now` of the first Advance that saw the step
  };
  bool Ready(int64_t step, const PendingStep& p, double now) const;
  int64_t JobStep(const online::RankStepSummary& s);
  int64_t Anchor(const online::RankStepSummary& s) const;
  void FitMixture();
  void ShowDetections(const std::vector<online::Detection>& opened, double now);

  OnlineJobOptions options_;
  online::OnlineDetector detector_;
  std::map<int64_t, PendingStep> pending_;                   // by job step
  std::deque<std::vector<online::RankStepSummary>> judged_;  // the mixture's window
  std::map<int32_t, int64_t> offset_;                        // rank -> job step − its own step
  std::map<int64_t, double> step_start_;                     // recent job steps' wall-clock starts
  int64_t max_step_ = -1;
  OnlineView view_;
  std::vector<online::Detection> last_open_;                  // the detector's open detections at the last call
  std::vector<std::pair<online::Detection, double>> closed_;  // closed detections, shown until the time beside
};

/// An open detection as a finding of the `strata diagnose` contract (its cause's layer; rank and step set;
/// the detection's confidence, docs/confidence.md "online"; `corroborated` is shown in its evidence).
diagnosis::Finding DetectionFinding(const online::Detection& d, bool corroborated);

}  // namespace strata::agent
