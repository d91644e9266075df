// Diagnosis of traces with profiler steps and collectives (see diagnose.h, first path).
#pragma once

#include <vector>

#include "analysis/diagnosis/diagnose.h"

namespace strata::diagnosis {

void DiagnoseTraces(const TraceStore& store, const std::vector<std::vector<uint32_t>>& rows_by_rank,
                    const DiagnoseOptions& options, DiagnosisResult* result);

}  // namespace strata::diagnosis
