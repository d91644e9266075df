// The HTML report's timeline as the analysis measures it (see timeline_facts.h).
#include "analysis/diagnosis/timeline_facts.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "analysis/diagnosis/group_diagnosis.h"
#include "analysis/diagnosis/peer_difference.h"
#include "core/robust_stats.h"

namespace strata::diagnosis {

namespace {

/// The step index whose busy time spreads most over ranks (max − median); 0 when all are alike.
size_t WorstStep(const std::vector<std::vector<double>>& busy, size_t steps) {
  size_t worst = 0;
  double widest = -1;
  for (size_t s = 0; s < steps; ++s) {
    std::vector<double> v;
    for (const auto& row : busy)
      if (!std::isnan(row[s])) v.push_back(row[s]);
    if (v.empty()) continue;
    const double spread = *std::max_element(v.begin(), v.end()) - Median(v);
    if (spread > widest) widest = spread, worst = s;
  }
  return worst;
}

/// The top finding's rank, else the first straggler, else the busiest in the step of the ranks the top finding
/// names (a slow stage, ranks taking turns), as a rank index of the store; none when the diagnosis names none.
std::optional<size_t> LateRank(const TraceStore& store, const DiagnosisResult& result,
                               const std::vector<std::vector<double>>& busy, size_t step_index) {
  std::map<int32_t, size_t> index_of;
  for (size_t r = 0; r < store.ranks.size(); ++r) index_of[store.ranks[r].rank] = r;
  const Finding* top = result.findings.empty() ? nullptr : &result.findings.front();
  if (top && top->rank && index_of.count(top->rank->value())) return index_of[top->rank->value()];
  for (const Straggler& s : result.stragglers)
    if (index_of.count(s.rank.value())) return index_of[s.rank.value()];
  std::optional<size_t> busiest;
  for (size_t r = 0; top && r < busy.size(); ++r) {
    const bool named = std::count(top->ranks.begin(), top->ranks.end(), RankNumber(store.ranks[r].rank)) > 0;
    if (named && !std::isnan(busy[r][step_index]) && (!busiest || busy[r][step_index] > busy[*busiest][step_index]))
      busiest = r;
  }
  return busiest;
}

/// The late rank's busy time in the step against its peers' median (see timeline_facts.h); none when no peer
/// has the step or the late rank lacks it.
std::optional<PeerComparison> BusyAgainstPeers(const DrawnFacts& facts, size_t late, size_t step_index) {
  const std::vector<std::vector<double>>& busy = facts.busy_ns;
  std::vector<size_t> peers;
  for (size_t r = 0; r < busy.size(); ++r)
    if (r != late && !std::isnan(busy[r][step_index]) &&
        (facts.stages.empty() || facts.stages[r] == facts.stages[late]))
      peers.push_back(r);
  if (peers.empty() || std::isnan(busy[late][step_index])) return std::nullopt;
  return PeerComparison{busy[late][step_index], PeerMedian(peers, [&](size_t q) { return busy[q][step_index]; }),
                        peers.size()};
}

}  // namespace

std::vector<int32_t> RankStages(const TraceStore& store, const model::JobModel& job, const DiagnosisResult& result) {
  std::vector<int32_t> stages;
  for (const RankInfo& r : store.ranks) stages.push_back(r.pp_stage);
  if (std::find(stages.begin(), stages.end(), -1) != stages.end()) {
    if (!result.layout.pipeline_stages) return {};
    stages = PipelineStages(store, job.collectives, store.ranks.size());
  }
  if (std::set<int32_t>(stages.begin(), stages.end()).size() < 2) return {};
  return stages;
}

TimelineFacts MeasureTimeline(const TraceStore& store, const model::JobModel& job, const DiagnosisResult& result,
                              const DrawnFacts& facts) {
  TimelineFacts t;
  t.step_index = WorstStep(facts.busy_ns, job.steps.steps.size());
  t.late_rank = LateRank(store, result, facts.busy_ns, t.step_index);
  if (!t.late_rank || facts.busy_is_compute) return t;
  const int64_t step = job.steps.steps[t.step_index];
  if (auto arrivals = facts.latest_arrival.find(store.ranks[*t.late_rank].rank); arrivals != facts.latest_arrival.end())
    if (auto at = arrivals->second.find(step); at != arrivals->second.end()) t.chain_collective = at->second;
  t.busy_vs_peers = BusyAgainstPeers(facts, *t.late_rank, t.step_index);
  return t;
}

}  // namespace strata::diagnosis
