// Diagnosis of traces with profiler steps and collectives (see trace_diagnosis.h and diagnose.h).
#include "analysis/diagnosis/trace_diagnosis.h"
#include "core/round.h"
#include "store/slice_names.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "analysis/diagnosis/cause_choice.h"
#include "analysis/diagnosis/collective_units.h"
#include "analysis/diagnosis/data_imbalance.h"
#include "analysis/diagnosis/group_diagnosis.h"
#include "analysis/diagnosis/impact.h"
#include "analysis/diagnosis/op_outliers.h"
#include "analysis/diagnosis/peer_difference.h"
#include "analysis/diagnosis/phase_model.h"
#include "analysis/diagnosis/phase_whatif.h"
#include "analysis/diagnosis/straggler.h"
#include "analysis/diagnosis/window_profile.h"
#include "core/robust_stats.h"
#include "model/clock_alignment.h"
#include "model/collectives.h"
#include "model/step_windows.h"

namespace strata::diagnosis {

namespace {

/// Differential profile of one straggler against its peers over its late steps.
struct Differential {
  ProfileExcess excess;  // per late step, against the peers' median (peer_difference.h)
  double window_ms = 0, peer_window_ms = 0;
  double start_delay_ms = 0;  // how much later than its peers the rank entered the step (aligned)
  double late_ms = 0;         // its lateness (blame) per late step: how long the others waited for it
  double observed_ms = 0;     // work of any rank seen in the windows besides collectives (0: only those recorded)
  std::vector<std::pair<StringId, double>> op_excess_ms;  // per step, largest first
  size_t steps = 0;
};

Differential Compare(const TraceStore& store, const TrackIndex& index, const model::StepModel& steps,
                     const model::ClockAlignment& clocks, const PhaseModel& phases, const StragglerAnalysis& sa,
                     size_t straggler, size_t ranks) {
  Differential d;
  ExcessMean excess;
  for (size_t s = 0; s < phases.steps.size(); ++s) {
    if (!sa.late[s][straggler]) continue;
    const StepPhases& p = phases.steps[s];
    // The collective this rank was most late for: the window is the step start up to that arrival.
    size_t worst = 0;
    int64_t worst_gap = INT64_MIN;
    for (size_t k = 0; k < p.instances.size(); ++k) {
      int64_t second = INT64_MIN;
      for (size_t r = 0; r < ranks; ++r)
        if (r != straggler) second = std::max(second, p.arrival[k][r]);
      if (p.arrival[k][straggler] - second > worst_gap) {
        worst_gap = p.arrival[k][straggler] - second;
        worst = k;
      }
    }
    std::vector<WindowProfile> profiles(ranks);
    std::vector<double> window(ranks);
    for (size_t r = 0; r < ranks; ++r) {
      const TrackId main_track = steps.MainTrack(r, p.trace_step);
      const int64_t start = p.start[r] + clocks.offset_ns[r];
      const int64_t end = (p.instances.empty() ? p.end[r] : p.arrival[worst][r]) + clocks.offset_ns[r];
      profiles[r] = ProfileWindow(store, index, r, main_track, start, end);
      window[r] = static_cast<double>(end - start);
    }
    std::vector<const WindowProfile*> peers;
    std::vector<size_t> others;
    for (size_t r = 0; r < ranks; ++r)
      if (r != straggler) {
        peers.push_back(&profiles[r]);
        others.push_back(r);
      }
    excess.Add(ExcessOverPeers(profiles[straggler], peers));
    d.window_ms += window[straggler] / 1e6;
    d.late_ms += JudgedLatenessNs(sa, s, straggler) / 1e6;
    for (const WindowProfile& w : profiles) d.observed_ms += (w.compute_ns + w.data_ns + w.device_busy_ns) / 1e6;
    const double peer_start = PeerMedian(others, [&](size_t q) { return static_cast<double>(p.start[q]); });
    d.start_delay_ms += (static_cast<double>(p.start[straggler]) - peer_start) / 1e6;
    d.peer_window_ms += PeerMedian(others, [&](size_t q) { return window[q]; }) / 1e6;
  }
  d.steps = excess.windows();
  if (d.steps == 0) return d;
  const double n = static_cast<double>(d.steps);
  d.excess = excess.Mean();
  d.window_ms /= n;
  d.late_ms /= n;
  d.peer_window_ms /= n;
  d.start_delay_ms /= n;
  d.op_excess_ms = excess.OpsLargestFirst();
  return d;
}

/// Op identities of the straggler that stand out against its peers and its own other steps.
std::vector<OpOutlierEvidence> OpOutliersEvidence(const TraceStore& store, const TrackIndex& index,
                                                  const model::StepModel& steps, const model::ClockAlignment& clocks,
                                                  const PhaseModel& phases, const StragglerAnalysis& sa,
                                                  size_t straggler, size_t ranks) {
  OpOutlierCollector collector(ranks, straggler);
  for (size_t s = 0; s < phases.steps.size(); ++s) {
    const StepPhases& p = phases.steps[s];
    std::vector<std::vector<OpOccurrence>> per_rank(ranks);
    for (size_t r = 0; r < ranks; ++r) {
      const TrackId main_track = steps.MainTrack(r, p.trace_step);
      per_rank[r] =
          OpsInWindow(store, index, r, main_track, p.start[r] + clocks.offset_ns[r], p.end[r] + clocks.offset_ns[r]);
    }
    collector.AddStep(per_rank, sa.late[s][straggler]);
  }
  std::vector<OpOutlierEvidence> out;
  for (const OpOutlier& o : collector.Top(5))
    out.push_back({ShortOpName(store.strings.view(o.name)), o.index, o.duration_ms, o.peer_ms, o.excess_ms,
                   o.z_across_ranks, o.z_across_steps, o.offset_z_across_ranks});
  return out;
}

// The job model's sources and what they lacked, as the path's fields, notes and input problems.
PathResult DescribeJobModel(const TraceStore& store, const model::JobModel& job) {
  PathResult out;
  const size_t ranks = store.ranks.size();
  const model::StepModel& steps = job.steps;
  const model::CollectiveModel& collectives = job.collectives;
  out.step_source = steps.source;
  out.steps = steps.steps;
  out.collective_source = collectives.source;
  out.clock_residual_us = RoundTo(job.clocks.residual_us, 3);
  out.host_clocks = job.clocks.host_clocks;
  if (job.clocks.host_clocks)
    out.notes.push_back(
        "the collectives are CPU-side NCCL calls, which return once the kernel is enqueued: their ends are no "
        "common instant, so the ranks' clocks were not aligned by them; the traces' own epoch clocks were "
        "used (one host shares one clock; across hosts NTP keeps them within milliseconds) and lateness is "
        "each rank's launch against its peers'");
  else if (!collectives.ends_synchronize)
    out.verdict_notes.push_back({NoteId::kLaunchReturningClocks, {}});
  for (size_t r = 0; r < ranks; ++r)
    out.clock_offsets_us[store.ranks[r].rank] = RoundTo(static_cast<double>(job.clocks.offset_ns[r]) / 1000.0, 3);
  if (steps.source == model::StepSource::kNone && !steps.steps.empty())
    out.notes.push_back(
        "no steps found (no ProfilerStep, no repeating collective sequence): the whole trace "
        "is analysed as one window, step 0");
  if (steps.steps.empty()) out.notes.push_back("no step found on every rank: nothing to compare per step");
  for (size_t r = 0; r < ranks && r < steps.duplicate_markers.size(); ++r) {
    if (steps.duplicate_markers[r] > 0)
      out.verdict_notes.push_back({NoteId::kDuplicateStepMarkers,
                                   {std::to_string(store.ranks[r].rank), std::to_string(steps.duplicate_markers[r])}});
    if (steps.out_of_order_markers[r] > 0)
      out.verdict_notes.push_back(
          {NoteId::kStepMarkersBackwards,
           {std::to_string(store.ranks[r].rank), std::to_string(steps.out_of_order_markers[r])}});
  }
  if (collectives.source == model::CollectiveSource::kNone)
    out.notes.push_back("no collective operations found: ranks cannot be aligned or compared by arrival");
  if (collectives.unmatched_calls > 0)
    out.notes.push_back(fmt::format("{} collective calls have no counterpart on some rank and were not used",
                                    collectives.unmatched_calls));
  out.unmatched_collective_calls = collectives.unmatched_calls;
  for (const model::MatchedCollective& m : collectives.matched) out.matched += m.complete() && m.expected >= 2;
  return out;
}

// The phase replay's what-if, as the result's whatif.
WhatIf PhaseWhatIfOf(const TraceStore& store, const PhaseWhatIf& whatif) {
  WhatIf out;
  out.model = WhatIfModel::kPhaseReplay;
  out.slowdown = RoundTo(whatif.slowdown, 4);
  out.ideal_step_ms = RoundTo(whatif.ideal_step_ms, 3);
  for (size_t r = 0; r < store.ranks.size(); ++r)
    out.by_rank[std::to_string(store.ranks[r].rank)] = RoundTo(whatif.by_rank[r], 4);
  for (const auto& [k, v] : whatif.by_op_type) out.by_op_type[k] = RoundTo(v, 4);
  return out;
}

// Rank index r's arrival evidence: its collectives against its peers', its lateness by step, KS.
TraceStragglerEvidence StragglerEvidenceOf(const PhaseModel& phases, const StragglerAnalysis& sa, size_t r) {
  std::vector<size_t> peers;
  for (size_t q = 0; q < sa.mean_collective_ms.size(); ++q)
    if (q != r) peers.push_back(q);
  TraceStragglerEvidence ste;
  ste.collective_ms = sa.mean_collective_ms[r];
  ste.peer_collective_ms = PeerMedian(peers, [&](size_t q) { return sa.mean_collective_ms[q]; });
  for (size_t si = 0; si < phases.steps.size(); ++si)
    ste.late_ms_by_step.emplace_back(phases.steps[si].step, JudgedLatenessNs(sa, si, r) / 1e6);
  ste.ks_score = sa.ks_score[r];
  ste.ks_robust_z = sa.ks_z[r];
  return ste;
}

// The cause of a straggler's lateness among the classes its differential profile measures (cause_choice.h).
CauseChoice ChooseTraceCause(const Differential& d, bool gpu) {
  return NameCause(
      ProfileEvidence{ProfileCandidates(d.excess, gpu, d.observed_ms > 0, d.excess.device_idle_ms), d.late_ms});
}

// KAIR-style backward blame: the late arrival comes either from more time inside the step before the
// arrival (a slow op, or a host gap no op covers) or from entering the step late (a slow dependency
// edge: the previous step's synchronization or transfer).
void FillBlame(const Differential& d, const Finding& f, const CauseChoice& choice, TraceRankEvidence* e) {
  const double late = d.window_ms - d.peer_window_ms;
  const bool edge = d.start_delay_ms > 0 && d.start_delay_ms >= late;
  e->blame_kind = edge                           ? BlameKind::kDependencyEdge
                  : f.cause == Cause::kHostStall ? BlameKind::kHostGap
                  : f.cause == Cause::kUnknown   ? BlameKind::kUnexplained
                                                 : BlameKind::kSlowOp;
  e->step_start_delay_ms = d.start_delay_ms;
  e->blame = edge ? fmt::format(
                        "late arrival at collectives <- entered the step {:.3f} ms after its peers (dependency "
                        "edge from the previous step)",
                        d.start_delay_ms)
                  : fmt::format("late arrival at collectives <- {} ms more in the window before arrival <- {}",
                                RoundTo(late, 3),
                                f.cause == Cause::kUnknown
                                    ? fmt::format("no single class of work explains it (the largest covers {:.0f}% of "
                                                  "the lateness)",
                                                  100.0 * choice.explained)
                                    : fmt::format("{} (+{:.3f} ms{})", LayerName(f.layer), choice.excess,
                                                  f.op ? ", most in " + *f.op : std::string()));
}

// What the trace path needs to turn one straggler into a finding.
struct TraceContext {
  const TraceStore& store;
  const TrackIndex& index;
  const model::JobModel& job;
  const PhaseModel& phases;
  const StragglerAnalysis& sa;
  const PhaseWhatIf& whatif;
  CompareUnit unit;
};

// The finding about straggler `st` (rank index ri): its cause from the differential profile, the culprit
// op, its saving from the what-if, and the evidence behind them.
Finding StragglerFinding(const TraceContext& c, const Straggler& st, const TraceStragglerEvidence& ste, RankIndex ri) {
  const size_t ranks = c.store.ranks.size();
  const size_t r = ri.value();
  const Differential d = Compare(c.store, c.index, c.job.steps, c.job.clocks, c.phases, c.sa, r, ranks);
  Finding f;
  f.rank = st.rank;
  f.ranks = {st.rank};
  // A finding's step is a step of the trace: over one step's collectives, that step.
  if (!st.persistent && !st.steps.empty())
    f.step = c.unit == CompareUnit::kStep ? st.steps.front() : c.phases.steps.front().trace_step;
  f.impact_pct = RoundTo(100.0 * c.whatif.fix_rank_saving[r], 2);
  const CauseChoice choice = ChooseTraceCause(d, c.job.collectives.source == model::CollectiveSource::kGpuKernels);
  SetCause(choice, &f);
  if (const auto op = CulpritOp(c.store.strings, d.op_excess_ms, f.cause))
    f.op = ShortOpName(c.store.strings.view(*op));
  // Per step (the mean over the steps), or, over one step's collectives, per collective it was late at.
  const std::string span = UnitSpan(c.unit, st.steps.size(), c.phases.steps.size());
  const std::string late = c.unit == CompareUnit::kStep
                               ? fmt::format("{:.1f} ms late at collectives {}", st.late_ms_per_step, span)
                               : fmt::format("late {}, {:.1f} ms each", span, d.late_ms);
  f.summary =
      fmt::format("rank {} arrives {} ({}); fixing it saves {} of step time", st.rank, late,
                  d.observed_ms > 0 ? CausePhrase(f.cause)
                                    : "only its collectives were recorded: record the job with strata record for the "
                                      "layers below",
                  SavingPercent(f.impact_pct));
  TraceRankEvidence e;
  e.late_ms_per_step = st.late_ms_per_step;
  e.late_ms_per_late_step = d.late_ms;
  e.explained_share = choice.explained;
  e.late_steps = st.steps;
  e.window_ms = d.window_ms;
  e.peer_window_ms = d.peer_window_ms;
  e.excess_ms = {d.excess.compute_ms, d.excess.data_ms, d.excess.host_gap_ms, d.excess.device_busy_ms,
                 d.excess.device_idle_ms};
  for (size_t i = 0; i < d.op_excess_ms.size() && e.op_excess_per_step.size() < 5; ++i) {
    const std::string_view n = c.store.strings.view(d.op_excess_ms[i].first);
    if (IsContainerSliceName(n)) continue;
    e.op_excess_per_step.push_back({ShortOpName(n), d.op_excess_ms[i].second});
  }
  e.op_outliers = OpOutliersEvidence(c.store, c.index, c.job.steps, c.job.clocks, c.phases, c.sa, r, ranks);
  FillBlame(d, f, choice, &e);
  e.collective_ms = ste.collective_ms;
  e.peer_collective_ms = ste.peer_collective_ms;
  f.evidence.kind = std::move(e);
  return f;
}

// Ranks slowed alike (straggler.h): one finding for the group, its evidence and cause those of its latest
// rank against all its peers; fixing the group is what the what-if's ideal assumes, so its saving is the
// what-if's waste 1 − 1/S (fixing one of them alone saves little: the others still hold the step).
Finding SlowedAlikeFinding(const TraceContext& c, const std::vector<Straggler>& group, RankIndex top_index) {
  Finding f =
      StragglerFinding(c, group.front(), std::get<TraceStragglerEvidence>(group.front().evidence.kind), top_index);
  f.ranks.clear();
  std::vector<std::string> late;
  for (const Straggler& st : group) {
    f.ranks.push_back(st.rank);
    late.push_back(fmt::format("{:.1f}", st.late_ms_per_step));
  }
  f.impact_pct = RoundTo(100.0 * (1.0 - 1.0 / std::max(1.0, c.whatif.slowdown)), 2);
  f.summary = fmt::format(
      "ranks {} are slowed alike: each arrives at collectives behind its peers' median in most steps ({} ms "
      "per step) and close to the others of them, so last-arrival blame names none of them; rank {} is the "
      "latest ({}); fixing them saves {} of step time",
      fmt::join(f.ranks, ", "), fmt::join(late, ", "), group.front().rank,
      f.cause == Cause::kUnknown ? "cause not determined from the trace" : CausePhrase(f.cause),
      SavingPercent(f.impact_pct));
  return f;
}

// Data imbalance: several ranks are late in turn, none persistently (of `stragglers`), and the what-if loss
// is real.
std::optional<Finding> TraceDataImbalance(const TraceContext& c, const std::vector<Straggler>& stragglers) {
  const double waste = 1.0 - 1.0 / std::max(1e-9, c.whatif.slowdown);
  const StepOps step_ops = [&](size_t s, size_t r) {
    const StepPhases& p = c.phases.steps[s];
    return OpsInWindow(c.store, c.index, r, c.job.steps.MainTrack(r, p.trace_step),
                       p.start[r] + c.job.clocks.offset_ns[r], p.end[r] + c.job.clocks.offset_ns[r]);
  };
  const LoadScaling load = MeasureLoadScaling(c.sa, step_ops, {}, thresholds::kMinEffect);
  auto f = DataImbalanceFinding(c.sa, c.store.RankNumbers(), waste, load, stragglers, thresholds::kMinEffect);
  if (f) std::get<LoadImbalanceEvidence>(f->evidence.kind).slowdown = c.whatif.slowdown;
  return f;
}

// With one step common to every rank, its collectives become the units compared (collective_units.h), with
// a caveat that says so; otherwise `phases` is left as it is.
void CompareOverCollectivesIfOneStep(PhaseModel* phases, PathResult* out) {
  PhaseModel units = CollectiveUnits(*phases);
  if (units.steps.empty()) return;
  out->unit = CompareUnit::kCollective;
  out->verdict_notes.push_back(
      {NoteId::kComparedOverCollectives,
       {std::to_string(units.steps.size()),
        units.cumulative ? "; the calls return at launch, so each unit counts only the launch delay it added" : ""}});
  const double coverage = CollectiveUnitCoverage(*phases);
  if (coverage < thresholds::kMinCollectiveUnitCoverage)
    out->verdict_notes.push_back({NoteId::kCollectivesEndEarly, {fmt::format("{:.0f}", 100.0 * coverage)}});
  *phases = std::move(units);
}

// The data-parallel path: phases, lateness at collectives, the phase replay's what-if, stragglers and their
// evidence, data imbalance; on top of the job model's description.
PathResult DiagnoseDataParallel(const TraceStore& store, const std::vector<SliceRows>& rows_by_rank,
                                const model::JobModel& job, PathResult out) {
  const size_t ranks = store.ranks.size();
  PhaseModel phases = BuildPhases(job.steps, job.collectives, job.clocks, ranks);
  std::vector<double> step_ms;
  for (const auto& p : phases.steps) step_ms.push_back(static_cast<double>(p.time_ns) / 1e6);
  out.step_time_median_ms = RoundTo(Median(step_ms), 3);
  out.step_time_p90_ms = RoundTo(Quantile(step_ms, 0.9), 3);
  if (ranks >= 2) CompareOverCollectivesIfOneStep(&phases, &out);
  out.units = phases.steps.size();
  if (ranks < 2 || phases.steps.empty()) {
    out.whatif.model = WhatIfModel::kNone;
    return out;
  }

  StragglerOptions sopt;
  sopt.min_effect = thresholds::kMinEffect;
  StragglerAnalysis sa = LocateStragglers(phases, ranks, sopt);
  if (out.unit == CompareUnit::kCollective) AddStepStraggler(phases, sopt, &sa);
  for (size_t s = 0; s < phases.steps.size(); ++s)
    for (size_t r = 0; r < ranks; ++r)
      out.lateness_vs_peers_ms[store.ranks[r].rank][phases.steps[s].step] = sa.lateness_vs_peers_ns[s][r] / 1e6;
  std::vector<size_t> straggler_indices;
  for (const LocatedStraggler& st : sa.stragglers) straggler_indices.push_back(st.rank.value());
  const PhaseWhatIf whatif = ComputePhaseWhatIf(phases, store, ranks, straggler_indices);
  out.whatif = PhaseWhatIfOf(store, whatif);

  const TrackIndex index(store, rows_by_rank);
  const TraceContext context{store, index, job, phases, sa, whatif, out.unit};
  std::vector<Straggler> numbered = NumberedStragglers(sa, store.RankNumbers());
  for (size_t k = 0; k < numbered.size(); ++k) {
    const RankIndex r = sa.stragglers[k].rank;
    const TraceStragglerEvidence ste = StragglerEvidenceOf(phases, sa, r.value());
    numbered[k].evidence.kind = ste;
    if (!sa.slowed_alike) out.findings.push_back(StragglerFinding(context, numbered[k], ste, r));
  }
  // Sorted latest first: with ranks slowed alike, the first is the group's finding's rank.
  if (sa.slowed_alike && !numbered.empty())
    out.findings.push_back(SlowedAlikeFinding(context, numbered, sa.stragglers.front().rank));
  out.stragglers.insert(out.stragglers.end(), numbered.begin(), numbered.end());
  if (auto f = TraceDataImbalance(context, out.stragglers)) out.findings.push_back(std::move(*f));
  SortLatestFirst(&out.stragglers);
  return out;
}

}  // namespace

PathResult DiagnoseTraces(const TraceStore& store, const std::vector<SliceRows>& rows_by_rank,
                          const model::JobModel& job) {
  PathResult described = DescribeJobModel(store, job);
  if (job.collectives.subgroups)  // tensor/pipeline/data-parallel groups: compare ranks with their role peers
    return DiagnoseGroupedTraces(store, rows_by_rank, job.steps, job.collectives, job.clocks, std::move(described));
  return DiagnoseDataParallel(store, rows_by_rank, job, std::move(described));
}

}  // namespace strata::diagnosis
