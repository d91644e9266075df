// The evidence of stragglers and findings and the job's layout as JSON (DESIGN.md "Output contract"): the
// one place that names their keys, orders them and rounds their numbers for strata.diagnosis/1.
// Invariants: a kind's keys come in one fixed order, then the refinements in the order the passes add
// them (counters, cause_before_counters, cross_layer), then "from" (first for stragglers found from the
// recording alone); numbers are rounded as the contract's examples show (ms to 3 digits, ratios to 4,
// percentages to 2).
#pragma once

#include <nlohmann/json.hpp>

#include "analysis/diagnosis/result.h"

namespace strata {

nlohmann::ordered_json StragglerEvidenceJson(const diagnosis::StragglerEvidence& evidence);
nlohmann::ordered_json FindingEvidenceJson(const diagnosis::FindingEvidence& evidence);
nlohmann::ordered_json LayoutJson(const diagnosis::JobLayout& layout);
// A recording's layer metrics of one rank (percentages, rounded; nic_mb_per_s null without per-rank
// network namespaces, the link's fields null without its capacity).
nlohmann::ordered_json RankLayerMetricsJson(const diagnosis::RankLayerMetrics& m);

}  // namespace strata
