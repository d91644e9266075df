// The self-contained HTML page of a diagnosis (see html_report.h).
#include "reports/html_report.h"

#include <string_view>

namespace strata {

namespace {

// The page template, embedded at build time from html_report_template.html (CMake writes this header).
#include "html_report_template.inc"

/// JSON text safe inside <script>: every '<' (only ever inside strings) becomes \u003c.
std::string ScriptSafe(const nlohmann::ordered_json& value) {
  const std::string text = value.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    if (c == '<') {
      out += "\\u003c";
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace

std::string RenderHtmlReport(const nlohmann::ordered_json& diagnosis, const nlohmann::ordered_json& view) {
  // Both markers are found in the template before anything is inserted (inserted text may contain them).
  constexpr std::string_view kDiagnosisMarker = "@STRATA_DIAGNOSIS_JSON@", kViewMarker = "@STRATA_VIEW_JSON@";
  const std::string_view page = kHtmlReportTemplate;
  const size_t d = page.find(kDiagnosisMarker), v = page.find(kViewMarker);
  if (d == std::string_view::npos || v == std::string_view::npos || d > v) return std::string(page);
  std::string out;
  out.append(page.substr(0, d));
  out += ScriptSafe(diagnosis);
  out.append(page.substr(d + kDiagnosisMarker.size(), v - d - kDiagnosisMarker.size()));
  out += ScriptSafe(view);
  out.append(page.substr(v + kViewMarker.size()));
  return out;
}

}  // namespace strata
