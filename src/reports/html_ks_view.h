// The HTML report's KAIR panel as the view carries it (html_view.h, "ks"): the KS divergence the diagnosis
// measured (DiagnosisResult::drawn.ks; op_table_ks.h, trace_ks.h, ks_divergence.h), with rank numbers for rank
// indices, a label per group and the words the legend says, and nothing computed here:
//   {"of": what was sampled, "peers": whom a score compares with, "pooled": some score is against the pool,
//    "labels": per group ("rank 5", or "r176–179" / "r176–177,184–185" for several ranks), "groups": the rank
//    numbers per group, "matrix": [group][group] KS distance, "score": per rank index, "lead": per group its
//    leading rank's number, "ranking": group indices, highest lead score first}.
// Distances and scores are rounded to 4 decimals. Invariant: the page draws the groups in this order and the
// legend names them by `ranking`; it sorts and scores nothing itself.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>

#include "analysis/diagnosis/drawn_facts.h"
#include "store/trace_store.h"

namespace strata {

/// The view of `ks` described above; null without one.
nlohmann::ordered_json KsView(const TraceStore& store, const std::optional<diagnosis::KsDivergence>& ks);

}  // namespace strata
