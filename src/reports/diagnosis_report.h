// Renders a DiagnosisResult: JSON per the strata.diagnosis/1 contract, and text a person can act on
// (the verdict first, then stragglers, findings with evidence and saving, then details).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "analysis/diagnosis/result.h"
#include "reports/text_format.h"

namespace strata {

nlohmann::ordered_json DiagnosisToJson(const diagnosis::DiagnosisResult& result);
/// The text report, wrapped to `width` columns (at least kMinTextWidth); a line is clipped only at a space,
/// so no number is cut in half.
std::string DiagnosisToText(const diagnosis::DiagnosisResult& result, size_t width = kDefaultTextWidth);
/// The one-line verdict that opens the text report.
std::string Verdict(const diagnosis::DiagnosisResult& result);

}  // namespace strata
