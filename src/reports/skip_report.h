// Skipped and repaired event counts as every output shows them: each reason with its severity, scope and
// description from the one table (core/skip_reasons.h). Pure functions.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "core/skip_counts.h"

namespace strata {

/// {"<key>": {"severity": "error", "scope": "event", "description": "..."}} for every key of `counts`: the
/// glossary a JSON output writes beside its per-input count maps (which stay plain key -> count).
nlohmann::ordered_json SkipReasonsJson(const SkipCounts& counts);

/// One line per reason, most severe first, each "<indent><key> <count> (<severity>): <description>",
/// wrapped to `width` columns. Empty for no counts.
std::string SkipReasonLines(const SkipCounts& counts, const std::string& indent, size_t width);

}  // namespace strata
