// OpTableView: an op-table job (TraceStore rows with kSliceOpLayout) laid out for the what-if replay:
// the dependency model built from the template (the smallest step of the smallest dp rank) and every
// recorded op time as a dense (node, step, dp rank) array in the layout of replay.h.
// Ops of one (step, worker, op type) are numbered by their recorded seq_id, or by start time when the table
// has no seq_id column.
// The template is the first (step, dp rank) whose op counts per (stage, op type) are the most common ones
// (a complete step: a step with a row lost to bad input would make a wrong model). A step missing a few ops
// (at most kMaxImputedShare of its (node, dp rank) slots; rows skipped as bad input leave such holes) keeps
// its place: each missing op gets the median start and end of the same op on the other dp ranks of that
// step, and is counted in imputed_ops.
// Invariants: every analysed step has one op per (node, dp rank), recorded or imputed -- steps whose ops do
// not match the template one to one are left out and listed in skipped_steps; times are nanoseconds
// relative to the step's start, the earliest recorded start in that step over all ranks; each worker
// (dp rank, stage) is one recorded rank; rows of op types the model does not know are counted, not used.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "analysis/diagnosis/thresholds.h"
#include "analysis/whatif/op_graph.h"
#include "core/status.h"
#include "store/trace_store.h"

namespace strata::whatif {

/// A step may miss at most this share of its (node, dp rank) ops (and at least one) and still be analysed
/// (its value and reason are in analysis/diagnosis/thresholds.h).
using diagnosis::thresholds::kMaxImputedShare;

/// The laid-out job; see the file comment for its invariants.
struct OpTableView {
  OpGraph graph;
  std::vector<int32_t> steps;     // analysed steps, ascending
  std::vector<int32_t> dp_ranks;  // dp rank of each dp index, ascending
  int32_t num_stages = 0;
  std::vector<int32_t> worker_rank;      // [dp_index * num_stages + stage] -> global rank, -1 when absent
  std::vector<double> start, end;        // recorded times, [node * instances + step_index * num_dp + dp_index]
  std::vector<int64_t> step_start_ns;    // per analysed step: earliest recorded start (absolute)
  std::vector<double> recorded_step_ns;  // per analysed step: last end - first start over all ranks
  int32_t template_step = 0;
  int32_t template_dp_rank = 0;
  std::vector<int32_t> skipped_steps;                // steps whose ops do not match the template
  size_t imputed_ops = 0;                            // missing ops filled from the other dp ranks (see above)
  std::vector<int32_t> imputed_steps;                // steps that have such ops
  std::string skip_example;                          // why the first skipped step was left out
  std::map<std::string, uint64_t> ignored_op_types;  // op type name -> rows outside the model
  std::map<std::string, int64_t> ignored_op_ns;      // op type name -> their summed duration
  int64_t known_op_ns = 0;                           // summed duration of the rows in the model

  size_t num_dp() const { return dp_ranks.size(); }
  size_t instances() const { return steps.size() * dp_ranks.size(); }
  size_t DpIndex(int32_t dp) const;  // index of dp rank `dp` in dp_ranks (which is sorted)
};

/// Lays out the op-table rows of `store`. Errors: no op-table rows, two ranks at one (dp rank, stage),
/// a template the model cannot be built from, or no step matching the template.
Expected<OpTableView> BuildOpTableView(const TraceStore& store, const OpGraphOptions& options = {});

}  // namespace strata::whatif
