// Renders a JobSummary for people (aligned text) and for machines (JSON, schema "strata.summary/1").
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "analysis/job_summary.h"
#include "reports/text_format.h"
#include "store/trace_store.h"

namespace strata {

struct SummaryJsonOptions {
  // Each queue_length stream's and memory_bandwidth kind's points over time as "series": [[µs, value], ...]
  // (HTA's get_queue_length_time_series / get_memory_bw_time_series: one point per change, trace time).
  bool series = false;
};
nlohmann::ordered_json SummaryToJson(const TraceStore& store, const JobSummary& summary,
                                     const SummaryJsonOptions& options = {});
struct SummaryTextOptions {
  bool per_rank = false;             // every rank's row and detail block, however many ranks
  size_t width = kDefaultTextWidth;  // columns the skipped-event lines wrap to (at least kMinTextWidth)
};

/// Text: the job's min / median / max over ranks and its outlier ranks first (beyond 3.5 scaled MADs of the
/// median with three or more ranks; with two, the rank at least twice the other on a metric where more is
/// worse: docs/usage.md); every rank's row when there are at most 8 ranks, and each rank's detail block
/// (categories, GPU time by type, top kernels, idle time by cause, launches, queue length, a recording's
/// shares) with `per_rank` or a single rank. JSON has the same outliers as job.outliers.
std::string SummaryToText(const TraceStore& store, const JobSummary& summary, const SummaryTextOptions& options = {});

}  // namespace strata
