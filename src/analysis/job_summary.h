// JobSummary: what `strata summary` reports for each rank and the job: events by category, steps,
// time span, and the HTA-compatible GPU breakdown (absent for ranks without GPU events); for op tables, each
// rank's compute and communication time per step.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "analysis/gpu_breakdown.h"
#include "model/step_windows.h"
#include "store/trace_store.h"

namespace strata {

struct RankSummary {
  uint32_t rank_index = 0;  // into TraceStore::ranks
  uint64_t events = 0;
  std::vector<int64_t> steps;  // ProfilerStep numbers, or the op table's step values
  model::StepSource step_source = model::StepSource::kNone;
  bool has_span = false;
  int64_t span_start_ns = 0, span_end_ns = 0;
  std::optional<GpuBreakdown> gpu;
  // Op tables: the rank's compute op rows (forward/backward compute, optimizer, gc) per step, and the
  // communication rows per step; absent for traces.
  std::optional<double> op_compute_ms_per_step, op_comm_ms_per_step;
};

struct JobSummary {
  std::vector<RankSummary> ranks;  // in rank order
  uint64_t events = 0;
  std::vector<int64_t> steps;  // union over ranks
  bool include_last_step = false;
};

/// Indices of each rank's slices, in store order: result[rank_index] = rows.
std::vector<SliceRows> SlicesByRank(const TraceStore& store);

JobSummary Summarize(const TraceStore& store, const BreakdownOptions& options);

}  // namespace strata
