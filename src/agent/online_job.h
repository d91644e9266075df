// OnlineJob: the online detection of one job, the same in `strata agent` (its node's ranks) and in
// `strata serve` (every rank of the job, from all nodes). Summaries arrive rank by rank in any interleaving;
// each rank's steps are numbered by its own sequence. A step is judged (fed to the OnlineDetector) once
// every rank seen so far has reported it, or once some rank is `max_lag` steps past it (the missing ranks
// are then counted as gaps). After each judged step the Gaussian mixture is fitted over the last
// `mixture_steps` judged steps' (rank, step) feature vectors; its low-likelihood points are counted per rank
// and shown beside the detector's findings (a detection the mixture also flags is marked corroborated).
// A step with fewer than `min_ranks` summaries is not given to the detector (a rank against one or two
// peers has no robust reference: on a 2-rank job, ordinary jitter opened findings); the agent's window
// diagnosis covers such small jobs.
// Invariants: each (rank, step) counts once: a summary at or below its rank's last step is a duplicate;
// one for a step already judged is late (kept as the rank's last step, not judged); steps are judged in
// increasing order; memory is O(ranks × (max_lag + mixture_steps)).
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <string>
#include <vector>

#include "analysis/diagnosis/result.h"
#include "analysis/online/online_detector.h"
#include "analysis/online/step_summary.h"

namespace strata::agent {

struct OnlineJobOptions {
  int64_t max_lag = 3;               // steps a rank may run ahead before an incomplete step is judged anyway
  size_t min_ranks = 4;              // fewer ranks in a step give no robust peer reference: not fed to the detector
  size_t mixture_steps = 8;          // judged steps the mixture is fitted over
  size_t mixture_max_points = 4096;  // the mixture is left out when the window holds more points
};

/// What the status and metrics show of a job's online detection.
struct OnlineView {
  std::map<int32_t, int64_t> last_step;  // by rank
  std::map<int32_t, online::RankStepSummary> last_summary;
  uint64_t summaries = 0, duplicates = 0, late = 0, gaps = 0, steps_judged = 0;
  uint64_t steps_too_few_ranks = 0;  // judged steps not given to the detector (fewer than min_ranks)
  int64_t judged_through = -1;
  int mixture_k = 0;
  size_t mixture_points = 0;
  std::map<int32_t, int> mixture_anomalies;  // rank -> low-likelihood points in the window
  std::vector<online::Detection> open;       // the detector's open detections
  std::map<int32_t, bool> corroborated;      // rank -> the mixture flags it too
};

class OnlineJob {
 public:
  explicit OnlineJob(OnlineJobOptions options = {}) : options_(options) {}

  /// Takes one summary; false when it was a duplicate or late (counted).
  bool Add(const online::RankStepSummary& s);
  /// Judges every step that is ready; returns the detections that opened (detected_at = `now`).
  std::vector<online::Detection> Advance(double now);
  const OnlineView& view() const { return view_; }

 private:
  bool Ready(int64_t step, size_t have) const;
  void FitMixture();

  OnlineJobOptions options_;
  online::OnlineDetector detector_;
  std::map<int64_t, std::vector<online::RankStepSummary>> pending_;  // step -> summaries
  std::deque<std::vector<online::RankStepSummary>> judged_;          // the mixture's window
  int64_t max_step_ = -1;
  OnlineView view_;
};

/// An open detection as a finding of the `strata diagnose` contract (its cause's layer; rank and step set).
diagnosis::Finding DetectionFinding(const online::Detection& d, bool corroborated);

}  // namespace strata::agent
