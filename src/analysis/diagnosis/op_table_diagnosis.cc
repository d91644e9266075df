// Diagnosis of op-table jobs (see op_table_diagnosis.h).
#include "analysis/diagnosis/op_table_diagnosis.h"
#include "core/round.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "analysis/diagnosis/cause_choice.h"
#include "analysis/diagnosis/peer_difference.h"
#include "analysis/diagnosis/stage_excess.h"
#include "analysis/diagnosis/thresholds.h"
#include "analysis/whatif/whatif.h"
#include "core/robust_stats.h"

namespace strata::diagnosis {

namespace {

bool IsComputeOp(std::string_view op) { return op == "forward-compute" || op == "backward-compute"; }

/// One worker's compute: per step as a profile (peer_difference.h: its compute ops' time per op type in
/// op_ns and in all in compute_ns, each over the table's steps), and each op type's mean duration.
struct WorkerCompute {
  WindowProfile per_step;
  std::map<std::string, double> mean_ns;  // by op type's name
};

/// The compute of every worker with compute ops, by rank index, from the store.
std::map<uint32_t, WorkerCompute> ComputeProfiles(const TraceStore& store, size_t steps) {
  std::map<uint32_t, std::map<StringId, std::pair<double, size_t>>> acc;  // (total ns, count)
  for (uint32_t row = 0; row < store.slices.size(); ++row) {
    if (!IsComputeOp(store.strings.view(store.slices.name[row]))) continue;
    auto& a = acc[store.track(store.slices.track[row]).rank][store.slices.name[row]];
    a.first += static_cast<double>(store.slices.dur_ns[row]);
    ++a.second;
  }
  const double n = static_cast<double>(std::max<size_t>(1, steps));
  std::map<uint32_t, WorkerCompute> out;
  for (const auto& [rank, ops] : acc) {
    WorkerCompute& wc = out[rank];
    for (const auto& [op, a] : ops) {
      wc.per_step.op_ns[op] = a.first / n;
      wc.per_step.compute_ns += a.first / n;
      wc.mean_ns[std::string(store.strings.view(op))] = a.first / static_cast<double>(a.second);
    }
  }
  return out;
}

/// Compute load of every worker in every step: (step, dp rank, stage) -> summed compute duration (ns).
std::map<std::tuple<int32_t, int32_t, int32_t>, double> ComputeLoads(const TraceStore& store) {
  std::map<std::tuple<int32_t, int32_t, int32_t>, double> load;
  for (uint32_t row = 0; row < store.slices.size(); ++row) {
    if (!IsComputeOp(store.strings.view(store.slices.name[row]))) continue;
    const RankInfo& r = store.ranks[store.track(store.slices.track[row]).rank];
    load[{store.slices.step[row], r.dp_rank, r.pp_stage}] += static_cast<double>(store.slices.dur_ns[row]);
  }
  return load;
}

using Loads = std::map<std::tuple<int32_t, int32_t, int32_t>, double>;

/// Op types the what-if does not know: a caveat naming them with their share of the table's time (and how
/// to map them); past kMaxUnknownOpShare the comparison is void (the replay models too little of the job).
std::optional<VerdictNote> UnknownOpTypes(const whatif::WhatIfResult& w) {
  if (w.ignored_op_types.empty()) return std::nullopt;
  int64_t unknown_ns = 0;
  for (const auto& [name, ns] : w.ignored_op_ns) unknown_ns += ns;
  const double all = static_cast<double>(unknown_ns + w.known_op_ns);
  const double share = all > 0 ? static_cast<double>(unknown_ns) / all : 0.0;
  std::vector<std::pair<std::string, int64_t>> by_time(w.ignored_op_ns.begin(), w.ignored_op_ns.end());
  std::sort(by_time.begin(), by_time.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  std::string names;
  for (size_t i = 0; i < by_time.size() && i < 6; ++i)
    names +=
        fmt::format("{}{} ({} rows, {:.1f}%)", i ? ", " : "", by_time[i].first, w.ignored_op_types.at(by_time[i].first),
                    all > 0 ? 100.0 * static_cast<double>(by_time[i].second) / all : 0.0);
  if (by_time.size() > 6) names += fmt::format(", ... ({} in all)", by_time.size());
  const NoteId id = share > thresholds::kMaxUnknownOpShare ? NoteId::kUnknownOpTypesMuchTime : NoteId::kUnknownOpTypes;
  return VerdictNote{id, {fmt::format("{:.1f}", 100.0 * share), names, whatif::KnownOpTypeNames()}};
}

/// The replay's steps, layout and what-if attribution, and what it left out, as the path's fields.
PathResult DescribeReplay(const whatif::WhatIfResult& w) {
  PathResult out;
  out.matched = w.steps.size();  // steps replayed through the dependency model
  out.layout.op_table = JobLayout::Grid{w.num_dp, w.num_stages, w.num_chunks};
  std::vector<double> step_ms;
  for (const auto& s : w.steps) step_ms.push_back(s.recorded_ms);
  out.step_time_median_ms = RoundTo(Median(step_ms), 3);
  out.step_time_p90_ms = RoundTo(Quantile(step_ms, 0.9), 3);
  out.whatif.model = WhatIfModel::kOpGraphReplay;
  out.whatif.slowdown = RoundTo(w.slowdown, 4);
  out.whatif.ideal_step_ms = RoundTo(w.ideal_step_ms, 3);
  for (const auto& [dp, a] : w.by_rank) out.whatif.by_dp_rank[std::to_string(dp)] = RoundTo(a.ratio, 4);
  for (const auto& wk : w.by_worker) out.whatif.by_rank[std::to_string(wk.rank)] = RoundTo(wk.attribution.ratio, 4);
  for (const auto& [stage, a] : w.by_stage) out.whatif.by_stage[std::to_string(stage)] = RoundTo(a.ratio, 4);
  for (const auto& [op, a] : w.by_op_type) out.whatif.by_op_type[op] = RoundTo(a.ratio, 4);
  if (!w.skipped_steps.empty())
    out.notes.push_back(fmt::format("{} steps did not match the dependency template and were left out ({})",
                                    w.skipped_steps.size(), w.skip_example));
  if (w.imputed_ops > 0)
    out.verdict_notes.push_back(
        {NoteId::kOpsFilledFromPeers,
         {std::to_string(w.imputed_ops), std::to_string(w.imputed_steps.size()), std::to_string(w.steps.size())}});
  if (auto unknown = UnknownOpTypes(w)) out.verdict_notes.push_back(std::move(*unknown));
  return out;
}

/// Stage imbalance: a stage whose ratio exceeds the others' median by the minimum effect, with every dp rank
/// of that stage affected alike (the weakest dp rank's what-if excess at least kStageUniformShare of the
/// strongest's). The finding's confidence is measured apart, as in the grouped path (StageFindings).
std::set<int32_t> ImbalancedStages(const whatif::WhatIfResult& w, double min_effect) {
  std::set<int32_t> out;
  if (w.num_stages < 2) return out;
  for (const auto& [stage, a] : w.by_stage) {
    std::vector<double> others;
    for (const auto& [s2, a2] : w.by_stage)
      if (s2 != stage) others.push_back(a2.ratio);
    if (a.ratio - Median(others) < min_effect) continue;
    std::vector<double> dp_of_stage;
    for (const auto& wk : w.by_worker)
      if (wk.stage == stage) dp_of_stage.push_back(wk.attribution.ratio - 1.0);
    const MemberSpread spread = SpreadOfMembers(dp_of_stage);  // {0, 0} for a stage without dp ranks
    if (spread.strongest > 0 && spread.weakest >= thresholds::kStageUniformShare * spread.strongest) out.insert(stage);
  }
  return out;
}

/// Each stage's excess over an even split of the stages' work (stage_excess.h) of the compute loads, in the replayed
/// steps where it and another stage ran and that took time: per stage, its excess per such step (ns), with the step's
/// time (ns).
struct StageCost {
  std::vector<double> excess_ns, step_ns;
  std::map<int32_t, double> member_excess_ns;  // per dp rank of the stage: its excess summed over those steps
};
std::map<int32_t, StageCost> StageCosts(const whatif::WhatIfResult& w, const Loads& loads) {
  std::map<int32_t, StageCost> out;
  for (const auto& st : w.steps) {
    std::map<int32_t, std::map<int32_t, double>> by_stage;  // stage -> dp rank -> load
    for (const auto& [key, ns] : loads)
      if (std::get<0>(key) == st.step) by_stage[std::get<2>(key)][std::get<1>(key)] += ns;
    if (by_stage.size() < 2 || st.recorded_ms <= 0) continue;
    StageWork work;
    for (const auto& [stage, dp] : by_stage) {
      work.emplace_back();
      for (const auto& [d, ns] : dp) work.back().push_back(ns);
    }
    const StepStageExcess e = MeasureStageExcess(work);
    size_t s = 0;
    for (const auto& [stage, dp] : by_stage) {
      StageCost& c = out[stage];
      c.excess_ns.push_back(e.stage[s]);
      c.step_ns.push_back(st.recorded_ms * 1e6);
      size_t k = 0;
      for (const auto& [d, ns] : dp) c.member_excess_ns[d] += e.member[s][k++];
      ++s;
    }
  }
  return out;
}

std::vector<Finding> StageFindings(const whatif::WhatIfResult& w, const Loads& loads, const std::set<int32_t>& stages) {
  std::vector<Finding> out;
  const std::map<int32_t, StageCost> costs = StageCosts(w, loads);
  for (int32_t stage : stages) {
    const auto& a = w.by_stage.at(stage);
    Finding f;
    f.stage = stage;
    for (const auto& wk : w.by_worker)
      if (wk.stage == stage) f.ranks.emplace_back(wk.rank);
    MemberSpread spread;
    if (auto c = costs.find(stage); c != costs.end()) {
      f.impact_pct = RoundTo(100.0 * MeanShareOfStep(c->second.excess_ns, c->second.step_ns), 2);
      std::vector<double> members;
      for (const auto& [dp, ns] : c->second.member_excess_ns) members.push_back(ns);
      spread = SpreadOfMembers(members);
    }
    // Effect: the stage's excess work over an even split; evidence: the part every dp rank of the stage shows
    // (SpreadOfMembers, stage_excess.h): a stage, not one rank in it, by the grouped path's statistic.
    SetCause(NameCause(PatternEvidence{
                 .pattern = Pattern::kSlowStage, .explained = spread.weakest, .effect = spread.strongest}),
             &f);
    f.summary = fmt::format(
        "pipeline stage {} is slower than the others on every dp rank (what-if ratio {:.3f}); "
        "moving its excess compute to the other stages saves about {:.1f}% of step time",
        stage, a.ratio, f.impact_pct);
    StageRatioEvidence e;
    e.stage_ratio = a.ratio;
    for (const auto& [s2, a2] : w.by_stage) e.by_stage.emplace_back(s2, a2.ratio);
    f.evidence.kind = std::move(e);
    out.push_back(std::move(f));
  }
  return out;
}

/// A worker's compute against the same stage's other dp ranks: its compute time per step beyond theirs (the
/// differential profile, peer_difference.h) and its worst op: the one with the largest excess per step, the
/// unit the finding prints (worst_ratio: that op's mean duration per run against the peers' median).
struct ComputeExcess {
  std::string worst_op;
  double worst_ratio = 1.0;
  double worst_excess_ms = 0;
  double excess_ms = 0;
};
ComputeExcess WorkerComputeExcess(const StringPool& strings, const whatif::WhatIfResult& w,
                                  const whatif::WorkerAttribution& wk, const std::map<uint32_t, WorkerCompute>& compute,
                                  const std::map<int32_t, uint32_t>& index_of_rank) {
  ComputeExcess out;
  auto compute_of = [&](int32_t rank) -> const WorkerCompute* {
    auto index = index_of_rank.find(rank);
    if (index == index_of_rank.end()) return nullptr;
    auto it = compute.find(index->second);
    return it == compute.end() ? nullptr : &it->second;
  };
  const WorkerCompute* own = compute_of(wk.rank);
  if (!own) return out;
  std::vector<const WorkerCompute*> peers;
  std::vector<const WindowProfile*> peer_profiles;
  for (const auto& other : w.by_worker)
    if (other.stage == wk.stage && other.rank != wk.rank)
      if (const WorkerCompute* p = compute_of(other.rank)) {
        peers.push_back(p);
        peer_profiles.push_back(&p->per_step);
      }
  if (peers.empty()) return out;
  const ProfileExcess excess = ExcessOverPeers(own->per_step, peer_profiles);
  out.excess_ms = excess.compute_ms;
  for (const auto& [op, ms] : excess.op_ms)
    if (ms > out.worst_excess_ms) {
      out.worst_excess_ms = ms;
      out.worst_op = std::string(strings.view(op));
    }
  std::vector<double> peer_means;  // the worst op's mean per run, on the peers that ran it
  for (const WorkerCompute* p : peers)
    if (auto it = p->mean_ns.find(out.worst_op); it != p->mean_ns.end()) peer_means.push_back(it->second);
  if (auto it = own->mean_ns.find(out.worst_op); it != own->mean_ns.end() && !peer_means.empty())
    out.worst_ratio = it->second / Median(peer_means);
  return out;
}

/// The finding for one straggling worker: its what-if excess is the effect; its compute beyond its stage
/// peers' explains part of it, the rest is its transfers (cause_choice.h).
Finding WorkerFinding(const whatif::WorkerAttribution& wk, const ComputeExcess& compute, double impact_pct,
                      const WorkerStragglerEvidence& worker) {
  Finding f;
  f.rank = RankNumber(wk.rank);
  f.ranks = {RankNumber(wk.rank)};
  f.stage = wk.stage;
  f.impact_pct = impact_pct;
  const double effect_ms = wk.attribution.excess_ms;
  const CauseChoice choice = NameCause(
      ProfileEvidence{{CauseCandidate{Cause::kSlowCompute, Layer::kGpu, compute.excess_ms},
                       CauseCandidate{Cause::kSlowCommunication, Layer::kComm, effect_ms - compute.excess_ms}},
                      effect_ms});
  SetCause(choice, &f);
  if (f.cause == Cause::kSlowCompute) {
    f.op = compute.worst_op;
    const double worst_ms = compute.worst_excess_ms;
    f.summary = fmt::format(
        "worker rank {} (dp {}, stage {}) spends {} a step more than its stage peers in {} ({:.0f}% slower per "
        "run); fixing it saves about {:.1f}% of step time",
        wk.rank, wk.dp_rank, wk.stage,
        worst_ms >= 1000 ? fmt::format("{:.2f} s", worst_ms / 1000) : fmt::format("{:.1f} ms", worst_ms),
        compute.worst_op, 100.0 * (compute.worst_ratio - 1.0), f.impact_pct);
  } else if (f.cause == Cause::kSlowCommunication) {
    f.summary = fmt::format(
        "worker rank {} (dp {}, stage {}) delays the job with normal compute: its communication is "
        "slow; fixing it saves about {:.1f}% of step time",
        wk.rank, wk.dp_rank, wk.stage, f.impact_pct);
  } else {
    f.summary = fmt::format(
        "worker rank {} (dp {}, stage {}) delays the job; neither its compute nor its transfers explain half "
        "of it; fixing it saves about {:.1f}% of step time",
        wk.rank, wk.dp_rank, wk.stage, f.impact_pct);
  }
  WorkerEvidence e;
  e.worker = worker;
  e.compute_ratio_vs_stage_peers = compute.worst_ratio;
  e.excess_ms_per_step = effect_ms;
  e.compute_excess_ms_per_step = compute.excess_ms;
  e.explained_share = choice.explained;
  f.evidence.kind = std::move(e);
  return f;
}

/// Single straggling workers (robust z of their what-if excess, not explained by a stage imbalance).
Found WorkerStragglers(const TraceStore& store, const whatif::WhatIfResult& w, double min_effect,
                       const std::set<int32_t>& stages, double step_time_median_ms) {
  Found out;
  const double S = std::max(1e-9, w.slowdown);
  std::vector<double> excess;
  for (const auto& wk : w.by_worker) excess.push_back(wk.attribution.ratio - 1.0);
  const std::vector<double> z = RobustZ(excess, thresholds::kWorkerExcessMadFloor);
  const auto compute = ComputeProfiles(store, w.steps.size());
  std::map<int32_t, uint32_t> index_of_rank;
  for (uint32_t i = 0; i < store.ranks.size(); ++i) index_of_rank[store.ranks[i].rank] = i;
  for (size_t i = 0; i < w.by_worker.size(); ++i) {
    const auto& wk = w.by_worker[i];
    if (z[i] <= thresholds::kOutlierRobustZ || excess[i] < min_effect || stages.count(wk.stage)) continue;
    Straggler st;
    st.rank = RankNumber(wk.rank);
    st.late_ms_per_step = RoundTo(wk.attribution.excess_ms, 3);
    st.score = step_time_median_ms > 0 ? RoundTo(wk.attribution.excess_ms / step_time_median_ms, 4) : 0;
    for (size_t s = 0; s < wk.attribution.step_ratio.size() && s < w.steps.size(); ++s)
      if (wk.attribution.step_ratio[s] - 1.0 >= min_effect) st.steps.push_back(w.steps[s].step);
    st.persistent =
        static_cast<double>(st.steps.size()) >= thresholds::kPersistentShare * static_cast<double>(w.steps.size());
    const WorkerStragglerEvidence worker{wk.dp_rank, wk.stage, wk.attribution.ratio, z[i]};
    st.evidence.kind = worker;
    out.findings.push_back(WorkerFinding(wk, WorkerComputeExcess(store.strings, w, wk, compute, index_of_rank),
                                         RoundTo(100.0 * (wk.attribution.ratio - 1.0) / S, 2), worker));
    out.stragglers.push_back(std::move(st));
  }
  return out;
}

/// Data imbalance: S is real, no worker or stage explains most of it, and the slowest dp rank changes from
/// step to step. Its cost: per step, the slowest dp rank's compute load over the mean dp rank's (a dp rank's
/// load is its compute summed over its stages, spread over the pipeline), relative to the step time. Looked
/// for only without straggling workers; `stage_findings` are the stage imbalances found (their saving is
/// not the imbalance's).
std::optional<Finding> OpTableDataImbalance(const whatif::WhatIfResult& w, const Loads& loads,
                                            const std::set<int32_t>& stages, double min_effect,
                                            const std::vector<Finding>& stage_findings) {
  const double S = std::max(1e-9, w.slowdown);
  if (1.0 - 1.0 / S < min_effect) return std::nullopt;
  std::set<int32_t> slowest;
  for (size_t s = 0; s < w.steps.size(); ++s) {
    int32_t best = -1;
    double best_ratio = 0;
    for (const auto& [dp, a] : w.by_rank)
      if (s < a.step_ratio.size() && a.step_ratio[s] > best_ratio) {
        best_ratio = a.step_ratio[s];
        best = dp;
      }
    if (best >= 0) slowest.insert(best);
  }
  double stage_explained = 0;
  for (int32_t stage : stages) stage_explained = std::max(stage_explained, w.by_stage.at(stage).ratio);
  if (slowest.size() < 2 || stage_explained >= S - min_effect) return std::nullopt;
  Finding f;
  for (const auto& wk : w.by_worker)
    if (slowest.count(wk.dp_rank)) f.ranks.emplace_back(wk.rank);
  std::sort(f.ranks.begin(), f.ranks.end());
  std::map<std::pair<int32_t, int32_t>, double> load;  // (step, dp) -> compute ns
  for (const auto& [key, ns] : loads) load[{std::get<0>(key), std::get<1>(key)}] += ns;
  double share = 0;
  size_t counted = 0;
  for (const auto& st : w.steps) {
    std::vector<double> dp_loads;
    for (const auto& [dp, a] : w.by_rank)
      if (auto it = load.find({st.step, dp}); it != load.end()) dp_loads.push_back(it->second);
    if (dp_loads.size() < 2 || st.recorded_ms <= 0) continue;
    const double mx = *std::max_element(dp_loads.begin(), dp_loads.end());
    share += (mx - Mean(dp_loads)) / std::max(1, w.num_stages) / (st.recorded_ms * 1e6);
    ++counted;
  }
  f.impact_pct = counted ? RoundTo(100.0 * share / static_cast<double>(counted), 2) : 0.0;
  // Effect: the what-if waste 1 - 1/S less what the stage findings already save (the loss no stage or
  // worker explains); evidence: the per-step load imbalance measured from the compute loads (its cost as a
  // share of step time). Named by the one rule of cause_choice.h.
  double waste = 1.0 - 1.0 / S;
  for (const Finding& stage : stage_findings) waste -= stage.impact_pct / 100.0;
  waste = std::max(waste, 1e-9);
  const CauseChoice choice =
      NameCause(ProfileEvidence{{CauseCandidate{Cause::kDataImbalance, Layer::kData, f.impact_pct / 100.0}}, waste});
  SetCause(choice, &f);
  f.summary =
      f.cause == Cause::kDataImbalance
          ? fmt::format(
                "the slowest data-parallel rank changes from step to step ({} dp ranks take turns): the "
                "per-step load is uneven, not one bad worker; balancing it saves about {:.1f}% of step time",
                slowest.size(), f.impact_pct)
          : fmt::format(
                "the slowest data-parallel rank changes from step to step ({} dp ranks take turns), but their "
                "uneven load accounts for {:.0f}% of the what-if's loss no stage explains, {:.1f}% (under half: "
                "the cause is not named); balancing the load saves about {:.1f}% of step time",
                slowest.size(), 100.0 * choice.explained, 100.0 * waste, f.impact_pct);
  DpImbalanceEvidence e;
  for (const auto& [dp, a] : w.by_rank) e.by_dp_rank.emplace_back(dp, a.ratio);
  e.dp_ranks_slowest_in_some_step.assign(slowest.begin(), slowest.end());
  f.evidence.kind = std::move(e);
  return f;
}

/// The layout columns the op table lacks, as "dp_rank and stage (--col-dp-rank, --col-stage name them)", or ""
/// when every rank has both: without them every rank reads as data-parallel rank 0 of stage 0 and the what-if
/// finds no step whose ops match (it said "has a ... op number 0 that the template step lacks").
std::string MissingLayoutColumns(const TraceStore& store) {
  bool dp = false, stage = false;
  for (const RankInfo& r : store.ranks) dp |= r.dp_rank < 0, stage |= r.pp_stage < 0;
  if (dp && stage) return "no dp_rank and no stage column (--col-dp-rank and --col-stage name them)";
  if (dp) return "no dp_rank column (--col-dp-rank names it)";
  if (stage) return "no stage column (--col-stage names it)";
  return "";
}

}  // namespace

// The steps of the op-table diagnosis: the dependency-graph replay (what-if), stage imbalances, single
// straggling workers, then data imbalance when neither explains the slowdown.
PathResult DiagnoseOpTable(const TraceStore& store) {
  auto computed = whatif::ComputeWhatIf(store);
  PathResult out = computed.ok() ? DescribeReplay(computed.value()) : PathResult{};
  out.step_source = model::StepSource::kOpTable;
  out.collective_source = model::CollectiveSource::kOpTable;
  std::set<int64_t> steps;
  for (int32_t s : store.slices.step)
    if (s >= 0) steps.insert(s);
  out.steps.assign(steps.begin(), steps.end());
  for (const RankInfo& r : store.ranks) out.clock_offsets_us[r.rank] = 0.0;  // one shared clock
  if (!computed.ok()) {
    const std::string missing = MissingLayoutColumns(store);
    out.notes.push_back("what-if analysis not possible: " +
                        (missing.empty() ? computed.error()
                                         : fmt::format("the op table has {}: every rank was read as data-parallel "
                                                       "rank 0 of stage 0, so no step's ops match ({})",
                                                       missing, computed.error())));
    out.whatif.model = WhatIfModel::kNone;
    return out;
  }
  const whatif::WhatIfResult& w = computed.value();
  const std::set<int32_t> stages = ImbalancedStages(w, thresholds::kMinEffect);
  const Loads loads = ComputeLoads(store);
  out.Add({.findings = StageFindings(w, loads, stages)});
  out.Add(WorkerStragglers(store, w, thresholds::kMinEffect, stages, out.step_time_median_ms));
  if (out.stragglers.empty())  // so the findings so far are the stage imbalances
    if (auto f = OpTableDataImbalance(w, loads, stages, thresholds::kMinEffect, out.findings))
      out.findings.push_back(std::move(*f));
  return out;
}

}  // namespace strata::diagnosis
