// Diagnosis of traces with profiler steps and collectives (see diagnose.h, first path).
#pragma once

#include <vector>

#include "analysis/diagnosis/diagnose.h"
#include "model/job_model.h"

namespace strata::diagnosis {

/// `job`: the run's model, built once by Diagnose from the same rows.
void DiagnoseTraces(const TraceStore& store, const std::vector<SliceRows>& rows_by_rank, const model::JobModel& job,
                    const DiagnoseOptions& options, DiagnosisResult* result);

}  // namespace strata::diagnosis
