// The op-table part of the HTML report's timeline (see op_timeline_facts.h).
#include "analysis/diagnosis/op_timeline_facts.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <utility>

#include "analysis/diagnosis/peer_difference.h"
#include "analysis/rank_step_busy.h"

namespace strata::diagnosis {

namespace {

constexpr StringId kNoName = static_cast<StringId>(-1);

/// The peers of `late` that have the step (see op_timeline_facts.h), in rank order, and whom they are.
std::vector<size_t> PeersOf(const TraceStore& store, const DiagnosisResult& result,
                            const std::vector<std::vector<double>>& compute, size_t late, size_t step_index,
                            TimelinePeers* kind) {
  const Finding* top = result.findings.empty() ? nullptr : &result.findings.front();
  const std::vector<RankNumber> group =
      top && !top->rank && top->ranks.size() > 1 ? top->ranks : std::vector<RankNumber>{};
  auto in_group = [&](size_t r) { return std::count(group.begin(), group.end(), RankNumber(store.ranks[r].rank)) > 0; };
  std::vector<std::pair<double, size_t>> others, stage_peers, outside;
  const int32_t stage = store.ranks[late].pp_stage;
  for (size_t r = 0; r < compute.size(); ++r) {
    if (r == late || std::isnan(compute[r][step_index])) continue;
    others.push_back({compute[r][step_index], r});
    if (stage >= 0 && store.ranks[r].pp_stage == stage) stage_peers.push_back({compute[r][step_index], r});
    if (!group.empty() && !in_group(r)) outside.push_back({compute[r][step_index], r});
  }
  *kind = !outside.empty() && in_group(late) ? TimelinePeers::kOtherStages
          : !stage_peers.empty()             ? TimelinePeers::kSameStage
                                             : TimelinePeers::kAllOthers;
  std::vector<std::pair<double, size_t>>& pool = *kind == TimelinePeers::kOtherStages ? outside
                                                 : *kind == TimelinePeers::kSameStage ? stage_peers
                                                                                      : others;
  std::sort(pool.begin(), pool.end());
  const size_t want = *kind == TimelinePeers::kAllOthers ? 3 : kMaxTimelineRows - 1;
  std::vector<size_t> out;
  if (pool.size() <= want) {
    for (const auto& p : pool) out.push_back(p.second);
  } else {
    for (size_t k = 0; k < want; ++k) out.push_back(pool[k * (pool.size() - 1) / (want - 1)].second);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

/// The culprit op type's name (see op_timeline_facts.h); kNoName when the late rank has no compute op.
StringId CulpritOp(const TraceStore& store, const std::vector<SliceRows>& rows_by_rank, const DiagnosisResult& result,
                   size_t late, const std::vector<size_t>& peers, int64_t step, OpTableTypes& types) {
  const Finding* top = result.findings.empty() ? nullptr : &result.findings.front();
  if (top && top->op && whatif::OpTypeFromName(*top->op)) {
    const StringId id = store.strings.find(*top->op);
    if (id != kNoName) return id;
  }
  std::map<StringId, std::vector<double>> sum_by_type;  // [0] the late rank, then the peers
  auto add = [&](size_t r, size_t slot) {
    for (const SliceId row : rows_by_rank[r]) {
      if (store.slices.step[row.value] != step || !types.IsCompute(row.value)) continue;
      auto& v = sum_by_type[store.slices.name[row.value]];
      v.resize(peers.size() + 1, 0.0);
      v[slot] += static_cast<double>(store.slices.dur_ns[row.value]);
    }
  };
  add(late, 0);
  for (size_t i = 0; i < peers.size(); ++i) add(peers[i], i + 1);
  std::vector<size_t> peer_slots(peers.size());
  for (size_t i = 0; i < peers.size(); ++i) peer_slots[i] = i + 1;
  StringId best = kNoName;
  double widest = -1;
  for (auto& entry : sum_by_type) {
    std::vector<double>& v = entry.second;  // a named reference: clang 14 cannot capture a structured binding
    v.resize(peers.size() + 1, 0.0);
    const double excess = v[0] - PeerMedian(peer_slots, [&](size_t i) { return v[i]; });
    if (excess > widest) widest = excess, best = entry.first;
  }
  return best;
}

/// Rank index `r`'s ops named `culprit` in `step` (of a type the what-if knows), as (start, end) in start order.
std::vector<std::pair<int64_t, int64_t>> CulpritInstances(const TraceStore& store, const SliceRows& rows, int64_t step,
                                                          StringId culprit, OpTableTypes& types) {
  std::vector<std::pair<int64_t, int64_t>> out;
  const SliceTable& sl = store.slices;
  for (const SliceId row : rows) {
    if (sl.step[row.value] != step || sl.name[row.value] != culprit || !types.Of(row.value)) continue;
    const int64_t s = sl.ts_ns[row.value];
    out.push_back({s, s + std::max<int64_t>(0, sl.dur_ns[row.value])});
  }
  std::sort(out.begin(), out.end());
  return out;
}

/// The chain instance (see op_timeline_facts.h) of `same[0]` (the late rank's instances) against `same[1..]`
/// (its peers'); none when the late rank has none.
std::optional<OpChain> ChainInstance(const std::vector<std::vector<std::pair<int64_t, int64_t>>>& same) {
  const auto duration = [&](size_t i, size_t k) { return static_cast<double>(same[i][k].second - same[i][k].first); };
  std::optional<OpChain> best;
  double widest = -INFINITY;
  for (size_t k = 0; k < same[0].size(); ++k) {
    std::vector<size_t> peers;
    for (size_t i = 1; i < same.size(); ++i)
      if (k < same[i].size()) peers.push_back(i);
    const double mine = duration(0, k), med = PeerMedian(peers, [&](size_t i) { return duration(i, k); });
    if (mine - med > widest) widest = mine - med, best = OpChain{k, {mine, med, peers.size()}};
  }
  return best;
}

}  // namespace

void MeasureOpTimeline(const TraceStore& store, const std::vector<SliceRows>& rows_by_rank, const model::JobModel& job,
                       const DiagnosisResult& result, const DrawnFacts& facts, TimelineFacts* timeline) {
  if (!timeline->late_rank) return;
  const size_t late = *timeline->late_rank;
  const int64_t step = job.steps.steps[timeline->step_index];
  timeline->peers = PeersOf(store, result, facts.busy_ns, late, timeline->step_index, &timeline->peer_kind);
  OpTableTypes types(store);
  const StringId culprit = CulpritOp(store, rows_by_rank, result, late, timeline->peers, step, types);
  if (culprit == kNoName) return;
  timeline->culprit_op = std::string(store.strings.view(culprit));
  std::vector<std::vector<std::pair<int64_t, int64_t>>> same = {
      CulpritInstances(store, rows_by_rank[late], step, culprit, types)};
  for (const size_t r : timeline->peers) same.push_back(CulpritInstances(store, rows_by_rank[r], step, culprit, types));
  timeline->chain_op = ChainInstance(same);
}

}  // namespace strata::diagnosis
