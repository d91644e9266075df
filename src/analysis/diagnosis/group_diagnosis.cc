// Diagnosis of process-group jobs (see group_diagnosis.h).
#include "analysis/diagnosis/group_diagnosis.h"
#include "store/slice_names.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <numeric>
#include <ranges>
#include <set>

#include "analysis/diagnosis/cause_choice.h"
#include "analysis/diagnosis/data_imbalance.h"
#include "analysis/diagnosis/impact.h"
#include "analysis/diagnosis/peer_difference.h"
#include "analysis/diagnosis/stage_excess.h"
#include "analysis/diagnosis/straggler.h"
#include "analysis/diagnosis/thresholds.h"
#include "analysis/diagnosis/window_profile.h"
#include "core/robust_stats.h"
#include "core/round.h"

namespace strata::diagnosis {

namespace {

constexpr size_t kMaxPeers = 32;  // peers profiled for a differential

std::string_view CollectiveName(const TraceStore& store, SliceId id) {
  const SliceTable& s = store.slices;
  const uint32_t slice = id.value;
  if (!(s.flags[slice] & kSliceCollectiveArgs) || s.args[slice] >= store.collective_args.size()) return {};
  return store.strings.view(store.collective_args[s.args[slice]].collective);
}

/// Per-step, per-rank quantities of the job.
struct GroupModel {
  std::vector<int64_t> step_time_ns;                      // aligned: last end − first start
  std::vector<std::vector<int64_t>> start, end;           // [step][rank], own clock
  std::vector<std::vector<double>> self_ns;               // [step][rank]
  std::vector<std::vector<double>> transfer_excess;       // [step][rank], ns
  std::vector<std::vector<double>> comm_blame;            // [step][rank], ns
  std::vector<std::map<StringId, double>> excess_by_key;  // [rank] transfer excess per kernel name (all steps)
};

GroupModel BuildGroupModel(const model::StepModel& steps, const model::CollectiveModel& coll,
                           const model::ClockAlignment& clocks, size_t ranks) {
  GroupModel g;
  const size_t n = steps.steps.size();
  std::map<int64_t, size_t> step_index;
  for (size_t i = 0; i < n; ++i) step_index[steps.steps[i]] = i;
  g.start.assign(n, std::vector<int64_t>(ranks, 0));
  g.end = g.start;
  g.self_ns.assign(n, std::vector<double>(ranks, 0));
  g.transfer_excess = g.comm_blame = g.self_ns;
  g.excess_by_key.resize(ranks);
  g.step_time_ns.assign(n, 0);
  for (size_t r = 0; r < ranks; ++r)
    for (const model::StepWindow& w : steps.by_rank[r])
      if (auto it = step_index.find(w.step); it != step_index.end()) {
        g.start[it->second][r] = w.start_ns;
        g.end[it->second][r] = w.end_ns;
      }
  for (size_t i = 0; i < n; ++i) {
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    for (size_t r = 0; r < ranks; ++r) {
      lo = std::min(lo, g.start[i][r] - clocks.offset_ns[r]);
      hi = std::max(hi, g.end[i][r] - clocks.offset_ns[r]);
    }
    g.step_time_ns[i] = hi - lo;
  }
  // Latest aligned arrival of every complete instance; per-call transfers.
  struct Call {
    size_t rank, step;
    StringId key, group;
    size_t expected;
    double transfer;
  };
  std::vector<Call> calls;
  std::map<std::tuple<size_t, StringId, size_t>, std::vector<double>> pools;  // (step, key, size) -> transfers
  std::vector<std::vector<double>> comm_ns(n, std::vector<double>(ranks, 0));
  for (const model::MatchedCollective& m : coll.matched) {
    auto it = step_index.find(m.step);
    if (it == step_index.end()) continue;
    const size_t si = it->second;
    int64_t latest = INT64_MIN;
    for (size_t r = 0; r < ranks; ++r)
      if (m.call[r] >= 0) latest = std::max(latest, coll.calls[r][m.call[r]].start_ns - clocks.offset_ns[r]);
    for (size_t r = 0; r < ranks; ++r) {
      if (m.call[r] < 0) continue;
      const model::CollectiveCall& c = coll.calls[r][m.call[r]];
      const int64_t dur = c.end_ns - c.start_ns;
      comm_ns[si][r] += static_cast<double>(
          std::max<int64_t>(0, std::min(c.end_ns, g.end[si][r]) - std::max(c.start_ns, g.start[si][r])));
      if (!m.complete() || m.expected < 2) continue;
      const int64_t wait = std::clamp<int64_t>(latest - (c.start_ns - clocks.offset_ns[r]), 0, dur);
      const auto transfer = static_cast<double>(dur - wait);
      calls.push_back({r, si, m.key, m.group, m.expected, transfer});
      pools[{si, m.key, m.expected}].push_back(transfer);
    }
  }
  for (size_t i = 0; i < n; ++i)
    for (size_t r = 0; r < ranks; ++r)
      g.self_ns[i][r] = static_cast<double>(g.end[i][r] - g.start[i][r]) - comm_ns[i][r];
  std::map<std::tuple<size_t, StringId, size_t>, double> reference;
  for (auto& [k, v] : pools) reference[k] = Quantile(std::move(v), 0.1);
  // Per (step, rank): excess and usual transfer per group, to see whether all of a rank's groups are slow.
  std::vector<std::vector<std::map<StringId, std::pair<double, double>>>> by_group(
      n, std::vector<std::map<StringId, std::pair<double, double>>>(ranks));
  for (const Call& c : calls) {
    const double ref = reference[{c.step, c.key, c.expected}];
    const double excess = c.transfer - ref;
    g.transfer_excess[c.step][c.rank] += std::max(0.0, excess);
    g.excess_by_key[c.rank][c.key] += std::max(0.0, excess);
    auto& [ex, base] = by_group[c.step][c.rank][c.group];
    ex += excess;
    base += ref;
  }
  for (size_t i = 0; i < n; ++i)
    for (size_t r = 0; r < ranks; ++r) {
      if (by_group[i][r].empty()) continue;
      double min_ratio = 1e300;
      for (const auto& [group, eb] : by_group[i][r])
        min_ratio = std::min(min_ratio, eb.second > 0 ? eb.first / eb.second : 0.0);
      if (min_ratio >= thresholds::kSlowGroupRatio) g.comm_blame[i][r] = g.transfer_excess[i][r];
    }
  return g;
}

/// Differential of `rank` against `peers` over the given step indices (whole step windows, own clocks).
struct GroupDifferential {
  ProfileExcess excess;     // per step, against the peers' median (peer_difference.h)
  double self_idle_ms = 0;  // device idle within the rank's own (non-communication) time, against the peers'
  std::vector<std::pair<StringId, double>> op_excess_ms;  // per step, largest first
};

GroupDifferential CompareWindows(const TraceStore& store, const TrackIndex& index, const model::StepModel& steps,
                                 const GroupModel& g, const std::vector<size_t>& step_idx, size_t rank,
                                 const std::vector<size_t>& peers) {
  GroupDifferential d;
  ExcessMean excess;
  for (size_t si : step_idx) {
    const int64_t step = steps.steps[si];
    auto profile = [&](size_t r) {
      const TrackId main_track = steps.MainTrack(r, step);
      return ProfileWindow(store, index, r, main_track, g.start[si][r], g.end[si][r]);
    };
    const WindowProfile own = profile(rank);
    std::vector<WindowProfile> others;
    for (size_t q : peers) others.push_back(profile(q));
    std::vector<const WindowProfile*> other_ptrs;
    for (const WindowProfile& o : others) other_ptrs.push_back(&o);
    excess.Add(ExcessOverPeers(own, other_ptrs));
    // Idle within the rank's own (non-communication) time of the step: the group model's, not the window's.
    // Indices, not std::views::iota: clang 14 (the fuzz build) cannot compile libstdc++ 12's iota_view.
    std::vector<size_t> other_index(others.size());
    for (size_t k = 0; k < other_index.size(); ++k) other_index[k] = k;
    const double peer_idle =
        PeerMedian(other_index, [&](size_t k) { return g.self_ns[si][peers[k]] - others[k].device_busy_ns; });
    d.self_idle_ms += (g.self_ns[si][rank] - own.device_busy_ns - peer_idle) / 1e6;
  }
  const double n = std::max<double>(1, static_cast<double>(step_idx.size()));
  d.excess = excess.Mean();
  d.self_idle_ms /= n;
  d.op_excess_ms = excess.OpsLargestFirst();
  return d;
}

std::vector<size_t> FirstPeers(const std::vector<size_t>& candidates, size_t exclude) {
  std::vector<size_t> out;
  for (size_t q : candidates) {
    if (q == exclude) continue;
    out.push_back(q);
    if (out.size() == kMaxPeers) break;
  }
  return out;
}

}  // namespace

std::vector<int32_t> PipelineStages(const TraceStore& store, const model::CollectiveModel& coll, size_t ranks) {
  std::vector<int32_t> stage(ranks, 0);
  std::vector<std::set<size_t>> adjacent(ranks);
  std::vector<int64_t> first_p2p_start(ranks, INT64_MAX);
  std::vector<bool> first_is_send(ranks, false);
  for (const model::MatchedCollective& m : coll.matched) {
    if (!m.complete() || m.expected != 2 || m.present != 2) continue;
    size_t members[2], k = 0;
    bool p2p = true;
    for (size_t r = 0; r < ranks && k < 2; ++r) {
      if (m.call[r] < 0) continue;
      const std::string_view name = CollectiveName(store, coll.calls[r][m.call[r]].slice);
      p2p &= name == "send" || name == "recv";
      members[k++] = r;
    }
    if (!p2p || k != 2) continue;
    adjacent[members[0]].insert(members[1]);
    adjacent[members[1]].insert(members[0]);
    for (size_t r : members) {
      const model::CollectiveCall& c = coll.calls[r][m.call[r]];
      if (c.start_ns < first_p2p_start[r]) {
        first_p2p_start[r] = c.start_ns;
        first_is_send[r] = CollectiveName(store, c.slice) == "send";
      }
    }
  }
  for (const auto& a : adjacent)
    if (a.size() > 2) return stage;  // not a set of chains
  std::vector<bool> seen(ranks, false);
  for (size_t r = 0; r < ranks; ++r) {
    if (seen[r] || adjacent[r].size() != 1) continue;
    // Walk the chain from this end to the other; number it from the end that sends first.
    std::vector<size_t> chain = {r};
    seen[r] = true;
    for (size_t prev = SIZE_MAX, cur = r;;) {
      size_t next = SIZE_MAX;
      for (size_t q : adjacent[cur])
        if (q != prev) next = q;
      if (next == SIZE_MAX || seen[next]) break;
      seen[next] = true;
      chain.push_back(next);
      prev = cur;
      cur = next;
    }
    if (!first_is_send[chain.front()] && first_is_send[chain.back()]) std::reverse(chain.begin(), chain.end());
    for (size_t i = 0; i < chain.size(); ++i) stage[chain[i]] = static_cast<int32_t>(i);
  }
  return stage;
}

namespace {

// The pipeline stages of the job: each rank index's stage, each stage's members (rank indices, in order), and
// every rank index. Invariant: every rank index is a member of exactly the stage `stage` names.
struct StageLayout {
  std::vector<int32_t> stage;                // per rank index
  std::vector<std::vector<size_t>> members;  // per stage: its rank indices
  std::vector<size_t> all;                   // every rank index

  // Rank index r's role peers: its stage's other members (every rank when it is alone in its stage).
  const std::vector<size_t>& RolePeers(size_t r) const {
    const auto& role = members[static_cast<size_t>(stage[r])];
    return role.size() > 1 ? role : all;
  }
};

StageLayout LayOutStages(std::vector<int32_t> stage) {
  StageLayout out;
  out.stage = std::move(stage);
  const int32_t stages = *std::max_element(out.stage.begin(), out.stage.end()) + 1;
  out.members.resize(static_cast<size_t>(stages));
  for (size_t r = 0; r < out.stage.size(); ++r) {
    out.members[static_cast<size_t>(out.stage[r])].push_back(r);
    out.all.push_back(r);
  }
  return out;
}

// Rank-level blame: per step and rank index, a rank's self time over its role peers' median (self_excess, may
// be negative) and its blame, that excess when positive plus its transfer blame (sa.blame_ns, the straggler
// analysis's input; ClassifyStragglers then fills the rest of sa).
struct RankBlame {
  StragglerAnalysis sa;
  std::vector<std::vector<double>> self_excess;  // [step][rank], ns
};

RankBlame BlameRanks(const GroupModel& g, const StageLayout& layout, size_t n) {
  const size_t ranks = layout.all.size();
  RankBlame out;
  out.sa.blame_ns.assign(n, std::vector<double>(ranks, 0));
  out.self_excess.assign(n, std::vector<double>(ranks, 0));
  for (size_t i = 0; i < n; ++i)
    for (size_t r = 0; r < ranks; ++r) {
      std::vector<size_t> peers;
      for (size_t q : layout.RolePeers(r))
        if (q != r) peers.push_back(q);
      out.self_excess[i][r] = g.self_ns[i][r] - PeerMedian(peers, [&](size_t q) { return g.self_ns[i][q]; });
      out.sa.blame_ns[i][r] = std::max(0.0, out.self_excess[i][r]) + g.comm_blame[i][r];
    }
  return out;
}

// Each stage's and each rank's excess over an even split of the stages' self time, per step (stage_excess.h).
struct StageExcessTable {
  std::vector<std::vector<double>> stage;   // [step][stage], ns
  std::vector<std::vector<double>> member;  // [step][rank], ns
};

StageExcessTable MeasureStages(const GroupModel& g, const StageLayout& layout, size_t n) {
  StageExcessTable out;
  out.stage.assign(n, std::vector<double>(layout.members.size(), 0));
  out.member.assign(n, std::vector<double>(layout.all.size(), 0));
  for (size_t i = 0; i < n; ++i) {
    StageWork work;
    for (const auto& m : layout.members) {
      work.emplace_back();
      for (size_t r : m) work.back().push_back(g.self_ns[i][r]);
    }
    StepStageExcess e = MeasureStageExcess(work);
    for (size_t s = 0; s < layout.members.size(); ++s)
      for (size_t k = 0; k < layout.members[s].size(); ++k) out.member[i][layout.members[s][k]] = e.member[s][k];
    out.stage[i] = std::move(e.stage);
  }
  return out;
}

// What the grouped pass's findings read, made once before any of them and never changed after: the job's group
// model, the stages, the rank-level blame with its stragglers classified, and the stages' excess.
struct GroupPass {
  const TraceStore& store;
  const TrackIndex& index;
  const model::StepModel& steps;
  const GroupModel& g;
  const StageLayout layout;
  const StragglerAnalysis sa;                            // blame_ns: self excess (>= 0) + transfer blame
  const std::vector<std::vector<double>> self_excess;    // [step][rank], ns
  const std::vector<std::vector<double>> stage_excess;   // [step][stage], ns: over an even split (stage_excess.h)
  const std::vector<std::vector<double>> member_excess;  // [step][rank], ns: over an even split (stage_excess.h)
  const size_t n = 0;                                    // steps
  const size_t ranks = 0;

  // v[step][k] over the steps.
  std::vector<double> OverSteps(const std::vector<std::vector<double>>& v, size_t k) const {
    std::vector<double> out;
    for (size_t i = 0; i < n; ++i) out.push_back(v[i][k]);
    return out;
  }
  // Mean over the steps of v[step][k] as a share of the step (MeanShareOfStep, stage_excess.h).
  double ShareOfStep(const std::vector<std::vector<double>>& v, size_t k) const {
    std::vector<double> step_ns(g.step_time_ns.begin(), g.step_time_ns.end());
    return MeanShareOfStep(OverSteps(v, k), step_ns);
  }
  std::vector<OpExcess> OpList(const GroupDifferential& d) const {
    std::vector<OpExcess> ops;
    for (size_t i = 0; i < d.op_excess_ms.size() && ops.size() < 5; ++i) {
      const std::string_view name = store.strings.view(d.op_excess_ms[i].first);
      if (IsContainerSliceName(name)) continue;
      ops.push_back({ShortOpName(name), d.op_excess_ms[i].second});
    }
    return ops;
  }
  std::optional<std::string> TopOp(const GroupDifferential& d, Cause cause) const {
    if (const auto op = CulpritOp(store.strings, d.op_excess_ms, cause)) return ShortOpName(store.strings.view(*op));
    return std::nullopt;
  }
};

// Stage imbalance: the stage whose excess is at least min_effect of the step in persistent_share of the
// steps, the largest mean excess first.
struct SlowStage {
  size_t stage = 0;
  double excess_ns = 0;  // mean per step
  std::vector<int64_t> steps;
};
std::optional<SlowStage> FindSlowStage(const GroupPass& p, const StragglerOptions& sopt) {
  std::optional<SlowStage> out;
  double best = 0;
  for (size_t s = 0; s < p.layout.members.size() && p.layout.members.size() > 1; ++s) {
    std::vector<int64_t> late;
    double sum = 0;
    for (size_t i = 0; i < p.n; ++i) {
      sum += std::max(0.0, p.stage_excess[i][s]);
      if (p.stage_excess[i][s] >= sopt.min_effect * static_cast<double>(p.g.step_time_ns[i]))
        late.push_back(p.steps.steps[i]);
    }
    if (static_cast<double>(late.size()) >= sopt.persistent_share * static_cast<double>(p.n) && sum / p.n > best) {
      best = sum / static_cast<double>(p.n);
      out = SlowStage{s, best, late};
    }
  }
  return out;
}

// A straggler's excess per late step, split into self time and transfers (ms).
struct LateSplit {
  std::vector<size_t> late_idx;  // indices of its late steps
  double self_ms = 0, comm_ms = 0, late_ms = 0;
};
LateSplit SplitLateness(const GroupPass& p, const Straggler& st, RankIndex ri) {
  const size_t r = ri.value();
  LateSplit out;
  for (size_t i = 0; i < p.n; ++i)
    if (std::find(st.steps.begin(), st.steps.end(), p.steps.steps[i]) != st.steps.end()) out.late_idx.push_back(i);
  for (size_t i : out.late_idx) {
    out.self_ms += std::max(0.0, p.self_excess[i][r]) / 1e6;
    out.comm_ms += p.g.comm_blame[i][r] / 1e6;
    out.late_ms += p.sa.blame_ns[i][r] / 1e6;
  }
  const double nl = std::max<double>(1, static_cast<double>(out.late_idx.size()));
  out.self_ms /= nl;
  out.comm_ms /= nl;
  out.late_ms /= nl;
  return out;
}

// Slow transfers in every group of the rank: the transfer excess is the evidence for its link.
CauseChoice SlowLinkCause(const GroupPass& p, const LateSplit& late, size_t r, Finding* f, GroupRankEvidence* e) {
  const CauseChoice choice =
      NameCause(PatternEvidence{.pattern = Pattern::kSlowTransfers, .explained = late.comm_ms, .effect = late.late_ms});
  SetCause(choice, f);
  StringId worst;
  double worst_ns = -1;
  for (const auto& [key, ns] : p.g.excess_by_key[r])
    if (ns > worst_ns) worst = key, worst_ns = ns;
  if (worst_ns > 0) f->op = ShortOpName(p.store.strings.view(worst));
  f->summary = fmt::format(
      "rank {} transfers slowly in every one of its process groups ({:.1f} ms more per step than usual for the "
      "same collectives): its own link is slow; fixing it saves {} of step time",
      *f->rank, late.comm_ms, SavingPercent(f->impact_pct));
  e->blame_kind = BlameKind::kDependencyEdge;
  return choice;
}

// More self time than its stage peers: the cause from its windows against theirs (cause_choice.h).
CauseChoice SelfTimeCause(const GroupPass& p, const LateSplit& late, size_t r, const std::vector<size_t>& peers,
                          Finding* f, GroupRankEvidence* e) {
  const GroupDifferential d = CompareWindows(p.store, p.index, p.steps, p.g, late.late_idx, r, peers);
  const CauseChoice choice = NameCause(
      ProfileEvidence{ProfileCandidates(d.excess, /*gpu=*/true, /*ops_observed=*/true, d.self_idle_ms), late.late_ms});
  SetCause(choice, f);
  f->op = p.TopOp(d, f->cause);
  f->summary = fmt::format(
      "rank {} spends {:.1f} ms more per step outside collectives than its stage peers ({}); the others wait "
      "for it; fixing it saves {} of step time",
      *f->rank, late.self_ms, CausePhrase(f->cause), SavingPercent(f->impact_pct));
  e->excess_ms = GroupRankEvidence::Excess{d.excess.data_ms, d.excess.host_gap_ms, d.excess.compute_ms,
                                           d.excess.device_busy_ms, d.self_idle_ms};
  e->peer_device_busy_ms = d.excess.peer_device_busy_ms;
  e->op_excess_per_step = p.OpList(d);
  e->blame_kind = f->cause == Cause::kHostStall ? BlameKind::kHostGap
                  : f->cause == Cause::kUnknown ? BlameKind::kUnexplained
                                                : BlameKind::kSlowOp;
  return choice;
}

// The finding about straggler st (rank index ri; st.rank its rank number).
Finding GroupStragglerFinding(const GroupPass& p, const Straggler& st, const LateSplit& late, RankIndex ri) {
  const size_t r = ri.value();
  Finding f;
  f.rank = st.rank;
  f.ranks = {st.rank};
  if (!st.persistent && !st.steps.empty()) f.step = st.steps.front();
  f.impact_pct = RoundTo(100.0 * p.ShareOfStep(p.sa.blame_ns, r), 2);
  const std::vector<size_t> peers = FirstPeers(p.layout.RolePeers(r), r);
  GroupRankEvidence e;
  const CauseChoice choice =
      late.comm_ms > late.self_ms ? SlowLinkCause(p, late, r, &f, &e) : SelfTimeCause(p, late, r, peers, &f, &e);
  e.late_ms_per_step = st.late_ms_per_step;
  e.late_ms_per_late_step = late.late_ms;
  e.explained_share = choice.explained;
  e.late_steps = st.steps;
  e.stage = p.layout.stage[r];
  e.peers = peers.size();
  e.self_excess_ms = late.self_ms;
  e.transfer_excess_ms = late.comm_ms;
  f.evidence.kind = std::move(e);
  return f;
}

// The stage-imbalance finding, with every rank of the stage as a straggler (they all make the others wait).
Found StageImbalance(const GroupPass& p, const SlowStage& slow) {
  Found out;
  const size_t s = slow.stage;
  const auto& m = p.layout.members[s];
  Finding f;
  f.stage = static_cast<int32_t>(s);
  for (size_t r : m) f.ranks.emplace_back(p.store.ranks[r].rank);
  f.impact_pct = RoundTo(100.0 * p.ShareOfStep(p.stage_excess, s), 2);
  std::vector<size_t> others;
  for (size_t r = 0; r < p.ranks; ++r)
    if (p.layout.stage[r] != static_cast<int32_t>(s)) others.push_back(r);
  // Effect: the stage's excess work over an even split; evidence: the part every rank of the stage
  // shows (SpreadOfMembers, stage_excess.h): a stage, not one rank in it.
  std::vector<double> excess;
  for (size_t r : m) {
    const std::vector<double> ex = p.OverSteps(p.member_excess, r);
    excess.push_back(std::accumulate(ex.begin(), ex.end(), 0.0));
  }
  const MemberSpread spread = SpreadOfMembers(excess);
  SetCause(NameCause(PatternEvidence{
               .pattern = Pattern::kSlowStage, .explained = spread.weakest, .effect = spread.strongest}),
           &f);
  std::vector<size_t> idx(p.n);
  for (size_t i = 0; i < p.n; ++i) idx[i] = i;
  const GroupDifferential d =
      CompareWindows(p.store, p.index, p.steps, p.g, idx, m.front(), FirstPeers(others, SIZE_MAX));
  f.op = p.TopOp(d, f.cause);
  f.summary = fmt::format(
      "pipeline stage {} ({} ranks) does {:.1f} ms more work per step than an even split of the stages' work, "
      "and the other stages wait for it; balancing the stages saves {} of step time",
      s, m.size(), slow.excess_ns / 1e6, SavingPercent(f.impact_pct));
  f.evidence.kind = StageExcessEvidence{slow.excess_ns / 1e6, slow.steps, p.OpList(d)};
  for (size_t k = 0; k < m.size(); ++k) {
    Straggler st;
    st.rank = RankNumber(p.store.ranks[m[k]].rank);
    st.steps = slow.steps;
    st.persistent = true;
    st.late_ms_per_step = RoundTo(excess[k] / static_cast<double>(p.n) / 1e6, 3);
    st.score = RoundTo(p.ShareOfStep(p.member_excess, m[k]), 4);
    st.evidence.kind = GroupStragglerEvidence{static_cast<int32_t>(s), std::nullopt, std::nullopt};
    out.stragglers.push_back(std::move(st));
  }
  out.findings.push_back(std::move(f));
  return out;
}

// Data imbalance: ranks late in turn, none persistently (of `stragglers`), and a real loss.
std::optional<Finding> GroupDataImbalance(const GroupPass& p, const std::vector<Straggler>& stragglers) {
  double imbalance_share = 0;
  for (size_t i = 0; i < p.n; ++i)
    if (p.g.step_time_ns[i] > 0)
      imbalance_share += *std::max_element(p.sa.blame_ns[i].begin(), p.sa.blame_ns[i].end()) /
                         static_cast<double>(p.g.step_time_ns[i]) / static_cast<double>(p.n);
  const StepOps step_ops = [&](size_t si, size_t r) {
    return OpsInWindow(p.store, p.index, r, p.steps.MainTrack(r, p.steps.steps[si]), p.g.start[si][r], p.g.end[si][r]);
  };
  const LoadScaling load = MeasureLoadScaling(p.sa, step_ops, p.layout.stage, thresholds::kMinEffect);
  return DataImbalanceFinding(p.sa, p.store.RankNumbers(), imbalance_share, load, stragglers, thresholds::kMinEffect);
}

// Blame subtraction (WhatIfModel::kBlameSubtraction): the ideal step is the mean step less the mean
// largest blame (or the slow stage's excess when larger); each rank's and stage's slowdown is its own.
WhatIf BlameSubtraction(const GroupPass& p, const std::optional<SlowStage>& slow) {
  WhatIf out;
  out.model = WhatIfModel::kBlameSubtraction;
  double mean_step = 0, mean_max_blame = 0;
  for (size_t i = 0; i < p.n; ++i) {
    mean_step += static_cast<double>(p.g.step_time_ns[i]) / static_cast<double>(p.n);
    mean_max_blame += *std::max_element(p.sa.blame_ns[i].begin(), p.sa.blame_ns[i].end()) / static_cast<double>(p.n);
  }
  if (slow) mean_max_blame = std::max(mean_max_blame, slow->excess_ns);
  const double ideal = std::max(1.0, mean_step - mean_max_blame);
  out.slowdown = RoundTo(mean_step / ideal, 4);
  out.ideal_step_ms = RoundTo(ideal / 1e6, 3);
  for (size_t r = 0; r < p.ranks; ++r) {
    double mean_blame = 0;
    for (size_t i = 0; i < p.n; ++i) mean_blame += p.sa.blame_ns[i][r] / static_cast<double>(p.n);
    out.by_rank[std::to_string(p.store.ranks[r].rank)] = RoundTo(1.0 + mean_blame / ideal, 4);
  }
  if (p.layout.members.size() > 1)
    for (size_t s = 0; s < p.layout.members.size(); ++s) {
      double mean_ex = 0;
      for (size_t i = 0; i < p.n; ++i) mean_ex += std::max(0.0, p.stage_excess[i][s]) / static_cast<double>(p.n);
      out.by_stage[std::to_string(s)] = RoundTo(1.0 + mean_ex / ideal, 4);
    }
  return out;
}

}  // namespace

PathResult DiagnoseGroupedTraces(const TraceStore& store, const std::vector<SliceRows>& rows_by_rank,
                                 const model::StepModel& steps, const model::CollectiveModel& collectives,
                                 const model::ClockAlignment& clocks, PathResult described) {
  PathResult out = std::move(described);
  const size_t ranks = store.ranks.size();
  const size_t n = steps.steps.size();
  out.whatif.model = WhatIfModel::kBlameSubtraction;
  if (ranks < 2 || n == 0) return out;
  const GroupModel g = BuildGroupModel(steps, collectives, clocks, ranks);
  std::vector<double> step_ms;
  for (int64_t t : g.step_time_ns) step_ms.push_back(static_cast<double>(t) / 1e6);
  out.step_time_median_ms = RoundTo(Median(step_ms), 3);
  out.step_time_p90_ms = RoundTo(Quantile(step_ms, 0.9), 3);
  const TrackIndex index(store, rows_by_rank);
  StageLayout layout = LayOutStages(PipelineStages(store, collectives, ranks));
  out.layout.pipeline_stages = static_cast<int32_t>(layout.members.size());
  out.notes.push_back(
      "collectives run in process groups smaller than the job: ranks are compared with the peers of their "
      "pipeline stage (self time outside collectives, transfer times per group); the what-if is the per-rank "
      "excess, not a replay");
  StragglerOptions sopt;
  sopt.min_effect = thresholds::kMinEffect;
  RankBlame blame = BlameRanks(g, layout, n);
  ClassifyStragglers(g.step_time_ns, steps.steps, ranks, sopt, &blame.sa);
  StageExcessTable excess = MeasureStages(g, layout, n);
  const GroupPass p{store,
                    index,
                    steps,
                    g,
                    std::move(layout),
                    std::move(blame.sa),
                    std::move(blame.self_excess),
                    std::move(excess.stage),
                    std::move(excess.member),
                    n,
                    ranks};
  const std::optional<SlowStage> slow = FindSlowStage(p, sopt);

  std::vector<Straggler> numbered = NumberedStragglers(p.sa, store.RankNumbers());
  for (size_t k = 0; k < numbered.size(); ++k) {
    Straggler& st = numbered[k];
    const RankIndex r = p.sa.stragglers[k].rank;
    const LateSplit late = SplitLateness(p, st, r);
    st.evidence.kind = GroupStragglerEvidence{p.layout.stage[r.value()], late.self_ms, late.comm_ms};
    out.findings.push_back(GroupStragglerFinding(p, st, late, r));
  }
  out.stragglers.insert(out.stragglers.end(), numbered.begin(), numbered.end());
  const bool stage_named = slow && out.stragglers.empty();
  if (stage_named) out.Add(StageImbalance(p, *slow));
  if (auto f = GroupDataImbalance(p, out.stragglers)) out.findings.push_back(std::move(*f));
  SortLatestFirst(&out.stragglers);
  out.whatif = BlameSubtraction(p, stage_named ? slow : std::nullopt);
  return out;
}

}  // namespace strata::diagnosis
