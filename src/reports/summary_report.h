// Renders a JobSummary for people (aligned text) and for machines (JSON, schema "strata.summary/1").
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "analysis/job_summary.h"
#include "store/trace_store.h"

namespace strata {

nlohmann::ordered_json SummaryToJson(const TraceStore& store, const JobSummary& summary);
std::string SummaryToText(const TraceStore& store, const JobSummary& summary);

}  // namespace strata
