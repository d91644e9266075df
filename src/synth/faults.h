// Faults of the synthetic generator: which one, where (a rank, a pipeline stage or the whole job), in
// which ProfilerSteps, and how strong (magnitude = extra time as a fraction of a clean step). The names
// are the cause vocabulary of DESIGN.md ("none" = clean), and they are what truth.json records.
// Invariants of a resolved FaultPlan: rank-level faults have 0 <= rank < world and stage = the rank's
// stage; stage_imbalance has 0 <= stage < pp and rank = -1; data_imbalance has rank = stage = -1;
// steps is sorted and holds only ProfilerStep numbers of the job.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "synth/layout.h"

namespace strata::synth {

enum class Fault {
  kNone,
  kSlowCompute,
  kThermalThrottling,
  kSlowCommunication,
  kNetworkContention,
  kPciePressure,
  kLaunchOverhead,
  kDataloaderStall,
  kGcPause,
  kStageImbalance,
  kDataImbalance,
};

/// The cause-vocabulary name of a fault ("none" for kNone).
const char* FaultName(Fault f);
/// All fault names, comma-separated (for help and error messages).
std::string FaultNames();
/// Parses a fault name; false when unknown.
bool ParseFault(const std::string& name, Fault* out);

/// What the user asked for; -1 / empty = not given.
struct FaultRequest {
  std::string name = "none";
  int64_t rank = -1;
  int64_t stage = -1;
  std::string steps;  // comma-separated ProfilerStep numbers
  int64_t every = 0;  // every K-th step (ProfilerStep numbers divisible by K)
  double magnitude = 0.2;
};

struct FaultPlan {
  Fault kind = Fault::kNone;
  int64_t rank = -1;
  int64_t stage = -1;
  std::vector<int64_t> steps;  // affected ProfilerStep numbers
  double magnitude = 0;

  bool ActiveIn(int64_t step) const;
  /// Whether the fault changes rank `rank` (with coordinates `c`) in `step`.
  bool Hits(int64_t rank, const Coord& c, int64_t step) const;
  /// Ranks the fault acts on directly (truth.json "ranks"): the rank, the stage's ranks, none for
  /// data_imbalance (no single bad worker) and clean runs.
  std::vector<int64_t> Ranks(const Layout& layout) const;
};

/// Validates a request against the job; an error names the argument; on success `plan` is filled.
/// `first_step`..`first_step + steps - 1` are the job's ProfilerStep numbers. A rank-level fault without
/// --fault-rank gets a rank drawn from the seed; stage_imbalance without --fault-stage the last stage.
Status ResolveFault(const FaultRequest& req, const Layout& layout, int64_t first_step, int64_t steps, uint64_t seed,
                    FaultPlan* plan);

}  // namespace strata::synth
