// JobSummary: what `strata summary` reports for each rank and the job: events by category, steps,
// time span, and HTA's analyses of the rank's GPU rows (absent for ranks without GPU events): the temporal
// and kernel breakdown, the idle-time breakdown, kernel launch statistics and queue length, all from the same
// HTA rows (hta_rows.h); for op tables, each rank's compute and communication time per step; the metrics compared
// across ranks and the outlier ranks (summary_metrics.h).
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "analysis/diagnosis/evidence.h"
#include "analysis/gpu_breakdown.h"
#include "analysis/idle_time.h"
#include "analysis/kernel_sequences.h"
#include "analysis/launch_stats.h"
#include "analysis/memory_bandwidth.h"
#include "analysis/queue_length.h"
#include "analysis/summary_metrics.h"
#include "model/step_windows.h"
#include "store/trace_store.h"

namespace strata {

struct RankSummary {
  uint32_t rank_index = 0;  // into TraceStore::ranks
  uint64_t events = 0;
  // ProfilerStep numbers, or the op table's step values; without either on any rank, the steps the diagnosis
  // detects from the collectives (step_source detected-period or detected-rhythm).
  std::vector<int64_t> steps;
  model::StepSource step_source = model::StepSource::kNone;
  bool has_span = false;
  int64_t span_start_ns = 0, span_end_ns = 0;
  std::optional<GpuBreakdown> gpu;
  // HTA's idle-time breakdown, launch statistics and queue length: set when `gpu` has device rows; `launches`
  // stays empty and `queues` empty when no device row has a runtime launch call.
  std::optional<IdleTimeBreakdown> idle;
  std::optional<LaunchStats> launches;
  std::vector<StreamQueueLength> queues;
  // HTA's memory bandwidth counters per kind of copy: set with `idle`; empty when no memory row has a bandwidth.
  std::vector<MemoryBandwidthKind> memory_bandwidth;
  // HTA's frequent kernel sequences of the operator the summary was asked about (empty when none was).
  std::vector<KernelSequence> sequences;
  // A recording's layers of the rank over its training window (cross_layer.h's MeasureRankLayers: run-queue,
  // GC and D-state shares, ...); absent without a recording of the rank.
  std::optional<diagnosis::RankLayerMetrics> recorded;
  // Op tables: the rank's compute op rows (forward/backward compute, optimizer, gc) per step, and the
  // communication rows per step; absent for traces.
  std::optional<double> op_compute_ms_per_step, op_comm_ms_per_step;
  // A trace without GPU rows: its compute per step outside collectives (step_compute.h).
  std::optional<double> cpu_compute_ms_per_step;
};

struct JobSummary {
  std::vector<RankSummary> ranks;  // in rank order
  uint64_t events = 0;
  std::vector<int64_t> steps;  // union over ranks
  bool include_last_step = false;
  std::string sequences_operator;  // the operator whose kernel sequences were looked for ("" none)
  // The ranks' compared metrics (as `ranks`), their spread over the job and the outlier ranks
  // (summary_metrics.h): what the report shows, computed once.
  std::vector<SummaryMetricValues> metrics;
  std::array<std::optional<SummaryMetricSpread>, kNumSummaryMetrics> spread;
  std::vector<SummaryOutlier> outliers;
};

/// Indices of each rank's slices, in store order: result[rank_index] = rows.
std::vector<SliceRows> SlicesByRank(const TraceStore& store);

/// `sequences.operator_name` empty: no kernel sequences are looked for.
JobSummary Summarize(const TraceStore& store, const BreakdownOptions& options,
                     const KernelSequenceOptions& sequences = {});

}  // namespace strata
