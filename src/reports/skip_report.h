// Skipped and repaired event counts as every output shows them: each reason with its severity and
// description from the one table (core/skip_reasons.h). Pure functions; a key not in the table (never
// written by strata's importers) is shown as an error with no description rather than dropped.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include <nlohmann/json.hpp>

namespace strata {

using ReasonCounts = std::map<std::string, uint64_t>;  // output key -> events

/// {"<key>": {"severity": "error", "description": "..."}} for every key of `counts`: the glossary a JSON
/// output writes beside its per-input count maps (which stay plain key -> count).
nlohmann::ordered_json SkipReasonsJson(const ReasonCounts& counts);

/// One line per reason, most severe first, each "<indent><key> <count> (<severity>): <description>",
/// wrapped to `width` columns. Empty for no counts.
std::string SkipReasonLines(const ReasonCounts& counts, const std::string& indent, size_t width);

}  // namespace strata
