// The one impact story (see impact.h and docs/impact.md).
#include "analysis/diagnosis/impact.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "core/round.h"

namespace strata::diagnosis {
namespace {

// The smallest saving a summary writes as a figure (one decimal): below it, "less than 0.1%" (it wrote
// "saves -0.0%" and "saves 0.0%").
constexpr double kSmallestSavingPct = 0.05;

// Rounding slack: impacts are rounded to 0.01 percentage points.
constexpr double kRoundingPct = 0.01;

// Models the findings the what-if cannot see into S (impact.h): the waste grows by their share.
void ModelOutsideFindings(DiagnosisResult* result) {
  WhatIf& w = result->whatif;
  if (w.model == WhatIfModel::kNone) return;
  double extra = 0;  // share of the step
  for (const Finding& f : result->findings)
    if (f.outside_whatif && !ImpactOfStall(f)) extra += f.impact_pct / 100.0;
  if (extra <= 0) return;
  const double S = std::max(1e-9, w.slowdown);
  const double inverse = std::max(1.0 / S - extra, 1e-3);  // 1/S' = 1/S − e, the ideal never below 0.1 %
  const double widened = 1.0 / inverse;
  result->notes.push_back(fmt::format(
      "the what-if includes what only the recording shows (a link that holds every rank alike, at its peers' "
      "rate): S {:.4f} -> {:.4f}, ideal step {:.3f} -> {:.3f} ms",
      w.slowdown, widened, w.ideal_step_ms, w.ideal_step_ms * S / widened));
  w.ideal_step_ms = RoundTo(w.ideal_step_ms * S / widened, 3);
  w.slowdown = RoundTo(widened, 4);
}

// The what-if's waste 1 − 1/S covers at least every straggler's measured lateness: its peers did wait that
// share of the run, whatever the replay's ideal (each phase at its typical value) makes of it. When a lateness
// exceeds the waste (the two are models of one loss: seen by up to 1.4 points on a slowed stage's ranks and
// on intermittent faults), S is raised to 1 / (1 − lateness) and a note says so.
void WidenToLateness(DiagnosisResult* result) {
  WhatIf& w = result->whatif;
  if (w.model == WhatIfModel::kNone || result->stragglers.empty()) return;
  const auto top = std::max_element(result->stragglers.begin(), result->stragglers.end(),
                                    [](const Straggler& a, const Straggler& b) { return a.score < b.score; });
  const double S = std::max(1.0, w.slowdown);
  if (top->score <= 1.0 - 1.0 / S + kRoundingPct / 100.0) return;
  const double widened = 1.0 / std::max(1.0 - top->score, 1e-3);
  result->notes.push_back(fmt::format(
      "rank {}'s peers wait {:.2f}% of the run for it, more than the what-if's 1 - 1/S = {:.2f}% (its ideal "
      "takes each phase at its typical value): S {:.4f} -> {:.4f}, so that the waste covers the measured wait",
      top->rank, 100.0 * top->score, 100.0 * (1.0 - 1.0 / S), w.slowdown, widened));
  if (w.slowdown > 0) w.ideal_step_ms = RoundTo(w.ideal_step_ms * w.slowdown / widened, 3);
  w.slowdown = RoundTo(widened, 4);
}

// A finding about one straggling rank saves at most that rank's lateness: its peers stop waiting for it, and
// in a synchronous job that is all the step can lose (the one lateness figure: Straggler::score). Returns how
// many findings were brought down to it.
size_t CapAtLateness(DiagnosisResult* result) {
  size_t capped = 0;
  for (Finding& f : result->findings) {
    if (ImpactOfStall(f) || !f.rank || f.ranks.size() > 1) continue;
    auto s = std::find_if(result->stragglers.begin(), result->stragglers.end(),
                          [&](const Straggler& st) { return st.rank == *f.rank; });
    if (s == result->stragglers.end()) continue;
    const double lateness = RoundTo(100.0 * s->score, 2);
    if (f.impact_pct <= lateness + kRoundingPct) continue;
    f.summary = RestateSaving(std::move(f.summary), f.impact_pct, lateness);
    f.impact_pct = lateness;
    ++capped;
  }
  return capped;
}

}  // namespace

std::string RestateSaving(std::string summary, double before, double now) {
  const size_t saves = summary.find("saves");
  if (saves == std::string::npos) return summary;
  const std::string old_text = SavingPercent(before);
  const size_t at = summary.find(old_text, saves);
  if (at == std::string::npos) return summary;
  return summary.replace(at, old_text.size(), SavingPercent(now));
}

std::string SavingPercent(double pct) {
  if (pct < kSmallestSavingPct) return fmt::format("less than {:.1f}%", kSmallestSavingPct);
  return fmt::format("{:.1f}%", pct);
}

double WhatIfWaste(const WhatIf& whatif) {
  if (whatif.model == WhatIfModel::kNone || whatif.slowdown <= 1.0) return 0.0;
  return 1.0 - 1.0 / whatif.slowdown;
}

bool ImpactOfStall(const Finding& f) { return f.cause == Cause::kHang || f.cause == Cause::kCollectiveMismatch; }

void ReconcileImpacts(DiagnosisResult* result) {
  ModelOutsideFindings(result);
  WidenToLateness(result);
  if (const size_t over = CapAtLateness(result); over > 0)
    result->notes.push_back(fmt::format(
        "{} finding(s) would have saved more than their rank's lateness (what its peers wait): each is given "
        "that lateness, all that fixing one rank can save",
        over));
  if (result->whatif.model == WhatIfModel::kNone) return;
  std::stable_sort(result->findings.begin(), result->findings.end(),
                   [](const Finding& a, const Finding& b) { return a.impact_pct > b.impact_pct; });
  double left = 100.0 * WhatIfWaste(result->whatif);
  size_t capped = 0;
  for (Finding& f : result->findings) {
    if (ImpactOfStall(f)) continue;
    const double allowed = std::max(0.0, RoundTo(left, 2));
    if (f.impact_pct > allowed + kRoundingPct) {
      f.summary = RestateSaving(std::move(f.summary), f.impact_pct, allowed);
      f.impact_pct = allowed;
      ++capped;
    }
    left -= f.impact_pct;
  }
  if (capped > 0)
    result->notes.push_back(fmt::format(
        "{} finding(s) saved more alone than the what-if leaves after the findings above them: each is given "
        "what it saves on top of those (together at most 1 - 1/S = {:.1f}% of step time, S = {:.4f})",
        capped, 100.0 * WhatIfWaste(result->whatif), result->whatif.slowdown));
}

std::string ImpactSentence(const DiagnosisResult& result) {
  if (result.whatif.model == WhatIfModel::kNone || result.findings.empty()) return {};
  const Finding& f = result.findings.front();
  if (ImpactOfStall(f)) return {};
  const double waste = 100.0 * WhatIfWaste(result.whatif);
  std::string late;
  if (f.rank)
    for (const Straggler& s : result.stragglers)
      if (s.rank == *f.rank)
        late = fmt::format("rank {} is late {:.1f} ms per step, so its peers wait {:.1f}% of a step; ", s.rank,
                           s.late_ms_per_step, 100.0 * s.score);
  return fmt::format(
      "{}fixing the top finding saves {} of step time; the what-if's S = {:.2f} allows at most 1 - 1/S = "
      "{:.1f}% for all findings together",
      late, SavingPercent(f.impact_pct), result.whatif.slowdown, waste);
}

}  // namespace strata::diagnosis
