// The --min-effect filter on the findings shown (shown_findings.h).
#include "analysis/diagnosis/shown_findings.h"

#include <fmt/format.h>

#include <set>
#include <utility>
#include <vector>

namespace strata::diagnosis {

// The minimum effect filters what is shown, whichever pass made it, and changes nothing else (the stragglers
// stay, the status counts what was hidden), with one exception: a straggler the result names keeps its own
// finding (the one about its rank that saves the most), so that the cause of a named straggler never depends
// on the filter. A straggler passed the model's own lateness floor; what fixing its op saves can be smaller
// than its lateness (the second-latest rank becomes the last), and hiding that finding left the verdict saying
// "cause not determined" of a straggler whose cause was determined.
void HideSmallFindings(double min_effect, DiagnosisResult* result) {
  std::set<const Finding*> kept;
  for (const Straggler& s : result->stragglers) {
    const Finding* best = nullptr;
    for (const Finding& f : result->findings)
      if (f.rank && *f.rank == s.rank && (!best || f.impact_pct > best->impact_pct)) best = &f;
    if (best) kept.insert(best);
  }
  std::vector<Finding> shown;
  for (Finding& f : result->findings)
    if (f.impact_pct >= 100.0 * min_effect || kept.count(&f)) shown.push_back(std::move(f));
  result->findings_hidden = result->findings.size() - shown.size();
  result->findings = std::move(shown);
  const size_t n = result->findings_hidden;
  if (n > 0)
    result->notes.push_back(fmt::format(
        "{} {} save less than the minimum effect ({:.1f}% of step time) and {} not shown (lower --min-effect to see "
        "{})",
        n, n == 1 ? "finding would" : "findings would", 100.0 * min_effect, n == 1 ? "is" : "are",
        n == 1 ? "it" : "them"));
}

}  // namespace strata::diagnosis
