// How busy each rank was in each step, the per-rank figure the HTML report's heatmap draws and its timeline
// compares (analysis/diagnosis/report_facts.h), defined once:
//  - traces: the rank's step window minus its time in collective calls of that step (the time it was not
//    waiting for others), never below 0;
//  - op tables (rows with kSliceOpLayout, which have no collective calls of the trace kind): the sum of the
//    rank's compute op durations in the step (the op types whatif::IsCommunication says are not communication;
//    op types the what-if does not know are left out).
// Invariant: a matrix is ranks × the job's steps (model::StepModel::steps) with NaN where a rank lacks the step.
#pragma once

#include <optional>
#include <unordered_map>
#include <vector>

#include "analysis/whatif/op_graph.h"
#include "model/job_model.h"
#include "store/trace_store.h"

namespace strata {

/// The op type of every interned name of op-table rows (nullopt: not an op-table row, or a type the what-if
/// does not know), resolved once per name.
class OpTableTypes {
 public:
  explicit OpTableTypes(const TraceStore& store) : store_(store) {}
  std::optional<whatif::OpType> Of(uint32_t row);
  bool IsCompute(uint32_t row) {
    const auto t = Of(row);
    return t && !whatif::IsCommunication(*t);
  }

 private:
  const TraceStore& store_;
  std::unordered_map<StringId, std::optional<whatif::OpType>> cache_;
};

/// Per rank index and step index: the rank's time outside collective calls in the step, in ns (traces).
std::vector<std::vector<double>> BusyNsByStep(const model::JobModel& job, size_t ranks);

/// Per rank index and step index: the rank's compute time in ns (op tables); empty when the store has no
/// op-table rows of a known compute type.
std::vector<std::vector<double>> OpTableComputeNs(const TraceStore& store, const std::vector<SliceRows>& rows_by_rank,
                                                  const model::JobModel& job);

}  // namespace strata
