// The data_imbalance verdict of the trace paths (see data_imbalance.h).
#include "analysis/diagnosis/data_imbalance.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <utility>

#include "analysis/diagnosis/cause_choice.h"
#include "analysis/diagnosis/impact.h"
#include "analysis/diagnosis/thresholds.h"
#include "core/robust_stats.h"
#include "core/round.h"

namespace strata::diagnosis {

bool RanksLateInTurn(const StragglerAnalysis& analysis) {
  if (analysis.late_ranks.size() < 2) return false;
  size_t late_steps = 0;
  for (const auto& ranks : analysis.late) late_steps += std::find(ranks.begin(), ranks.end(), true) != ranks.end();
  return late_steps >= thresholds::kMinLateSteps &&
         static_cast<double>(late_steps) >=
             thresholds::kImbalanceLateStepShare * static_cast<double>(analysis.late.size());
}

std::optional<OpComparison> CompareOps(const std::vector<OpOccurrence>& own,
                                       const std::vector<std::vector<OpOccurrence>>& peers) {
  std::map<std::pair<StringId, uint32_t>, std::vector<double>> peer_durs;
  for (const auto& ops : peers)
    for (const OpOccurrence& o : ops) peer_durs[{o.name, o.index}].push_back(o.dur_ns);
  std::vector<std::pair<double, double>> ratio_weight;
  double total = 0;
  OpComparison out;
  for (const OpOccurrence& o : own) {
    if (!o.leaf || !o.compute) continue;
    auto it = peer_durs.find({o.name, o.index});
    if (it == peer_durs.end()) continue;
    const double peer = Median(it->second);
    if (peer < thresholds::kImbalanceMinOpNs) continue;
    ratio_weight.emplace_back(o.dur_ns / peer, peer);
    total += peer;
    out.excess_ns += o.dur_ns - peer;
  }
  if (ratio_weight.empty()) return std::nullopt;
  std::sort(ratio_weight.begin(), ratio_weight.end());
  out.scaling = ratio_weight.back().first;
  double acc = 0;
  for (const auto& [ratio, weight] : ratio_weight) {
    acc += weight;
    if (2 * acc >= total) {
      out.scaling = ratio;
      break;
    }
  }
  return out;
}

namespace {

// A late pair whose ops ran slower across the board by enough to make it late (see data_imbalance.h).
bool Broad(const OpComparison& c, double lateness_ns, double min_effect) {
  return c.scaling >= 1.0 + min_effect && c.excess_ns >= thresholds::kMinExplainedShare * lateness_ns;
}

}  // namespace

LoadScaling MeasureLoadScaling(const StragglerAnalysis& analysis, const StepOps& ops, const std::vector<int32_t>& role,
                               double min_effect) {
  LoadScaling out;
  for (size_t s = 0; s < analysis.late.size(); ++s) {
    const size_t ranks = analysis.late[s].size();
    if (std::find(analysis.late[s].begin(), analysis.late[s].end(), true) == analysis.late[s].end()) continue;
    std::vector<std::vector<OpOccurrence>> by_rank(ranks);
    for (size_t r = 0; r < ranks; ++r) by_rank[r] = ops(s, r);
    for (size_t r = 0; r < ranks; ++r) {
      if (!analysis.late[s][r]) continue;
      auto same_role = [&](size_t q) { return role.empty() || role[q] == role[r]; };
      bool any_same = false;
      for (size_t q = 0; q < ranks; ++q) any_same |= q != r && same_role(q);
      std::vector<std::vector<OpOccurrence>> peers;
      for (size_t q = 0; q < ranks; ++q)
        if (q != r && (!any_same || same_role(q))) peers.push_back(by_rank[q]);
      if (const auto c = CompareOps(by_rank[r], peers)) {
        ++out.measured;
        out.broad += Broad(*c, JudgedLatenessNs(analysis, s, r), min_effect);
        out.scaling.push_back(c->scaling);
      }
    }
  }
  return out;
}

std::optional<Finding> DataImbalanceFinding(const StragglerAnalysis& analysis, const std::vector<int32_t>& rank_numbers,
                                            double loss_share, const LoadScaling& load,
                                            const std::vector<Straggler>& stragglers, double min_effect) {
  if (!stragglers.empty() || !RanksLateInTurn(analysis) || loss_share < min_effect) return std::nullopt;
  if (load.measured == 0 ||
      static_cast<double>(load.broad) < thresholds::kImbalanceBroadShare * static_cast<double>(load.measured))
    return std::nullopt;
  Finding f;
  for (RankIndex r : analysis.late_ranks)
    if (r.value() < rank_numbers.size()) f.ranks.push_back(NumberOf(r, rank_numbers));
  f.impact_pct = RoundTo(100.0 * loss_share, 2);
  // Effect: the late pairs; evidence: those whose ops ran slower across the board (cause_choice.h).
  SetCause(NameCause(PatternEvidence{.pattern = Pattern::kRanksLateInTurn,
                                     .explained = static_cast<double>(load.broad),
                                     .effect = static_cast<double>(load.measured)}),
           &f);
  f.summary = fmt::format(
      "the slowest rank changes from step to step ({} ranks take turns, their ops {:.0f}% slower than their "
      "peers' in those steps): per-step load is uneven across ranks; balancing it saves {} of step time",
      f.ranks.size(), 100.0 * (Median(load.scaling) - 1.0), SavingPercent(f.impact_pct));
  f.evidence.kind = LoadImbalanceEvidence{analysis.late_pairs, load.broad, Median(load.scaling), std::nullopt};
  return f;
}

}  // namespace strata::diagnosis
