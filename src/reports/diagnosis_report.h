// Renders a DiagnosisResult: JSON per the strata.diagnosis/1 contract, and text a person can act on
// (the verdict first, then stragglers, findings with evidence and saving, then details).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "analysis/diagnosis/result.h"

namespace strata {

nlohmann::ordered_json DiagnosisToJson(const diagnosis::DiagnosisResult& result);
std::string DiagnosisToText(const diagnosis::DiagnosisResult& result);
/// The one-line verdict that opens the text report.
std::string Verdict(const diagnosis::DiagnosisResult& result);

}  // namespace strata
