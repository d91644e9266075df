// The findings a diagnosis shows: --min-effect's filter (DiagnoseOptions::min_effect), in one place.
// Invariants: it only removes findings and counts them (DiagnosisResult::findings_hidden, with a note); it never
// removes the top finding (by impact_pct) about a straggler the result names, so a named straggler's cause is
// the same at any minimum effect; the findings kept keep their order.
#pragma once

#include "analysis/diagnosis/result.h"

namespace strata::diagnosis {

// Removes the findings that save less than `min_effect` (a share of step time) but each named straggler's own
// top finding, and says how many were removed.
void HideSmallFindings(double min_effect, DiagnosisResult* result);

}  // namespace strata::diagnosis
