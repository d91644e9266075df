// Diagnosis of traces with profiler steps and collectives (see diagnose.h, first path).
#pragma once

#include <vector>

#include "analysis/diagnosis/diagnose.h"
#include "analysis/diagnosis/result.h"
#include "model/job_model.h"

namespace strata::diagnosis {

/// The trace path's product (PathResult, result.h): the job model described, then the data-parallel comparison, or
/// the grouped one (group_diagnosis.h) when collectives run in groups smaller than the job.
/// `job`: the run's model, built once by Diagnose from the same rows.
PathResult DiagnoseTraces(const TraceStore& store, const std::vector<SliceRows>& rows_by_rank,
                          const model::JobModel& job);

}  // namespace strata::diagnosis
