// Skipped-event reasons rendered with their severity and description (see skip_report.h).
#include "reports/skip_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <vector>

#include "core/skip_reasons.h"
#include "reports/text_format.h"

namespace strata {
namespace {

struct Described {
  std::string_view severity;
  std::string_view description;
  int rank;  // 0 = most severe
};

Described Describe(const std::string& key) {
  const SkipReason* r = FindSkipReason(key);
  if (!r) return {SeverityName(SkipSeverity::kError), "", 0};
  const int rank = r->severity == SkipSeverity::kError ? 0 : r->severity == SkipSeverity::kDataLoss ? 1 : 2;
  return {SeverityName(r->severity), r->description, rank};
}

}  // namespace

nlohmann::ordered_json SkipReasonsJson(const ReasonCounts& counts) {
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  for (const auto& [key, n] : counts) {
    const Described d = Describe(key);
    j[key] = {{"severity", d.severity}, {"description", d.description}};
  }
  return j;
}

std::string SkipReasonLines(const ReasonCounts& counts, const std::string& indent, size_t width) {
  std::vector<std::pair<int, std::string>> lines;
  for (const auto& [key, n] : counts) {
    const Described d = Describe(key);
    std::string line = fmt::format("{} {} ({})", key, n, d.severity);
    if (!d.description.empty()) line += fmt::format(": {}", d.description);
    lines.emplace_back(d.rank, text::Wrap(line, width, indent, 4));
  }
  std::stable_sort(lines.begin(), lines.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::string out;
  for (const auto& [rank, line] : lines) out += line;
  return out;
}

}  // namespace strata
