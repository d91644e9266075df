// Rendering of the agent's status and metrics (see status_render.h).
#include "agent/status_render.h"

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

nlohmann::ordered_json StatusJson(const AgentSnapshot& s) {
  nlohmann::ordered_json j;
  j["schema"] = "strata.agent.status/1";
  j["host"] = s.host;
  j["now"] = RoundTo(s.now, 3);
  nlohmann::ordered_json jobs = nlohmann::ordered_json::array();
  for (const JobState& job : s.jobs) {
    nlohmann::ordered_json o;
    o["job"] = job.job;
    std::set<int> ranks;
    for (const auto& [pid, rank] : job.rank_of_pid) ranks.insert(rank);
    o["ranks"] = ranks;
    o["pids"] = nlohmann::ordered_json::array();
    for (const auto& [pid, rank] : job.rank_of_pid) o["pids"].push_back({{"pid", pid}, {"rank", rank}});
    o["analysed_at"] = RoundTo(job.analysed_at, 3);
    o["analysis_s"] = RoundTo(job.analysis_s, 4);
    if (!job.error.empty()) o["error"] = job.error;
    if (job.last) {
      o["status"] = job.last->status;
      o["step_time_median_ms"] = RoundTo(job.last->step_time_median_ms, 3);
      o["last_step"] =
          job.last->steps.empty() ? nlohmann::ordered_json() : nlohmann::ordered_json(job.last->steps.back());
    }
    nlohmann::ordered_json findings = nlohmann::ordered_json::array();
    for (const OpenFinding& f : job.open) {
      findings.push_back({{"rank", f.finding.rank ? nlohmann::ordered_json(*f.finding.rank) : nlohmann::ordered_json()},
                          {"cause", f.finding.cause},
                          {"op", f.finding.op ? nlohmann::ordered_json(*f.finding.op) : nlohmann::ordered_json()},
                          {"impact_pct", f.finding.impact_pct},
                          {"confidence", f.finding.confidence},
                          {"detected_at", RoundTo(f.detected_at, 3)},
                          {"rounds", f.rounds},
                          {"summary", f.finding.summary}});
    }
    o["findings"] = findings;
    if (job.last) o["diagnosis"] = DiagnosisToJson(*job.last);
    jobs.push_back(std::move(o));
  }
  j["jobs"] = jobs;
  return j;
}

std::string MetricsText(const AgentSnapshot& s) {
  std::string out;
  auto family = [&](const char* name, const char* type, const char* help) {
    out += fmt::format("# HELP {} {}\n# TYPE {} {}\n", name, help, name, type);
  };
  family("strata_agent_rounds_total", "counter", "Analysis rounds the agent has run.");
  out += fmt::format("strata_agent_rounds_total {}\n", s.rounds);
  family("strata_agent_recorder_starts_total", "counter", "Flight-recorder chunks started (recorder processes).");
  out += fmt::format("strata_agent_recorder_starts_total {}\n", s.recorder_restarts);
  family("strata_jobs", "gauge", "Training jobs the agent watches on this node.");
  out += fmt::format("strata_jobs {}\n", s.jobs.size());
  family("strata_ranks", "gauge", "Ranks of each job on this node.");
  for (const JobState& job : s.jobs) {
    std::set<int> ranks;
    for (const auto& [pid, rank] : job.rank_of_pid) ranks.insert(rank);
    out += fmt::format("strata_ranks{{job=\"{}\"}} {}\n", PromLabel(job.job), ranks.size());
  }
  family("strata_step_seconds", "gauge", "Median step time over the analysis window.");
  for (const JobState& job : s.jobs)
    if (job.last && job.last->step_time_median_ms > 0)
      out += fmt::format("strata_step_seconds{{job=\"{}\"}} {:.6f}\n", PromLabel(job.job),
                         job.last->step_time_median_ms / 1e3);
  family("strata_straggler", "gauge", "1 for each rank found a straggler in the analysis window.");
  for (const JobState& job : s.jobs)
    if (job.last)
      for (const auto& st : job.last->stragglers)
        out += fmt::format("strata_straggler{{job=\"{}\",rank=\"{}\"}} 1\n", PromLabel(job.job), st.rank);
  family("strata_straggler_late_seconds", "gauge", "How late each straggler arrives at collectives, per step.");
  for (const JobState& job : s.jobs)
    if (job.last)
      for (const auto& st : job.last->stragglers)
        out += fmt::format("strata_straggler_late_seconds{{job=\"{}\",rank=\"{}\"}} {:.6f}\n", PromLabel(job.job),
                           st.rank, st.late_ms_per_step / 1e3);
  family("strata_finding", "gauge", "Open findings: 1 per (rank, cause), with the share of step time fixing it saves.");
  for (const JobState& job : s.jobs)
    for (const OpenFinding& f : job.open)
      out += fmt::format("strata_finding{{job=\"{}\",rank=\"{}\",cause=\"{}\"}} 1\n", PromLabel(job.job),
                         f.finding.rank ? std::to_string(*f.finding.rank) : std::string(), PromLabel(f.finding.cause));
  family("strata_finding_detected_timestamp_seconds", "gauge", "When each open finding was first detected.");
  for (const JobState& job : s.jobs)
    for (const OpenFinding& f : job.open)
      out += fmt::format("strata_finding_detected_timestamp_seconds{{job=\"{}\",rank=\"{}\",cause=\"{}\"}} {:.3f}\n",
                         PromLabel(job.job), f.finding.rank ? std::to_string(*f.finding.rank) : std::string(),
                         PromLabel(f.finding.cause), f.detected_at);
  family("strata_analysis_duration_seconds", "gauge", "How long the last analysis round of each job took.");
  for (const JobState& job : s.jobs)
    out += fmt::format("strata_analysis_duration_seconds{{job=\"{}\"}} {:.6f}\n", PromLabel(job.job), job.analysis_s);
  return out;
}

}  // namespace strata::agent
