// What `strata agent` publishes: /api/v1/status (JSON: jobs, ranks, the last analysis, open findings with
// detected_at in Unix seconds, and the last diagnosis in the `strata diagnose` contract) and /metrics
// (Prometheus text exposition format, names and labels by Prometheus conventions: base units, _total for
// counters, one metric family per name with HELP and TYPE).
// Invariants: rendering reads the states only; label values are escaped as the format requires.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "agent/live_diagnosis.h"

namespace strata::agent {

struct AgentSnapshot {
  std::string host;
  double now = 0;  // Unix seconds
  std::vector<JobState> jobs;
  uint64_t rounds = 0, recorder_restarts = 0;
};

nlohmann::ordered_json StatusJson(const AgentSnapshot& s);
std::string MetricsText(const AgentSnapshot& s);

/// A Prometheus label value: backslash, double quote and newline escaped.
std::string PromLabel(const std::string& value);

}  // namespace strata::agent
