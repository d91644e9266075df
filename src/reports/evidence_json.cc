// Evidence and layout as JSON (see evidence_json.h).
#include "reports/evidence_json.h"

#include <algorithm>
#include <string>
#include <variant>

#include "core/round.h"

namespace strata {

namespace {

// The diagnosis types named one by one, not `using namespace diagnosis`: in a unity build (STRATA_UNITY) the files
// after this one share its translation unit, and a using-directive would reach their name lookups too.
using diagnosis::BlameKindName;
using diagnosis::CauseName;
using diagnosis::CounterComparison;
using diagnosis::CrossLayerComparison;
using diagnosis::DecidingScoreName;
using diagnosis::DetectionEvidence;
using diagnosis::DpImbalanceEvidence;
using diagnosis::EvidenceSource;
using diagnosis::EvidenceSourceName;
using diagnosis::FindingEvidence;
using diagnosis::GroupRankEvidence;
using diagnosis::GroupStragglerEvidence;
using diagnosis::JobLayout;
using diagnosis::LoadImbalanceEvidence;
using diagnosis::ObserverName;
using diagnosis::OpExcess;
using diagnosis::OpOutlierEvidence;
using diagnosis::PersistenceName;
using diagnosis::RankLayerMetrics;
using diagnosis::RecordedCpuEvidence;
using diagnosis::RecordedLinkEvidence;
using diagnosis::StageExcessEvidence;
using diagnosis::StageRatioEvidence;
using diagnosis::StalledRankState;
using diagnosis::StallEvidence;
using diagnosis::StateText;
using diagnosis::StragglerEvidence;
using diagnosis::TraceRankEvidence;
using diagnosis::TraceStragglerEvidence;
using diagnosis::WorkerEvidence;
using diagnosis::WorkerStragglerEvidence;
using nlohmann::ordered_json;

ordered_json OptionalRounded(const std::optional<double>& v, int digits) {
  return v ? ordered_json(RoundTo(*v, digits)) : ordered_json();
}

ordered_json OpExcessJson(const std::vector<OpExcess>& ops) {
  ordered_json out = ordered_json::array();
  for (const OpExcess& o : ops) out.push_back({{"op", o.op}, {"excess_ms", RoundTo(o.excess_ms, 3)}});
  return out;
}

ordered_json OpOutliersJson(const std::vector<OpOutlierEvidence>& outliers) {
  ordered_json out = ordered_json::array();
  for (const OpOutlierEvidence& o : outliers)
    out.push_back({{"op", o.op},
                   {"occurrence", o.occurrence},
                   {"duration_ms", RoundTo(o.duration_ms, 3)},
                   {"peer_ms", RoundTo(o.peer_ms, 3)},
                   {"excess_ms", RoundTo(o.excess_ms, 3)},
                   {"z_across_ranks", OptionalRounded(o.z_across_ranks, 2)},
                   {"z_across_steps", OptionalRounded(o.z_across_steps, 2)},
                   {"start_offset_z_across_ranks", OptionalRounded(o.start_offset_z_across_ranks, 2)}});
  return out;
}

template <typename K>
ordered_json RatioMap(const std::vector<std::pair<K, double>>& v, int digits) {
  ordered_json out = ordered_json::object();
  for (const auto& [k, x] : v) out[std::to_string(k)] = RoundTo(x, digits);
  return out;
}

// ---- Straggler kinds ----

void Add(const TraceStragglerEvidence& e, ordered_json& j) {
  j["collective_ms"] = RoundTo(e.collective_ms, 3);
  j["peer_collective_ms"] = RoundTo(e.peer_collective_ms, 3);
  j["late_ms_by_step"] = RatioMap(e.late_ms_by_step, 3);
  j["ks_score"] = RoundTo(e.ks_score, 4);
  j["ks_robust_z"] = RoundTo(e.ks_robust_z, 3);
}

void Add(const GroupStragglerEvidence& e, ordered_json& j) {
  j["stage"] = e.stage;
  if (e.self_excess_ms) j["self_excess_ms"] = RoundTo(*e.self_excess_ms, 3);
  if (e.transfer_excess_ms) j["transfer_excess_ms"] = RoundTo(*e.transfer_excess_ms, 3);
}

void Add(const WorkerStragglerEvidence& e, ordered_json& j) {
  j["dp_rank"] = e.dp_rank;
  j["stage"] = e.stage;
  j["what_if_ratio"] = RoundTo(e.what_if_ratio, 4);
  j["robust_z"] = RoundTo(e.robust_z, 2);
}

void Add(const RecordedLinkEvidence& e, ordered_json& j) {
  j["link_busy_pct"] = RoundTo(100 * e.link_busy_share, 2);
  j["peers_link_busy_pct"] = RoundTo(100 * e.peers_link_busy_share, 2);
}

void Add(const RecordedCpuEvidence& e, ordered_json& j) {
  j["cpu_excess_pct"] = RoundTo(100 * e.cpu_excess_share, 2);
  j["runq_other_process_pct"] = RoundTo(100 * e.runq_other_process_share, 2);
  j["cgroup_throttled_pct"] = RoundTo(100 * e.cgroup_throttled_share, 2);
}

// ---- Finding kinds ----

void Add(const TraceRankEvidence& e, ordered_json& j) {
  j["late_ms_per_step"] = e.late_ms_per_step;
  j["late_ms_per_late_step"] = RoundTo(e.late_ms_per_late_step, 3);
  j["explained_share"] = RoundTo(e.explained_share, 3);
  j["late_steps"] = e.late_steps;
  j["window_ms"] = RoundTo(e.window_ms, 3);
  j["peer_window_ms"] = RoundTo(e.peer_window_ms, 3);
  j["excess_ms"] = {{"compute", RoundTo(e.excess_ms.compute, 3)},
                    {"data_loading", RoundTo(e.excess_ms.data_loading, 3)},
                    {"host_gap", RoundTo(e.excess_ms.host_gap, 3)},
                    {"device_busy", RoundTo(e.excess_ms.device_busy, 3)},
                    {"device_idle", RoundTo(e.excess_ms.device_idle, 3)}};
  j["op_excess_per_step"] = OpExcessJson(e.op_excess_per_step);
  j["op_outliers"] = OpOutliersJson(e.op_outliers);
  j["blame_kind"] = BlameKindName(e.blame_kind);
  j["step_start_delay_ms"] = RoundTo(e.step_start_delay_ms, 3);
  j["blame"] = e.blame;
  j["collective_ms"] = RoundTo(e.collective_ms, 3);
  j["peer_collective_ms"] = RoundTo(e.peer_collective_ms, 3);
}

void Add(const GroupRankEvidence& e, ordered_json& j) {
  if (e.excess_ms) {
    j["excess_ms"] = {{"data_loading", RoundTo(e.excess_ms->data_loading, 3)},
                      {"host_gap", RoundTo(e.excess_ms->host_gap, 3)},
                      {"host_compute", RoundTo(e.excess_ms->host_compute, 3)},
                      {"device_busy", RoundTo(e.excess_ms->device_busy, 3)},
                      {"device_idle", RoundTo(e.excess_ms->device_idle, 3)}};
    j["op_excess_per_step"] = OpExcessJson(e.op_excess_per_step);
  }
  j["blame_kind"] = BlameKindName(e.blame_kind);
  j["late_ms_per_step"] = e.late_ms_per_step;
  j["late_ms_per_late_step"] = RoundTo(e.late_ms_per_late_step, 3);
  j["explained_share"] = RoundTo(e.explained_share, 3);
  j["late_steps"] = e.late_steps;
  j["stage"] = e.stage;
  j["peers"] = e.peers;
  j["self_excess_ms"] = RoundTo(e.self_excess_ms, 3);
  j["transfer_excess_ms"] = RoundTo(e.transfer_excess_ms, 3);
}

void Add(const StageExcessEvidence& e, ordered_json& j) {
  j["stage_excess_ms"] = RoundTo(e.stage_excess_ms, 3);
  j["late_steps"] = e.late_steps;
  j["op_excess_per_step"] = OpExcessJson(e.op_excess_per_step);
}

void Add(const StageRatioEvidence& e, ordered_json& j) {
  j["stage_ratio"] = RoundTo(e.stage_ratio, 4);
  j["by_stage"] = RatioMap(e.by_stage, 4);
}

void Add(const WorkerEvidence& e, ordered_json& j) {
  Add(e.worker, j);
  j["compute_ratio_vs_stage_peers"] = RoundTo(e.compute_ratio_vs_stage_peers, 4);
  j["excess_ms_per_step"] = RoundTo(e.excess_ms_per_step, 3);
  j["compute_excess_ms_per_step"] = RoundTo(e.compute_excess_ms_per_step, 3);
  j["explained_share"] = RoundTo(e.explained_share, 3);
}

void Add(const DpImbalanceEvidence& e, ordered_json& j) {
  j["by_dp_rank"] = RatioMap(e.by_dp_rank, 4);
  j["dp_ranks_slowest_in_some_step"] = e.dp_ranks_slowest_in_some_step;
}

void Add(const LoadImbalanceEvidence& e, ordered_json& j) {
  j["late_pairs"] = e.late_pairs;
  j["broad_late_pairs"] = e.broad_late_pairs;
  j["op_scaling_median"] = RoundTo(e.op_scaling_median, 4);
  if (e.slowdown) j["slowdown"] = RoundTo(*e.slowdown, 4);
}

void Add(const DetectionEvidence& e, ordered_json& j) {
  j["first_step"] = e.first_step;
  j["late_ms"] = e.late_ms;
  j["group_step_ms"] = e.group_step_ms;
  j["mixture_corroborates"] = e.mixture_corroborates;
  j["excess_ms"] = RoundTo(e.excess_ms, 3);
  j["explained_share"] = RoundTo(e.explained_share, 3);
  j["score"] = DecidingScoreName(e.score);
  j["peer"] =
      e.peers > 0
          ? ordered_json{{"peers", e.peers}, {"late_ms", RoundTo(e.peer_late_ms, 3)}, {"z", RoundTo(e.peer_z, 2)}}
          : ordered_json();
  j["self"] = e.self_ready ? ordered_json{{"history_steps", e.self_history},
                                          {"late_ms", RoundTo(e.self_late_ms, 3)},
                                          {"z", RoundTo(e.self_z, 2)},
                                          {"baseline_ms", RoundTo(e.self_baseline_ms, 3)}}
                           : ordered_json();
  j["onset_step"] = e.onset_step >= 0 ? ordered_json(e.onset_step) : ordered_json();
  j["onset_unix"] = e.onset_unix > 0 ? ordered_json(RoundTo(e.onset_unix, 3)) : ordered_json();
  if (e.persistence) j["persistence"] = PersistenceName(*e.persistence);
}

ordered_json StalledRankJson(const StalledRankState& s) {
  ordered_json j;
  j["rank"] = s.rank;
  j["state"] = StateText(s.state);
  j["frame"] = s.frame.empty() ? ordered_json() : ordered_json(s.frame);
  j["native_frame"] = s.native_frame.empty() ? ordered_json() : ordered_json(s.native_frame);
  j["python_stack"] = s.python_stack;
  if (!s.kernel_wait.empty()) j["kernel_wait"] = s.kernel_wait;
  j["since_unix"] = s.since_unix_s > 0 ? ordered_json(RoundTo(s.since_unix_s, 3)) : ordered_json();
  j["last_completed_seq"] = s.last_completed_seq >= 0 ? ordered_json(s.last_completed_seq) : ordered_json();
  j["last_completed_op"] = s.last_completed_op.empty() ? ordered_json() : ordered_json(s.last_completed_op);
  j["came_back_unix"] = s.came_back_unix_s > 0 ? ordered_json(RoundTo(s.came_back_unix_s, 3)) : ordered_json();
  j["observed_by"] = ObserverName(s.observed_by);
  if (s.lock_owner_tid) j["lock_owner_tid"] = s.lock_owner_tid;
  if (!s.other_threads.empty()) {
    ordered_json threads = ordered_json::array();
    for (const StalledRankState::OtherThread& t : s.other_threads)
      threads.push_back({{"tid", t.tid},
                         {"name", t.name},
                         {"state", StateText(t.state)},
                         {"since_unix", t.since_unix_s > 0 ? ordered_json(RoundTo(t.since_unix_s, 3)) : ordered_json()},
                         {"idle", t.idle},
                         {"frame", t.frame.empty() ? ordered_json() : ordered_json(t.frame)},
                         {"python_stack", t.python_stack}});
    j["other_threads"] = std::move(threads);
  }
  return j;
}

void Add(const StallEvidence& e, ordered_json& j) {
  j["communicator"] = e.communicator;
  j["seq"] = e.seq;
  if (!e.calls.empty()) {  // a mismatch
    ordered_json calls = ordered_json::array();
    for (const StallEvidence::Call& c : e.calls) {
      calls.push_back({{"op", c.op},
                       {"count", c.count ? ordered_json(c.count) : ordered_json()},
                       {"bytes", c.bytes ? ordered_json(c.bytes) : ordered_json()},
                       {"ranks", c.ranks}});
      if (!c.sizes.empty()) calls.back()["sizes"] = c.sizes;
      if (!c.dtypes.empty()) calls.back()["dtypes"] = c.dtypes;
    }
    j["calls"] = calls;
    return;
  }
  j["op"] = e.op;
  j["waiting_ranks"] = e.waiting_ranks;
  j["missing_ranks"] = e.missing_ranks;
  j["stalled_since_unix"] = RoundTo(e.stalled_since_unix, 3);
  j["stalled_for_s"] = RoundTo(e.stalled_for_s, 2);
  j["stall_threshold_s"] = RoundTo(e.threshold_s, 2);
  j["ongoing"] = e.ongoing;
  ordered_json missing = ordered_json::array();
  for (const StalledRankState& s : e.missing) missing.push_back(StalledRankJson(s));
  j["missing"] = missing;
  if (!e.wavefront.empty()) j["wavefront"] = e.wavefront;
}

void Add(const std::monostate&, ordered_json&) {}

ordered_json CrossLayerJson(const CrossLayerComparison& c) {
  ordered_json j;
  j["measured_over"] = c.over_late_steps ? "late steps" : "training window";
  j["straggler"] = RankLayerMetricsJson(c.straggler);
  ordered_json peers;  // null when the recording has no other rank
  for (const auto& [rank, m] : c.peers) peers[std::to_string(rank)] = RankLayerMetricsJson(m);
  j["peers"] = peers;
  if (c.explained) {
    const double late = c.explained->late_share;
    j["late_share_pct"] = RoundTo(100 * late, 2);
    // A share of the lateness, at most all of it; the layer's excess itself (it can exceed the lateness when
    // the recorded layers overlap) is excess_pct, a share of the window like late_share_pct.
    j["explained_pct"] = late > 0 ? RoundTo(std::min(100.0, 100 * c.explained->best_excess / late), 1) : 0.0;
    j["excess_pct"] = RoundTo(100 * c.explained->best_excess, 2);
  }
  return j;
}

}  // namespace

ordered_json RankLayerMetricsJson(const RankLayerMetrics& m) {
  return {{"window_s", RoundTo(m.window_s, 3)},
          {"runq_pct", RoundTo(100 * m.runq_share, 2)},
          {"runq_other_process_pct", RoundTo(100 * m.runq_foreign_share, 2)},
          {"runq_idle_cpu_pct", RoundTo(100 * m.runq_idle_share, 2)},
          {"runq_after_uninterruptible_pct", RoundTo(100 * m.runq_after_dstate_share, 2)},
          {"cgroup_throttled_pct", RoundTo(100 * m.throttled_share, 2)},
          {"gc_pct", RoundTo(100 * m.gc_share, 2)},
          {"gc_count", m.gc_count},
          {"uninterruptible_pct", RoundTo(100 * m.dstate_share, 2)},
          {"kernel_cpu_pct", RoundTo(100 * m.sys_share, 2)},
          {"major_faults_per_s", RoundTo(m.majflt_per_s, 1)},
          {"memcg_limit_hits_per_s", RoundTo(m.memcg_fail_per_s, 2)},
          {"nic_mb_per_s", m.net_bytes_per_s < 0 ? ordered_json() : ordered_json(RoundTo(m.net_bytes_per_s / 1e6, 3))},
          {"link_busy_pct", m.link_busy_share < 0 ? ordered_json() : ordered_json(RoundTo(100 * m.link_busy_share, 2))},
          {"link_capacity_mbit",
           m.link_busy_share < 0 ? ordered_json() : ordered_json(RoundTo(m.link_capacity_bps / 1e6, 1))}};
}

ordered_json StragglerEvidenceJson(const StragglerEvidence& e) {
  ordered_json j = ordered_json::object();
  // Stragglers found from the recording alone say so first.
  const bool recorded =
      std::holds_alternative<RecordedLinkEvidence>(e.kind) || std::holds_alternative<RecordedCpuEvidence>(e.kind);
  const bool from = e.from != EvidenceSource::kNone;
  if (recorded && from) j["from"] = EvidenceSourceName(e.from);
  std::visit([&](const auto& kind) { Add(kind, j); }, e.kind);
  if (!recorded && from) j["from"] = EvidenceSourceName(e.from);
  return j;
}

ordered_json FindingEvidenceJson(const FindingEvidence& e) {
  ordered_json j = ordered_json::object();
  std::visit([&](const auto& kind) { Add(kind, j); }, e.kind);
  if (!e.counters.empty()) {
    ordered_json counters = ordered_json::object();
    for (const CounterComparison& c : e.counters)
      counters[c.counter] = {{"rank", RoundTo(c.rank, 1)}, {"peers", RoundTo(c.peers, 1)}, {"source", c.source}};
    j["counters"] = counters;
  }
  if (e.cause_before_counters) j["cause_before_counters"] = CauseName(*e.cause_before_counters);
  if (e.cross_layer) j["cross_layer"] = CrossLayerJson(*e.cross_layer);
  if (e.from != EvidenceSource::kNone) j["from"] = EvidenceSourceName(e.from);
  return j;
}

ordered_json LayoutJson(const JobLayout& layout) {
  ordered_json j = ordered_json::object();
  if (layout.op_table) {
    j["dp"] = layout.op_table->dp;
    j["pp"] = layout.op_table->pp;
    j["chunks"] = layout.op_table->chunks;
  }
  if (layout.pipeline_stages) {
    j["pipeline_stages"] = *layout.pipeline_stages;
    j["stages_from"] = *layout.pipeline_stages > 1 ? "send/recv pairs" : "none (no pipeline send/recv)";
  }
  return j;
}

}  // namespace strata
