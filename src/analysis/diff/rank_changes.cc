// Which ranks changed unlike the rest (see rank_changes.h).
#include "analysis/diff/rank_changes.h"

#include <cmath>
#include <set>

#include "core/robust_stats.h"
#include "model/collectives.h"
#include "model/kernel_type.h"

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

double NameChange(const RankTotals& base, const RankTotals& test, const std::string& name) {
  auto total = [&](const RankTotals& t) {
    auto it = t.name_us.find(name);
    return it == t.name_us.end() ? 0.0 : it->second;
  };
  return total(test) - total(base);
}

/// Two ranks: per name, the rank whose change stands alone (rank_changes.h).
void CompareTwoRanks(const std::vector<std::pair<const RankTotals*, const RankTotals*>>& pairs, double floor,
                     std::vector<RankChange>* out) {
  std::set<std::string> names;
  for (const auto& [b, t] : pairs)
    for (const RankTotals* side : {b, t})
      for (const auto& [name, us] : side->name_us) names.insert(name);
  for (const std::string& name : names) {
    const double change[2] = {NameChange(*pairs[0].first, *pairs[0].second, name),
                              NameChange(*pairs[1].first, *pairs[1].second, name)};
    for (size_t i = 0; i < 2; ++i) {
      const double mine = change[i], other = change[1 - i];
      RankChange& r = (*out)[i];
      if (std::fabs(mine) <= floor || std::fabs(other) > kTwoRankOtherShare * std::fabs(mine)) continue;
      if (r.differs && std::fabs(mine) <= std::fabs(r.measure_change_us)) continue;
      r.differs = true;
      r.measure = name;
      r.measure_change_us = mine;
      r.measure_median_us = other;
    }
  }
}

}  // namespace

bool IsWaitOrStepRow(std::string_view name) {
  return model::IsCpuCollective(name) || IsCommunicationKernel(name) || name.substr(0, 13) == "ProfilerStep#";
}

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
  if (out.size() < 2) return out;
  std::vector<double> bases;
  for (const RankChange& r : out) bases.push_back(r.base_step_time_us);
  const double floor = kRankChangeShare * Median(bases);
  if (out.size() == 2) {
    CompareTwoRanks(pairs, floor, &out);
    return out;
  }
  if (out.size() < kMinRanksToCompare) return out;
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
