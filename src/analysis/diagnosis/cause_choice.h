// The one place a finding's cause is named (NameCause), and what `confidence` means. Every pass that makes or
// refines a finding hands NameCause its evidence as a typed value and sets what comes back with SetCause; no
// other code in src/analysis writes Finding::cause (tests/cli/check_cause_assignment.py). The kinds of
// evidence and the rule each follows:
//   ProfileEvidence   — a rank's work against its peers' (the differential profile, a worker's compute against
//                       its transfers, the load imbalance of op tables, the online step summaries): ChooseCause.
//   CounterEvidence   — the rank's counter means against its peers' median over its late steps (SM clock, PCIe,
//                       NIC): refines a compute cause to thermal_throttling / pcie_pressure, a communication
//                       cause to network_contention (by TrafficEvidence's rule); otherwise names nothing new.
//   RecordingEvidence — the recorder's layer candidates for a straggler (cross_layer.h): replaces a trace-level
//                       guess (slow_compute, host_stall, launch_overhead, unknown; or no finding) when the best
//                       explains kMinExplainedShare of the lateness. A cgroup quota that explains enough comes
//                       first (a throttled thread stays runnable while others run, so it explains the run-queue
//                       wait too); foreign traffic on the rank's own link (TrafficEvidence's rule) comes before
//                       everything.
//   TrafficEvidence   — the bytes on a rank's link against its peers' median: network_contention's one rule,
//                       whichever source measured them (a trace's NIC counter, a recording's network namespace;
//                       the counter and recording evidence above hand it theirs, the recording's link and CPU
//                       passes call it directly).
//   PatternEvidence   — a pattern a pass detected by its own rule that is itself the cause (a stopped rank, a
//                       collective mismatch, a slow stage, ranks late in turn, a slower link, CPU lost to other
//                       processes or to a cgroup quota): the pattern's cause and layer, from one table.
// The profile rule:
// A straggler is late by L ms per late step (its blame: how long the others waited for it). Each candidate
// cause has an excess: the ms per late step that the straggler spent more than its peers in that class of
// work (data loading, host gaps, compute, device idle, transfers, CPU wait ...) in the window before its
// late arrival. The candidate with the largest excess is named when it explains at least
// kMinExplainedShare of L; otherwise the cause is `unknown` (the evidence still lists every excess).
// confidence = the share of the finding's measured effect that the evidence for its named cause accounts
// for: here excess / L, clamped to [0, 1]; 0 for `unknown`. Every finding in strata uses this definition
// (docs/confidence.md lists what "effect" and "evidence" are for each kind of finding).
// Invariant: a named cause always has confidence >= kMinExplainedShare; a second cause of the same rank's
// lateness (NameSecondCause: the machine slowed the rank beside a fault, say) has confidence >=
// kMinSecondCauseShare and is another finding, never a change to the first.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "analysis/diagnosis/contract_vocabulary.h"
#include "analysis/diagnosis/peer_difference.h"
#include "analysis/diagnosis/thresholds.h"

namespace strata::diagnosis {

/// A cause needs its excess to cover at least this share of the lateness it is given for.
inline constexpr double kMinExplainedShare = thresholds::kMinExplainedShare;
/// A second cause needs its excess to cover at least this share of the same lateness (NameSecondCause).
inline constexpr double kMinSecondCauseShare = thresholds::kMinSecondCauseShare;

struct CauseCandidate {
  Cause cause;
  Layer layer;
  double excess_ms;  // per late step, straggler minus the peers' median
};

struct CauseChoice {
  Cause cause = Cause::kUnknown;  // kUnknown when nothing explains enough
  Layer layer = Layer::kNone;     // kNone for unknown
  double excess = 0;              // the deciding evidence's excess (named or not), in its lateness's unit (ms; a share)
  double explained = 0;           // that excess / lateness, clamped to [0, 1]
  double confidence = 0;          // explained when a cause is named, else 0
  std::string why;                // what the evidence shows, for the finding's summary ("" when the pass words it)
  // true: this evidence names the finding's cause (kUnknown too: nothing explains enough); false, the default: it
  // names no new cause and the finding keeps the one it has. Only a rule of cause_choice.cc sets it.
  bool names = false;
};

/// The candidates a differential profile (peer_difference.h) measures, for every path that compares a
/// rank's windows with its peers': data loading; host gaps, where ops were recorded at all (`ops_observed`:
/// a job recorded with nothing but its collectives shows only gaps); on a GPU job the device's busy time and
/// launch overhead (device idle, `device_idle_ms` as the path measures it, while the host computes), else
/// host compute.
std::vector<CauseCandidate> ProfileCandidates(const ProfileExcess& e, bool gpu, bool ops_observed,
                                              double device_idle_ms);

/// Picks the candidate with the largest excess and applies the rule above. `lateness_ms` <= 0 names nothing.
CauseChoice ChooseCause(const std::vector<CauseCandidate>& candidates, double lateness_ms);

/// confidence for a finding whose evidence accounts for `explained_ms` of an effect of `effect_ms`.
double ExplainedShare(double explained_ms, double effect_ms);

/// Evidence kinds for NameCause (see the top of this file).
struct ProfileEvidence {
  std::vector<CauseCandidate> candidates;
  double lateness_ms = 0;  // the effect they must explain, in the candidates' unit
};

/// A counter's mean on the rank and the median of its peers' means.
struct CounterMeans {
  double own = 0, peers = 0;
};
struct CounterEvidence {
  Cause named = Cause::kUnknown;  // the cause named so far
  double confidence = 0;          // the finding's confidence so far (kept: counters refine, not re-measure)
  std::optional<CounterMeans> sm_clock_mhz, pcie_bytes, nic_bytes;
  double device_slowdown = 0;  // the rank's device-busy excess as a share of its peers' time (0: not known)
};

/// A rank's link as measured: its bytes per second and its peers' median, and its capacity (bits/s; 0 when not
/// known, as for a counter track): what network_contention's rule reads (LinkCarriesForeignTraffic).
struct LinkLoad {
  CounterMeans bytes_per_s;
  double capacity_bps = 0;
};

/// One layer's candidate cause from a recording: its excess over the peers' median as a share of the window.
struct RecordedCandidate {
  Cause cause = Cause::kUnknown;
  Layer layer = Layer::kNone;
  double excess = 0;
  std::string what;  // what the recording shows, for the summary
  /// The excess net of time another candidate counts too (a wait on waking from a page-in behind another
  /// process is the sleep's cost and that process's): what it adds as a second cause. Negative: all of it.
  double excess_beside = -1;
  double Beside() const { return excess_beside < 0 ? excess : excess_beside; }
};
struct RecordingEvidence {
  std::optional<Cause> named;                 // the traces' cause for the rank; nullopt: no finding there
  std::vector<RecordedCandidate> candidates;  // the first is cgroup throttling (see the top of this file)
  std::optional<LinkLoad> link;               // the rank's link traffic and its peers', when recorded
  double late_share = 0;                      // the rank's lateness as a share of the step
};

/// Who measured a rank's link traffic, which sets the bar it must clear (LinkCarriesForeignTraffic).
enum class TrafficSource {
  kCounterTrack,  // a trace's nic_bytes counter over the late steps, beside transfers the traces measured slow
  kRecording,     // the bytes of the rank's own network namespace in a recording, judged on their own
};
struct TrafficEvidence {
  TrafficSource source;
  LinkLoad link;
  double explained = 1, effect = 1;  // confidence = ExplainedShare(explained, effect)
};

/// network_contention's one statistic and rule: the rank's link carries foreign traffic when its bytes per
/// second reach a multiple of its peers' median plus a floor, the multiple and floor by the source (thresholds.h:
/// kNicBusyMultiple for a counter track, which only refines transfers the traces already measured slow;
/// kForeignTrafficBytesMultiple for a recording, whose traffic alone names the cause, with a floor of
/// kMinRecordedExcess of the link's capacity (one direction's bytes) when known, else
/// kMinForeignTrafficBytesPerS). Never true when that bar is 0 (no peer traffic and no floor).
bool LinkCarriesForeignTraffic(TrafficSource source, const LinkLoad& link);

enum class Pattern {
  kRankStopped,         // peers wait in a collective the rank never entered (stall.h)
  kCollectiveMismatch,  // ranks at one sequence number called different ops or sizes
  kSlowStage,           // every rank of a pipeline stage is slower than the other stages
  kRanksLateInTurn,     // the slowest rank changes from step to step with broad load differences
  kSlowTransfers,       // a rank's transfers take longer in every one of its groups (its own link)
  kSlowerLink,          // a link busy far longer than its peers' for the same bytes
  kCpuTakenByOthers,    // run-queue wait while other processes held the CPU
  kCgroupThrottled,     // CPU time withheld by a cgroup quota
};
struct PatternEvidence {
  Pattern pattern;
  double explained = 1, effect = 1;  // confidence = ExplainedShare(explained, effect)
  std::optional<Layer> layer;        // where it was found, when the pattern's own layer is not fixed (a stop)
};

/// The one rule: the cause (layer, confidence, why) the evidence names.
CauseChoice NameCause(const ProfileEvidence& e);
CauseChoice NameCause(const CounterEvidence& e);
/// Whether counters can refine a finding of this cause at all (a compute or communication cause, or unknown).
bool CountersMayRefine(Cause named);
CauseChoice NameCause(const RecordingEvidence& e);
/// A second cause of the same lateness, beside `first` (the cause the rank's finding names, by the recording
/// or by the traces): the recorded candidate of another cause with the largest excess beside the others
/// (RecordedCandidate::Beside: time two candidates both count is not a second cause), when it explains at least
/// kMinSecondCauseShare of the lateness. Never cpu_contention beside cpu_throttling: a throttled group's threads
/// queue, once the quota is refilled, behind what ran meanwhile, so the quota explains that wait (the
/// throttling candidate counts it). Foreign traffic is never a second cause: it is what makes transfers slow,
/// not another cost beside them. Names nothing (`names` false) without a first cause or a candidate that
/// explains enough.
CauseChoice NameSecondCause(const RecordingEvidence& e, std::optional<Cause> first);
/// network_contention when LinkCarriesForeignTraffic, with why; otherwise names nothing (`names` false).
CauseChoice NameCause(const TrafficEvidence& e);
CauseChoice NameCause(const PatternEvidence& e);

/// Sets a named cause on a finding: cause, layer and confidence (rounded to 2 places). Evidence that names
/// nothing new (`names` false) leaves the finding as it is.
struct Finding;
void SetCause(const CauseChoice& choice, Finding* f);

/// What the cause means for a straggler, as a phrase for summaries ("its compute takes longer").
const char* CausePhrase(Cause cause);

}  // namespace strata::diagnosis
