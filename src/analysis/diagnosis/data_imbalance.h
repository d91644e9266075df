// The data_imbalance verdict of the trace paths (flat data-parallel jobs and process-group jobs): per-step
// load uneven across ranks, no single bad worker (DESIGN.md's cause vocabulary). Op tables have their own
// rule (op_table_diagnosis.cc: per-step compute loads are in the table).
// Invariants: reported only when no straggler was found, at least two ranks were late in turn, a late
// rank shows in at least half of the steps, and the loss is at least the minimum effect.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "analysis/diagnosis/result.h"
#include "analysis/diagnosis/straggler.h"

namespace strata::diagnosis {

/// Data imbalance's lateness pattern: at least two ranks late in turn, and a late rank in at least half of
/// the steps (two or more). A few late steps spread over ranks are what per-step jitter produces by itself
/// in a clean job, the more so the more ranks there are.
bool RanksLateInTurn(const StragglerAnalysis& analysis);

/// The finding when the rule holds: `rank_numbers` maps the analysis' rank indices to rank numbers;
/// `loss_share` is what balancing would save, as a share of step time.
std::optional<Finding> DataImbalanceFinding(const StragglerAnalysis& analysis, const std::vector<int32_t>& rank_numbers,
                                            double loss_share, const DiagnosisResult& so_far, double min_effect);

}  // namespace strata::diagnosis
