// The one impact story (docs/impact.md): a finding's impact_pct is the share of the no-delay step that fixing
// it saves under the what-if model, so
//   - no finding saves more than the what-if's waste 1 − 1/S (S = no-delay step / ideal step), and
//   - the findings' savings, taken in order (each one's saving on top of those above it), never sum past it.
// Findings whose cause the what-if cannot see (a recording shows a slow or busy link that holds every rank
// alike, so the traces' ideal step carries it too) are modelled instead of shrunk: that link's transfers at
// its peers' rate take the finding's share e of the step off the ideal, S' = S / (1 − e·S), so the waste
// grows by e (1 − 1/S' = 1 − 1/S + e) and the finding keeps its saving.
// Hangs and collective mismatches are exempt: their impact is 100 % of the stalled time, not of a step.
// A straggler's score is its lateness as a share of the median step ("peers wait" is the peers' wait).
// A finding about one straggling rank saves at most that rank's lateness (its score: what its peers wait).
// The waste covers every straggler's lateness: when one exceeds it, S is raised to 1 / (1 − lateness).
// Invariants after ReconcileImpacts: every straggler's score ≤ 1 − 1/S (+ rounding); Σ impact_pct of modelled findings
// ≤ 100 (1 − 1/S) + 0.01 (rounding); a one-rank finding's impact_pct ≤ 100 × its straggler's score + 0.01.
#pragma once

#include <string>

#include "analysis/diagnosis/result.h"

namespace strata::diagnosis {

/// The what-if's waste 1 − 1/S as a share (0 when S ≤ 1 or there is no what-if).
double WhatIfWaste(const WhatIf& whatif);

/// True when a finding's impact is a share of the stalled time (hang, mismatch), not of a step.
bool ImpactOfStall(const Finding& f);

/// Applies the story above to every finding (their summaries restate the new figure) and says in the notes
/// what changed. Run after every pass that adds findings, before the minimum-effect filter.
void ReconcileImpacts(DiagnosisResult* result);

/// A saving in % of step time as every finding's summary writes it after "saves": "32.8%", and "less than
/// 0.1%" for one that would print 0.0% or -0.0%. RestateSaving finds the figure by this text.
std::string SavingPercent(double pct);

/// `summary` with its "saves N%" figure (SavingPercent(before)) restated as SavingPercent(now); unchanged when it
/// writes no such figure.
std::string RestateSaving(std::string summary, double before, double now);

/// The sentence that relates a finding's saving, its rank's lateness and S ("rank 1 is late 184 ms per step
/// (68 % of the 271 ms step); fixing it saves 32.8 % of step time, 1 − 1/S for S = 1.49 allows 32.8 %").
/// Empty when there is no what-if or no finding with a step-time impact.
std::string ImpactSentence(const DiagnosisResult& result);

}  // namespace strata::diagnosis
