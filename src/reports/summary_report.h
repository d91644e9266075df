// Renders a JobSummary for people (aligned text) and for machines (JSON, schema "strata.summary/1").
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "analysis/job_summary.h"
#include "reports/text_format.h"
#include "store/trace_store.h"

namespace strata {

nlohmann::ordered_json SummaryToJson(const TraceStore& store, const JobSummary& summary);
struct SummaryTextOptions {
  bool per_rank = false;             // every rank's row and detail block, however many ranks
  size_t width = kDefaultTextWidth;  // columns the skipped-event lines wrap to (at least kMinTextWidth)
};

/// Text: the job's min / median / max over ranks and its outlier ranks first; every rank's row when there
/// are at most 8 ranks, and each rank's detail block (categories, GPU time by type, top kernels) with
/// `per_rank` or a single rank.
std::string SummaryToText(const TraceStore& store, const JobSummary& summary, const SummaryTextOptions& options = {});

}  // namespace strata
