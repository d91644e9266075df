// Replayer: replays an OpGraph for every (step, dp rank) of a job at once, with given per-op costs and
// launch delays, and derives those costs and delays from a recorded trace (DESIGN.md, Diagnosis 7).
//
// Value layout (all arrays of per-op values): value[node * instances + instance], where
// instance = step_index * num_dp + dp_index. Times are nanoseconds (double) relative to the step's start.
//
// Replay rules: an op starts at the latest end of its dependencies plus its launch delay (an op without
// dependencies: the step's start, 0, plus its launch delay); a compute op ends `cost` after its start (its
// duration); a communication op ends at the latest start among its group (same step; same dp rank unless
// the group is dp_sync, then over all dp ranks of the step) plus `cost` (its transfer time). A step's time
// is its last end minus its first start over all nodes and dp ranks.
// Derivation from a recording: cost = end - start for compute and end - latest start in the group for
// communication (not clamped, so that the recorded timeline replays exactly); launch delay = start -
// latest dependency end (no dependencies: start - step start), clamped at 0 (negative values are jitter).
// Invariants: Run visits the graph's events in its topological order, so every input of an event is
// final when the event is computed; Run is const and thread-safe; replaying Derive()'s output of a
// recording whose launch delays are all >= 0 reproduces the recorded starts and ends.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

#include "analysis/whatif/op_graph.h"

namespace strata::whatif {

/// Replay inputs derived from a recording (layout above), with what had to be clamped.
struct RecordedInputs {
  std::vector<double> cost;           // compute: duration; communication: transfer time
  std::vector<double> delay;          // launch delay, >= 0
  size_t negative_delays = 0;         // launch delays that were < 0 before clamping
  double most_negative_delay = 0;     // the smallest of them (ns), 0 when none
  size_t negative_transfers = 0;      // communication ops that ended before the latest start of their group
  double most_negative_transfer = 0;  // the smallest such transfer time (ns), 0 when none
};

/// Holds a copy of the graph's replay plan (events, dependencies, groups) for a fixed number of steps and dp
/// ranks. Every span argument has values() entries.
class Replayer {
 public:
  Replayer(const OpGraph& graph, size_t num_steps, size_t num_dp);

  size_t num_nodes() const { return num_nodes_; }
  size_t num_steps() const { return num_steps_; }
  size_t num_dp() const { return num_dp_; }
  size_t instances() const { return num_steps_ * num_dp_; }
  size_t values() const { return num_nodes_ * instances(); }

  /// Replays with `cost` and `delay` (empty = every launch delay zero); returns each step's time (ns).
  /// `start` / `end`, when given, receive every op's replayed times (layout above).
  std::vector<double> Run(std::span<const double> cost, std::span<const double> delay,
                          std::vector<double>* start = nullptr, std::vector<double>* end = nullptr) const;

  /// Costs and launch delays of a recording (`start`, `end`: recorded times, layout above).
  RecordedInputs Derive(std::span<const double> start, std::span<const double> end) const;

 private:
  /// Latest start over a group's members for every instance (dp_sync: over all dp ranks of the step).
  void GroupLatestStart(uint32_t group, std::span<const double> start, double* out) const;

  size_t num_nodes_, num_steps_, num_dp_;
  std::vector<Event> order_;
  std::vector<uint32_t> dep_offsets_, deps_;
  std::vector<uint32_t> group_of_;
  std::vector<std::vector<uint32_t>> group_members_;
  std::vector<bool> group_dp_sync_;
};

}  // namespace strata::whatif
