// Skipped-event reasons rendered with their severity, scope and description (see skip_report.h).
#include "reports/skip_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <vector>

#include "core/skip_reasons.h"
#include "reports/text_format.h"

namespace strata {
namespace {

/// 0 for errors, 1 for data loss, 2 for info: the order lines are listed in.
int SeverityOrder(SkipSeverity s) { return s == SkipSeverity::kError ? 0 : s == SkipSeverity::kDataLoss ? 1 : 2; }

}  // namespace

nlohmann::ordered_json SkipReasonsJson(const SkipCounts& counts) {
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  for (const SkipCounts::Entry& e : counts.Entries()) {
    const SkipReason& r = Reason(e.id);
    j[e.key] = {{"severity", SeverityName(r.severity)}, {"scope", ScopeName(r.scope)}, {"description", r.description}};
  }
  return j;
}

std::string SkipReasonLines(const SkipCounts& counts, const std::string& indent, size_t width) {
  std::vector<std::pair<int, std::string>> lines;
  for (const SkipCounts::Entry& e : counts.Entries()) {
    const SkipReason& r = Reason(e.id);
    const std::string line = fmt::format("{} {} ({}): {}", e.key, e.n, SeverityName(r.severity), r.description);
    lines.emplace_back(SeverityOrder(r.severity), text::Wrap(line, width, indent, 4));
  }
  std::stable_sort(lines.begin(), lines.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::string out;
  for (const auto& [order, line] : lines) out += line;
  return out;
}

}  // namespace strata
