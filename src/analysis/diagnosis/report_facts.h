// MeasureDrawnFacts: the one step that measures what the reports draw beside a diagnosis (drawn_facts.h), run
// by Diagnose last, on its final findings, when DiagnoseOptions::drawn_facts asks for it (HTML, Perfetto):
// each named rank's latest arrivals (latest_arrival.h), the ranks' busy times (rank_step_busy.h) and stages,
// the HTML timeline (timeline_facts.h, op_timeline_facts.h) and the KS divergence (op_table_ks.h for op
// tables, trace_ks.h for traces), and the layers panel's peers' median (cross_layer.h, PeersMedianMetrics).
// Invariant: changes nothing of the result but what it returns; the reports compute none of it again.
#pragma once

#include <vector>

#include "analysis/diagnosis/result.h"
#include "model/job_model.h"
#include "store/trace_store.h"

namespace strata::diagnosis {

/// The facts of `result` (its findings, stragglers and clock offsets final) over the job's model.
DrawnFacts MeasureDrawnFacts(const TraceStore& store, const std::vector<SliceRows>& rows_by_rank,
                             const model::JobModel& job, const DiagnosisResult& result);

}  // namespace strata::diagnosis
