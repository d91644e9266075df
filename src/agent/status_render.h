// What `strata agent` publishes: /api/v1/status (JSON: jobs, ranks, the last analysis, open findings with
// detected_at in Unix seconds, and the last diagnosis in the `strata diagnose` contract) and /metrics
// (Prometheus text exposition format, names and labels by Prometheus conventions: base units, _total for
// counters, one metric family per name with HELP and TYPE).
// Both the agent and serve render through here (serve's jobs carry only the online view), so the two
// serve the same API; the Redis publisher's and consumer's counters are metrics when present.
// Invariants: rendering reads the states only; label values are escaped as the format requires.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "agent/live_diagnosis.h"
#include "agent/node_history.h"
#include "agent/stream_publisher.h"

namespace strata::agent {

/// What `strata serve` counts of its stream consumption.
struct ConsumerCounters {
  uint64_t entries = 0, acked = 0, reclaimed = 0, malformed = 0, polls = 0, failures = 0;
  uint64_t agent_findings = 0;                        // findings agents published (serve judges the whole job itself)
  uint64_t window_requests = 0, window_findings = 0;  // flight-recorder windows asked for, findings received
  // Leases (job_lease.h): jobs taken (free, or after another serve's lease expired), lost, owned now;
  // entries read again from a judged record's resume point, and entries the group delivered after that.
  uint64_t leases_taken = 0, leases_lost = 0, jobs_owned = 0, replayed = 0, skipped_replayed = 0;
  // Redis commands skipped because their cluster node was down (its jobs waited; the others went on).
  uint64_t unreachable = 0;
  std::string last_error;
};

struct AgentSnapshot {
  std::string program = "agent";  // "agent" or "serve": the metric prefix strata_<program>_*
  std::string host;
  double now = 0;  // Unix seconds
  std::vector<JobState> jobs;
  uint64_t rounds = 0, recorder_restarts = 0;
  std::optional<PublisherCounters> publisher;  // the agent with --redis
  std::optional<ConsumerCounters> consumer;    // serve
  std::vector<NodeRecord> nodes;               // serve: its memory across jobs (node_history.h)
};

nlohmann::ordered_json StatusJson(const AgentSnapshot& s);
std::string MetricsText(const AgentSnapshot& s);
/// serve's /api/v1/nodes (`strata.serve.nodes/1`): each node's recent jobs, how many named one of its ranks,
/// whether it is a suspect machine, and its jobs with the ranks named (node_history.h).
nlohmann::ordered_json NodesJson(const AgentSnapshot& s);

/// A Prometheus label value: backslash, double quote and newline escaped.
std::string PromLabel(const std::string& value);

}  // namespace strata::agent
