// Rendering of the agent's status and metrics (see status_render.h).
#include "agent/status_render.h"

#include "analysis/diagnosis/stall.h"
#include "analysis/diagnosis/thresholds.h"

#include <fmt/format.h>

#include <set>

#include "core/round.h"
#include "reports/diagnosis_report.h"

namespace strata::agent {

std::string PromLabel(const std::string& value) {
  std::string out;
  for (char c : value) {
    if (c == '\\' || c == '"') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out;
}

namespace {

// The job's stall: its last window diagnosis's, or (serve) a hang among its open findings.
const diagnosis::StallEvidence* StallOf(const JobState& job) {
  if (job.last)
    if (const diagnosis::StallEvidence* e = diagnosis::JobStall(*job.last)) return e;
  for (const OpenFinding& f : job.open)
    if (f.finding.cause == diagnosis::Cause::kHang)
      if (const auto* e = std::get_if<diagnosis::StallEvidence>(&f.finding.evidence.kind)) return e;
  return nullptr;
}

std::set<int> RanksOf(const JobState& job) {
  std::set<int> ranks;
  for (const auto& [pid, rank] : job.rank_of_pid) ranks.insert(rank);
  if (job.online)
    for (const auto& [rank, step] : job.online->last_step) ranks.insert(rank);
  return ranks;
}

nlohmann::ordered_json OnlineJson(const OnlineView& v) {
  nlohmann::ordered_json o;
  o["summaries"] = v.summaries;
  o["duplicates"] = v.duplicates;
  o["late"] = v.late;
  o["gaps"] = v.gaps;
  o["realigned"] = v.realigned;
  o["steps_judged"] = v.steps_judged;
  o["steps_self_judged"] = v.steps_self_judged;
  o["judged_through"] = v.judged_through;
  nlohmann::ordered_json last = nlohmann::ordered_json::object();
  for (const auto& [rank, step] : v.last_step) last[std::to_string(rank)] = step;
  o["last_step"] = last;
  nlohmann::ordered_json mixture = {{"k", v.mixture_k}, {"points", v.mixture_points}};
  nlohmann::ordered_json anomalous = nlohmann::ordered_json::object();
  for (const auto& [rank, n] : v.mixture_anomalies) anomalous[std::to_string(rank)] = n;
  mixture["anomalous_points_by_rank"] = anomalous;
  o["mixture"] = mixture;
  return o;
}

// Both scores of an online detection (analysis/online/online_detector.h): which decided, the peer score
// (null when the rank was alone) and the self score (null before kOnlineSelfMinHistory learned steps).
nlohmann::ordered_json ScoresJson(const online::Detection& d) {
  nlohmann::ordered_json o;
  o["decided_by"] = online::DecidingScoreName(d.decided_by);
  o["peer"] = d.peers > 0 ? nlohmann::ordered_json{{"peers", d.peers},
                                                   {"late_ms", RoundTo(d.peer_late_s * 1e3, 3)},
                                                   {"z", RoundTo(d.peer_z, 2)}}
                          : nlohmann::ordered_json();
  const bool self = d.self_history >= static_cast<int32_t>(diagnosis::thresholds::kOnlineSelfMinHistory);
  o["self"] = self ? nlohmann::ordered_json{{"history_steps", d.self_history},
                                            {"late_ms", RoundTo(d.self_late_s * 1e3, 3)},
                                            {"z", RoundTo(d.self_z, 2)},
                                            {"baseline_ms", RoundTo(d.self_baseline_s * 1e3, 3)}}
                   : nlohmann::ordered_json();
  return o;
}

}  // namespace

nlohmann::ordered_json StatusJson(const AgentSnapshot& s) {
  nlohmann::ordered_json j;
  j["schema"] = "strata.agent.status/1";
  j["program"] = s.program;
  j["host"] = s.host;
  j["now"] = RoundTo(s.now, 3);
  nlohmann::ordered_json jobs = nlohmann::ordered_json::array();
  for (const JobState& job : s.jobs) {
    nlohmann::ordered_json o;
    o["job"] = job.job;
    o["ranks"] = RanksOf(job);
    o["pids"] = nlohmann::ordered_json::array();
    for (const auto& [pid, rank] : job.rank_of_pid) o["pids"].push_back({{"pid", pid}, {"rank", rank}});
    o["analysed_at"] = RoundTo(job.analysed_at, 3);
    o["ended"] = job.ended;  // its processes are gone; the last round diagnosed its recording as finished
    o["analysis_s"] = RoundTo(job.analysis_s, 4);
    if (!job.error.empty()) o["error"] = job.error;
    if (job.last) {
      o["status"] = diagnosis::VerdictName(job.last->status);
      o["step_time_median_ms"] = RoundTo(job.last->step_time_median_ms, 3);
      o["last_step"] =
          job.last->steps.empty() ? nlohmann::ordered_json() : nlohmann::ordered_json(job.last->steps.back());
    }
    const diagnosis::StallEvidence* stall = StallOf(job);
    o["stalled"] = stall != nullptr;
    o["stalled_for_s"] = stall ? nlohmann::ordered_json(RoundTo(stall->stalled_for_s, 2)) : nlohmann::ordered_json();
    nlohmann::ordered_json findings = nlohmann::ordered_json::array();
    for (const OpenFinding& f : job.open) {
      findings.push_back({{"rank", f.finding.rank ? nlohmann::ordered_json(*f.finding.rank) : nlohmann::ordered_json()},
                          {"cause", diagnosis::CauseName(f.finding.cause)},
                          {"op", f.finding.op ? nlohmann::ordered_json(*f.finding.op) : nlohmann::ordered_json()},
                          {"impact_pct", f.finding.impact_pct},
                          {"confidence", f.finding.confidence},
                          {"detected_at", RoundTo(f.detected_at, 3)},
                          {"rounds", f.rounds},
                          {"source", f.source},
                          {"summary", f.finding.summary}});
    }
    if (job.online)
      for (const online::Detection& d : job.online->open) {
        const diagnosis::Finding f = DetectionFinding(d, job.online->corroborated.at(d.rank));
        findings.push_back(
            {{"rank", d.rank},
             {"cause", diagnosis::CauseName(f.cause)},
             {"step", d.step},
             {"impact_pct", RoundTo(f.impact_pct, 3)},
             {"confidence", f.confidence},
             {"detected_at", RoundTo(d.detected_at, 3)},
             {"source", "online"},
             {"summary", f.summary},
             {"onset_step", d.onset_step >= 0 ? nlohmann::ordered_json(d.onset_step) : nullptr},
             {"onset_unix", d.onset_unix > 0 ? nlohmann::ordered_json(RoundTo(d.onset_unix, 3)) : nullptr},
             {"persistence", online::PersistenceName(d.persistence)},
             {"scores", ScoresJson(d)}});
      }
    o["findings"] = findings;
    if (s.program == "agent")
      o["deep"] = {{"active", job.deep.active},
                   {"requested", job.deep.requested},
                   {"attaching", job.deep.attaching},
                   {"sample_hz", job.deep.sample_hz},
                   {"until_unix", job.deep.until_unix > 0 ? nlohmann::ordered_json(RoundTo(job.deep.until_unix, 3))
                                                          : nlohmann::ordered_json()},
                   {"began_unix", job.deep.began_unix > 0 ? nlohmann::ordered_json(RoundTo(job.deep.began_unix, 3))
                                                          : nlohmann::ordered_json()},
                   {"reason", job.deep.reason},
                   {"windows", job.deep.windows}};
    if (job.online) o["online"] = OnlineJson(*job.online);
    if (job.ownership)
      o["owner"] = {{"serve", job.ownership->owner.empty() ? nlohmann::ordered_json()
                                                           : nlohmann::ordered_json(job.ownership->owner)},
                    {"this_serve", job.ownership->this_serve},
                    {"steps_judged_total", job.ownership->steps_judged_total >= 0
                                               ? nlohmann::ordered_json(job.ownership->steps_judged_total)
                                               : nlohmann::ordered_json()},
                    {"summaries_judged_total", job.ownership->summaries_judged_total >= 0
                                                   ? nlohmann::ordered_json(job.ownership->summaries_judged_total)
                                                   : nlohmann::ordered_json()},
                    {"skipped_judged", job.ownership->skipped_judged}};
    if (job.last) o["diagnosis"] = DiagnosisToJson(*job.last);
    jobs.push_back(std::move(o));
  }
  j["jobs"] = jobs;
  return j;
}

namespace {

// One unlabelled sample with its HELP/TYPE lines: "NAME VALUE".
template <typename Family, typename Value>
void Scalar(Family& family, const char* name, const char* type, const char* help, Value value, std::string* out) {
  family(name, type, help);
  *out += fmt::format("{} {}\n", name, value);
}

template <typename Family>
void PublisherMetrics(const PublisherCounters& p, Family family, std::string* out) {
  Scalar(family, "strata_redis_published_total", "counter", "Stream entries Redis acknowledged.", p.published, out);
  Scalar(family, "strata_redis_dropped_total", "counter",
         "Stream entries dropped because the buffer was full (Redis down).", p.dropped, out);
  Scalar(family, "strata_redis_buffered", "gauge", "Stream entries waiting to be sent.", p.buffered, out);
  Scalar(family, "strata_redis_connects_total", "counter", "Connections opened to Redis.", p.connects, out);
  Scalar(family, "strata_redis_failures_total", "counter", "Failed connects or sends (each starts a backoff).",
         p.failures, out);
  Scalar(family, "strata_redis_connected", "gauge", "1 while connected to Redis.", p.connected ? 1 : 0, out);
}

template <typename Family>
void ConsumerMetrics(const ConsumerCounters& c, Family family, std::string* out) {
  Scalar(family, "strata_serve_entries_total", "counter", "Stream entries read (new and re-claimed).", c.entries, out);
  Scalar(family, "strata_serve_acked_total", "counter", "Stream entries acknowledged to the consumer group.", c.acked,
         out);
  Scalar(family, "strata_serve_reclaimed_total", "counter",
         "Pending entries re-read after a restart or claimed from idle consumers.", c.reclaimed, out);
  Scalar(family, "strata_serve_malformed_total", "counter",
         "Stream entries that could not be decoded (acknowledged, skipped).", c.malformed, out);
  Scalar(family, "strata_serve_agent_findings_total", "counter",
         "Findings agents published to the streams (counted only).", c.agent_findings, out);
  Scalar(family, "strata_serve_window_requests_total", "counter", "Flight-recorder windows serve asked the agents for.",
         c.window_requests, out);
  Scalar(family, "strata_serve_window_findings_total", "counter", "Window-diagnosis findings agents sent back.",
         c.window_findings, out);
  Scalar(family, "strata_serve_leases_taken_total", "counter",
         "Job leases this serve took (a free job, or one whose owner stopped renewing).", c.leases_taken, out);
  Scalar(family, "strata_serve_leases_lost_total", "counter",
         "Job leases this serve lost (not renewed in time; another serve may own the job).", c.leases_lost, out);
  Scalar(family, "strata_serve_jobs_owned", "gauge", "Jobs whose lease this serve holds (the jobs it judges).",
         c.jobs_owned, out);
  Scalar(family, "strata_serve_replayed_total", "counter",
         "Stream entries read again from a taken job's resume point (its judged record).", c.replayed, out);
  Scalar(family, "strata_serve_skipped_replayed_total", "counter",
         "Entries the consumer group delivered that the replay had already taken in (acknowledged, skipped).",
         c.skipped_replayed, out);
  Scalar(family, "strata_serve_redis_failures_total", "counter",
         "Failed reads from Redis (each followed by a reconnect).", c.failures, out);
  Scalar(family, "strata_serve_redis_unreachable_total", "counter",
         "Redis commands skipped because their cluster node was down (its jobs waited, the others went on).",
         c.unreachable, out);
}

template <typename Family>
void OnlineMetrics(const AgentSnapshot& s, Family family, std::string* out) {
  family("strata_rank_step_seconds", "gauge", "Each rank's last step time (from its step summaries).");
  for (const JobState& job : s.jobs)
    if (job.online)
      for (const auto& [rank, sum] : job.online->last_summary)
        *out += fmt::format("strata_rank_step_seconds{{training_job=\"{}\",rank=\"{}\"}} {:.6f}\n", PromLabel(job.job),
                            rank, sum.step_s);
  family("strata_collective_wait_seconds", "gauge", "Each rank's time in collectives in its last step.");
  for (const JobState& job : s.jobs)
    if (job.online)
      for (const auto& [rank, sum] : job.online->last_summary)
        *out += fmt::format("strata_collective_wait_seconds{{training_job=\"{}\",rank=\"{}\"}} {:.6f}\n",
                            PromLabel(job.job), rank, sum.wait_s);
  family("strata_step_summaries_total", "counter", "Step summaries taken into the online detection, per job.");
  for (const JobState& job : s.jobs)
    if (job.online)
      *out += fmt::format("strata_step_summaries_total{{training_job=\"{}\"}} {}\n", PromLabel(job.job),
                          job.online->summaries);
  family("strata_online_onset_timestamp_seconds", "gauge",
         "When each open online detection's slowdown began (its onset step's start), by persistence "
         "(lasting, recurring, one_off).");
  for (const JobState& job : s.jobs)
    if (job.online)
      for (const online::Detection& d : job.online->open)
        if (d.onset_unix > 0)
          *out += fmt::format(
              "strata_online_onset_timestamp_seconds{{training_job=\"{}\",rank=\"{}\",persistence=\"{}\"}} {:.3f}\n",
              PromLabel(job.job), d.rank, online::PersistenceName(d.persistence), d.onset_unix);
  family("strata_online_score", "gauge",
         "Robust z of each open online detection's rank in its detecting step: against its peers (score=\"peer\") "
         "and against its own recent steps (score=\"self\"), each when it exists.");
  for (const JobState& job : s.jobs)
    if (job.online)
      for (const online::Detection& d : job.online->open) {
        if (d.peers > 0)
          *out += fmt::format("strata_online_score{{training_job=\"{}\",rank=\"{}\",score=\"peer\"}} {:.3f}\n",
                              PromLabel(job.job), d.rank, d.peer_z);
        if (d.self_history >= static_cast<int32_t>(diagnosis::thresholds::kOnlineSelfMinHistory))
          *out += fmt::format("strata_online_score{{training_job=\"{}\",rank=\"{}\",score=\"self\"}} {:.3f}\n",
                              PromLabel(job.job), d.rank, d.self_z);
      }
  family("strata_step_gaps_total", "counter", "(rank, step) summaries missing when their step was judged, per job.");
  for (const JobState& job : s.jobs)
    if (job.online)
      *out += fmt::format("strata_step_gaps_total{{training_job=\"{}\"}} {}\n", PromLabel(job.job), job.online->gaps);
}

// The communication path of each job's last live round (analysis/communication.h), per communicator and op:
// the median time in a call, its transfer and, when the calls' bytes are known, NCCL's bus bandwidth.
template <typename Family>
void CommunicationMetrics(const AgentSnapshot& s, Family& family, std::string* out) {
  const auto each = [&](auto emit) {
    for (const JobState& job : s.jobs)
      if (job.last)
        for (const CommunicationOp& op : job.last->communication.ops) emit(job, op);
  };
  const auto labels = [](const JobState& job, const CommunicationOp& op) {
    return fmt::format("training_job=\"{}\",communicator=\"{}\",op=\"{}\"", PromLabel(job.job), PromLabel(op.group),
                       PromLabel(op.op));
  };
  family("strata_collective_seconds", "gauge",
         "Median time a rank spends in one call of the collective (the last live round's window).");
  each([&](const JobState& job, const CommunicationOp& op) {
    *out += fmt::format("strata_collective_seconds{{{}}} {:.6f}\n", labels(job, op), op.time_ms / 1e3);
  });
  family("strata_collective_transfer_seconds", "gauge",
         "Median transfer time of one call: the fastest member's time in it (the rest is waiting for a late peer).");
  each([&](const JobState& job, const CommunicationOp& op) {
    if (op.split)
      *out += fmt::format("strata_collective_transfer_seconds{{{}}} {:.6f}\n", labels(job, op), op.transfer_ms / 1e3);
  });
  family("strata_collective_busbw_bytes", "gauge",
         "Bus bandwidth of the collective in bytes per second (NCCL's formula, from the calls' bytes and transfer).");
  each([&](const JobState& job, const CommunicationOp& op) {
    if (op.busbw_gbps >= 0)
      *out += fmt::format("strata_collective_busbw_bytes{{{}}} {:.0f}\n", labels(job, op), op.busbw_gbps * 1e9);
  });
}

// serve's memory across jobs: per node, its recent jobs, those that named one of its ranks, and the verdict.
template <typename Family>
void NodeMetrics(const std::vector<NodeRecord>& nodes, Family& family, std::string* out) {
  namespace th = diagnosis::thresholds;
  family("strata_node_recent_jobs", "gauge",
         "Jobs a node's ranks ran in, of its last few (serve's memory across jobs).");
  for (const NodeRecord& n : nodes)
    *out += fmt::format("strata_node_recent_jobs{{node=\"{}\"}} {}\n", PromLabel(n.host),
                        n.RecentJobs(th::kSuspectNodeRecentJobs).first);
  family("strata_node_named_jobs", "gauge", "Of those jobs, the ones in which one of the node's ranks was named.");
  for (const NodeRecord& n : nodes)
    *out += fmt::format("strata_node_named_jobs{{node=\"{}\"}} {}\n", PromLabel(n.host),
                        n.RecentJobs(th::kSuspectNodeRecentJobs).second);
  family("strata_node_suspect", "gauge", "1 when the node was named in most of its recent jobs: a suspect machine.");
  for (const NodeRecord& n : nodes)
    *out += fmt::format("strata_node_suspect{{node=\"{}\"}} {}\n", PromLabel(n.host), n.Suspect() ? 1 : 0);
}

}  // namespace

nlohmann::ordered_json NodesJson(const AgentSnapshot& s) {
  namespace th = diagnosis::thresholds;
  nlohmann::ordered_json j;
  j["schema"] = "strata.serve.nodes/1";
  j["now"] = RoundTo(s.now, 3);
  j["rule"] = fmt::format("suspect: named in at least {:.0f}% of its last {} jobs, with {} jobs or more",
                          100 * th::kSuspectNodeMinShare, th::kSuspectNodeRecentJobs, th::kSuspectNodeMinJobs);
  nlohmann::ordered_json nodes = nlohmann::ordered_json::array();
  for (const NodeRecord& n : s.nodes) {
    const auto [recent, named] = n.RecentJobs(th::kSuspectNodeRecentJobs);
    nlohmann::ordered_json o;
    o["node"] = n.host;
    o["recent_jobs"] = recent;
    o["named_jobs"] = named;
    o["suspect"] = n.Suspect();
    nlohmann::ordered_json jobs = nlohmann::ordered_json::array();
    for (auto it = n.jobs.rbegin(); it != n.jobs.rend(); ++it) {
      nlohmann::ordered_json named_ranks = nlohmann::ordered_json::array();
      for (const auto& [rank, cause] : it->named) named_ranks.push_back({{"rank", rank}, {"cause", cause}});
      jobs.push_back({{"job", it->job}, {"first_seen", RoundTo(it->first_seen, 3)}, {"named", named_ranks}});
    }
    o["jobs"] = std::move(jobs);  // newest first
    nodes.push_back(std::move(o));
  }
  j["nodes"] = std::move(nodes);
  return j;
}

std::string MetricsText(const AgentSnapshot& s) {
  std::string out;
  auto family = [&](const char* name, const char* type, const char* help) {
    out += fmt::format("# HELP {} {}\n# TYPE {} {}\n", name, help, name, type);
  };
  if (s.program == "agent") {
    family("strata_agent_rounds_total", "counter", "Analysis rounds the agent has run.");
    out += fmt::format("strata_agent_rounds_total {}\n", s.rounds);
    family("strata_agent_recorder_starts_total", "counter", "Flight-recorder chunks started (recorder processes).");
    out += fmt::format("strata_agent_recorder_starts_total {}\n", s.recorder_restarts);
  }
  if (s.publisher) PublisherMetrics(*s.publisher, family, &out);
  if (s.consumer) ConsumerMetrics(*s.consumer, family, &out);
  if (s.consumer) NodeMetrics(s.nodes, family, &out);
  family("strata_jobs", "gauge", "Training jobs the agent watches on this node.");
  out += fmt::format("strata_jobs {}\n", s.jobs.size());
  family("strata_ranks", "gauge", "Ranks of each job on this node.");
  for (const JobState& job : s.jobs)
    out += fmt::format("strata_ranks{{training_job=\"{}\"}} {}\n", PromLabel(job.job), RanksOf(job).size());
  family("strata_job_stalled", "gauge",
         "1 while the job is stalled: ranks wait in a collective some rank never entered (cause hang).");
  for (const JobState& job : s.jobs)
    out += fmt::format("strata_job_stalled{{training_job=\"{}\"}} {}\n", PromLabel(job.job), StallOf(job) ? 1 : 0);
  if (s.program == "agent") {
    family("strata_deep_tracing", "gauge",
           "1 while the job's flight recorder records at the deep rates (a window opened by a detection or by "
           "POST /api/v1/deep).");
    for (const JobState& job : s.jobs)
      out +=
          fmt::format("strata_deep_tracing{{training_job=\"{}\"}} {}\n", PromLabel(job.job), job.deep.active ? 1 : 0);
    family("strata_deep_windows_total", "counter", "Deep-tracing windows opened for the job.");
    for (const JobState& job : s.jobs)
      out += fmt::format("strata_deep_windows_total{{training_job=\"{}\"}} {}\n", PromLabel(job.job), job.deep.windows);
  }
  family("strata_stall_seconds", "gauge", "How long the job has been stalled (0 when it is not).");
  for (const JobState& job : s.jobs) {
    const diagnosis::StallEvidence* stall = StallOf(job);
    out += fmt::format("strata_stall_seconds{{training_job=\"{}\"}} {:.3f}\n", PromLabel(job.job),
                       stall ? stall->stalled_for_s : 0.0);
  }
  family("strata_step_seconds", "gauge", "Median step time over the analysis window.");
  for (const JobState& job : s.jobs)
    if (job.last && job.last->step_time_median_ms > 0)
      out += fmt::format("strata_step_seconds{{training_job=\"{}\"}} {:.6f}\n", PromLabel(job.job),
                         job.last->step_time_median_ms / 1e3);
  OnlineMetrics(s, family, &out);
  CommunicationMetrics(s, family, &out);
  family("strata_straggler", "gauge",
         "1 for each rank found a straggler, in the analysis window or online from the step summaries.");
  for (const JobState& job : s.jobs) {
    std::set<int32_t> ranks;
    if (job.last)
      for (const auto& st : job.last->stragglers) ranks.insert(st.rank.value());
    if (job.online)
      for (const online::Detection& d : job.online->open) ranks.insert(d.rank);
    for (int32_t rank : ranks)
      out += fmt::format("strata_straggler{{training_job=\"{}\",rank=\"{}\"}} 1\n", PromLabel(job.job), rank);
  }
  family("strata_straggler_late_seconds", "gauge", "How late each straggler arrives at collectives, per step.");
  for (const JobState& job : s.jobs)
    if (job.last)
      for (const auto& st : job.last->stragglers)
        out += fmt::format("strata_straggler_late_seconds{{training_job=\"{}\",rank=\"{}\"}} {:.6f}\n",
                           PromLabel(job.job), st.rank, st.late_ms_per_step / 1e3);
  family("strata_finding", "gauge", "Open findings: 1 per (rank, cause), with the share of step time fixing it saves.");
  for (const JobState& job : s.jobs)
    for (const OpenFinding& f : job.open)
      out += fmt::format("strata_finding{{training_job=\"{}\",rank=\"{}\",cause=\"{}\"}} 1\n", PromLabel(job.job),
                         f.finding.rank ? std::to_string(f.finding.rank->value()) : std::string(),
                         PromLabel(std::string(diagnosis::CauseName(f.finding.cause))));
  family("strata_finding_detected_timestamp_seconds", "gauge", "When each open finding was first detected.");
  for (const JobState& job : s.jobs)
    for (const OpenFinding& f : job.open)
      out += fmt::format(
          "strata_finding_detected_timestamp_seconds{{training_job=\"{}\",rank=\"{}\",cause=\"{}\"}} {:.3f}\n",
          PromLabel(job.job), f.finding.rank ? std::to_string(f.finding.rank->value()) : std::string(),
          PromLabel(std::string(diagnosis::CauseName(f.finding.cause))), f.detected_at);
  family("strata_analysis_duration_seconds", "gauge", "How long the last analysis round of each job took.");
  for (const JobState& job : s.jobs)
    out += fmt::format("strata_analysis_duration_seconds{{training_job=\"{}\"}} {:.6f}\n", PromLabel(job.job),
                       job.analysis_s);
  return out;
}

}  // namespace strata::agent
