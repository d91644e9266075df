// The one rule that names a straggler's cause from its differential profile, and what `confidence` means.
// A straggler is late by L ms per late step (its blame: how long the others waited for it). Each candidate
// cause has an excess: the ms per late step that the straggler spent more than its peers in that class of
// work (data loading, host gaps, compute, device idle, transfers, CPU wait ...) in the window before its
// late arrival. The candidate with the largest excess is named when it explains at least
// kMinExplainedShare of L; otherwise the cause is `unknown` (the evidence still lists every excess).
// confidence = the share of the finding's measured effect that the evidence for its named cause accounts
// for: here excess / L, clamped to [0, 1]; 0 for `unknown`. Every finding in strata uses this definition
// (docs/confidence.md lists what "effect" and "evidence" are for each kind of finding).
// Invariant: a named cause always has confidence >= kMinExplainedShare.
#pragma once

#include <string>
#include <vector>

#include "analysis/diagnosis/peer_difference.h"
#include "analysis/diagnosis/thresholds.h"
#include "analysis/diagnosis/vocabulary.h"

namespace strata::diagnosis {

/// A cause needs its excess to cover at least this share of the lateness it is given for.
inline constexpr double kMinExplainedShare = thresholds::kMinExplainedShare;

struct CauseCandidate {
  Cause cause;
  Layer layer;
  double excess_ms;  // per late step, straggler minus the peers' median
};

struct CauseChoice {
  Cause cause = Cause::kUnknown;  // kUnknown when nothing explains enough
  Layer layer = Layer::kNone;     // kNone for unknown
  double excess_ms = 0;           // the largest candidate's excess (named or not)
  double explained = 0;           // that excess / lateness, clamped to [0, 1]
  double confidence = 0;          // explained when a cause is named, else 0
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

/// What the cause means for a straggler, as a phrase for summaries ("its compute takes longer").
const char* CausePhrase(Cause cause);

}  // namespace strata::diagnosis
