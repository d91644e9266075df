// What-if analysis of op-table jobs (DESIGN.md, Diagnosis 7; OSDI'25 "Understanding Stragglers in Large
// Model Training Using What-if Analysis"): how much faster would the job run without stragglers, and who
// is to blame.
//
// From the recorded trace: per op, compute durations, communication transfer times (end - latest start in
// its group) and launch delays (replay.h). Three replays of the dependency model (op_graph.h):
//  - recorded: recorded costs and launch delays (reproduces the recorded step times: the model check);
//  - no delay: recorded costs, launch delays zero;
//  - ideal: every compute op at the mean duration of its op type (over all ranks, stages and steps), every
//    communication op at the median transfer time of its op type, launch delays zero.
// S = mean step time (no delay) / mean step time (ideal); waste = 1 - 1/S.
// Attribution: starting from the ideal, restore one group of ops to its recorded costs (launch delays stay
// zero), replay, and report mean step (restored) / mean step (ideal): per dp rank (all its stages), per
// stage (all dp ranks), per op type, per artifact op group (p2p merged per direction) and per worker
// (dp rank, stage).
// Invariants: all ratios share the same ideal replay; attribution values are >= 1 up to the model's own
// interactions (restoring faster-than-mean ops can give < 1); the input store is not modified.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/diagnosis/contract_vocabulary.h"
#include "analysis/whatif/op_graph.h"
#include "core/status.h"
#include "store/trace_store.h"

namespace strata::whatif {

/// Effect of restoring one group of ops to its recorded costs, starting from the ideal.
struct Attribution {
  double ratio = 1.0;              // mean step time (restored) / mean step time (ideal)
  double excess_ms = 0.0;          // mean step time (restored) - mean step time (ideal), per step
  std::vector<double> step_ratio;  // per analysed step: restored / ideal step time of that step
};

/// Attribution of one worker: restore only that (dp rank, stage).
struct WorkerAttribution {
  int32_t dp_rank = 0;
  int32_t stage = 0;
  int32_t rank = -1;  // global rank of the recorded worker
  Attribution attribution;
};

/// Step times of one analysed step under each replay (ms).
struct StepTimes {
  int32_t step = 0;
  double recorded_ms = 0;  // last end - first start over all ranks, as recorded
  double replayed_ms = 0;  // replay with recorded costs and launch delays
  double no_delay_ms = 0;  // replay with recorded costs, no launch delay
  double ideal_ms = 0;     // replay of the ideal
};

/// Everything ComputeWhatIf finds; ratios are relative to the ideal replay, times are per-step means in ms.
struct WhatIfResult {
  double slowdown = 1.0;         // S
  double waste = 0.0;            // 1 - 1/S
  double launch_slowdown = 1.0;  // mean recorded step / mean no-delay step
  double recorded_step_ms = 0;   // means over the analysed steps
  double replayed_step_ms = 0;
  double no_delay_step_ms = 0;
  double ideal_step_ms = 0;
  double max_replay_error = 0;  // max over steps of |replayed - recorded| / recorded
  std::vector<StepTimes> steps;

  std::map<int32_t, Attribution> by_rank;  // keyed by dp rank
  std::map<int32_t, Attribution> by_stage;
  std::map<std::string, Attribution> by_op_type;
  std::map<std::string, Attribution> by_op_group;  // the artifact's grouping (forward-/backward-pp-comm)
  std::vector<WorkerAttribution> by_worker;        // every (dp rank, stage), dp rank major

  std::map<std::string, double> ideal_cost_ms;  // op type -> mean duration (compute) / median transfer (comm)

  // What the analysis ran on.
  int32_t num_dp = 0;
  int32_t num_stages = 0;
  int32_t num_chunks = 0;
  size_t ops_per_step = 0;  // modelled ops of one step over all workers
  size_t comm_groups = 0;   // per dp rank and step
  int32_t template_step = 0;
  std::vector<int32_t> skipped_steps;
  std::string skip_example;
  size_t imputed_ops = 0;              // missing ops filled from the other dp ranks (op_table_view.h)
  std::vector<int32_t> imputed_steps;  // steps that have such ops
  std::map<std::string, uint64_t> ignored_op_types;
  std::map<std::string, int64_t> ignored_op_ns;  // their summed duration, beside known_op_ns
  int64_t known_op_ns = 0;
  size_t negative_launch_delays = 0;  // clamped to 0
  double most_negative_launch_delay_ms = 0;
  size_t negative_transfers = 0;  // kept as recorded
  double most_negative_transfer_ms = 0;
};

/// What to compute, and how.
struct WhatIfOptions {
  OpGraphOptions graph;
  bool attribution = true;  // false: only S, the ideal and the step replays
  bool per_worker = true;   // also attribute to every (dp rank, stage)
  // Ideal compute at the median duration of its type instead of the mean. Off by default (DESIGN.md and the
  // artifact use the mean); kept to show how much the choice matters (ST: S 1.18 with the mean, 1.33 here).
  bool compute_median = false;
};

/// Runs the what-if analysis on an op-table job.
Expected<WhatIfResult> ComputeWhatIf(const TraceStore& store, const WhatIfOptions& options = {});

/// Replays the unmodified trace (recorded costs and launch delays) and returns each analysed step's
/// recorded and replayed time (no_delay_ms and ideal_ms are left 0).
Expected<std::vector<StepTimes>> ReplayRecordedSteps(const TraceStore& store, const OpGraphOptions& options = {});

/// What a what-if attribution restores: one worker (a dp rank's stage), a whole dp rank, a stage on every dp
/// rank, or one op type. Named once (kAttributionKindNames) for messages.
enum class AttributionKind : uint8_t { kWorker, kDpRank, kStage, kOpType };
inline constexpr std::array<std::string_view, 4> kAttributionKindNames = {"worker", "dp_rank", "stage", "op_type"};
inline std::string_view AttributionKindName(AttributionKind k) { return kAttributionKindNames[static_cast<size_t>(k)]; }
inline std::optional<AttributionKind> ParseAttributionKind(std::string_view name) {
  return diagnosis::ParseByName<AttributionKind>(kAttributionKindNames, name);
}
inline std::ostream& operator<<(std::ostream& os, AttributionKind k) { return os << AttributionKindName(k); }

/// One attribution, for ranking findings by the time they would save.
struct RankedAttribution {
  AttributionKind kind = AttributionKind::kWorker;
  std::string key;  // "dp1/stage0", "1", "3", "forward-compute"
  double ratio = 1.0;
  double excess_ms = 0.0;  // per step: what restoring this group alone costs over the ideal
};

/// Every worker, dp rank, stage and op type attribution, largest excess first.
std::vector<RankedAttribution> RankAttributions(const WhatIfResult& result);

}  // namespace strata::whatif
