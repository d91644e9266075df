// Which ranks changed unlike the rest (see rank_changes.h).
#include "analysis/diff/rank_changes.h"

#include <cmath>
#include <set>

#include "core/robust_stats.h"

namespace strata::diff {

namespace {

constexpr const char* kStepTime = "step time";

/// The change of `measure` (kStepTime or a kind) on one rank.
double ChangeOf(const RankTotals& base, const RankTotals& test, const std::string& measure) {
  if (measure == kStepTime) return test.step_time_us - base.step_time_us;
  auto total = [&](const RankTotals& t) {
    auto it = t.kind_us.find(measure);
    return it == t.kind_us.end() ? 0.0 : it->second;
  };
  return total(test) - total(base);
}

}  // namespace

std::vector<RankChange> CompareRanks(const RankTotalsByRank& base, const RankTotalsByRank& test) {
  std::vector<RankChange> out;
  std::vector<std::pair<const RankTotals*, const RankTotals*>> pairs;
  std::set<std::string> measures = {kStepTime};
  for (const auto& [rank, b] : base) {
    auto it = test.find(rank);
    if (it == test.end() || !b.step_rows || !it->second.step_rows) continue;
    out.push_back({rank, b.step_time_us, it->second.step_time_us});
    pairs.emplace_back(&b, &it->second);
    for (const RankTotals* t : {&b, &it->second})
      for (const auto& [kind, us] : t->kind_us) measures.insert(kind);
  }
  if (out.size() < kMinRanksToCompare) return out;
  std::vector<double> bases;
  for (const RankChange& r : out) bases.push_back(r.base_step_time_us);
  const double floor = kRankChangeShare * Median(bases);
  std::vector<double> best_away(out.size(), 0);
  for (const std::string& measure : measures) {
    std::vector<double> changes;
    for (const auto& [b, t] : pairs) changes.push_back(ChangeOf(*b, *t, measure));
    const double median = Median(changes), spread = 1.4826 * Mad(changes);
    for (size_t i = 0; i < out.size(); ++i) {
      const double away = std::fabs(changes[i] - median);
      if (away <= kRankChangeZ * spread || away <= floor || away <= best_away[i]) continue;
      best_away[i] = away;
      out[i].differs = true;
      out[i].measure = measure;
      out[i].measure_change_us = changes[i];
      out[i].measure_median_us = median;
    }
  }
  return out;
}

}  // namespace strata::diff
