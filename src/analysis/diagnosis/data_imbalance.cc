// The data_imbalance verdict of the trace paths (see data_imbalance.h).
#include "analysis/diagnosis/data_imbalance.h"

#include <fmt/format.h>

#include <algorithm>

#include "core/round.h"

namespace strata::diagnosis {

bool RanksLateInTurn(const StragglerAnalysis& analysis) {
  if (analysis.late_ranks.size() < 2) return false;
  size_t late_steps = 0;
  for (const auto& ranks : analysis.late) late_steps += std::find(ranks.begin(), ranks.end(), true) != ranks.end();
  return late_steps >= 2 && 2 * late_steps >= analysis.late.size();
}

std::optional<Finding> DataImbalanceFinding(const StragglerAnalysis& analysis, const std::vector<int32_t>& rank_numbers,
                                            double loss_share, const DiagnosisResult& so_far, double min_effect) {
  if (!so_far.stragglers.empty() || !RanksLateInTurn(analysis) || loss_share < min_effect) return std::nullopt;
  Finding f;
  f.cause = "data_imbalance";
  f.layer = "data";
  for (int32_t r : analysis.late_ranks)
    if (r >= 0 && static_cast<size_t>(r) < rank_numbers.size()) f.ranks.push_back(rank_numbers[static_cast<size_t>(r)]);
  f.impact_pct = RoundTo(100.0 * loss_share, 2);
  f.confidence = 0.6;
  f.summary = fmt::format(
      "the slowest rank changes from step to step ({} ranks take turns): per-step load is "
      "uneven across ranks; balancing it saves {:.1f}% of step time",
      f.ranks.size(), f.impact_pct);
  f.evidence["late_pairs"] = analysis.late_pairs;
  return f;
}

}  // namespace strata::diagnosis
