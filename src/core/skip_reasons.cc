// The skip-reason table's lookups: the names of severities and scopes, and a reason's output key.
#include "core/skip_reasons.h"

namespace strata {

std::string_view SeverityName(SkipSeverity s) {
  switch (s) {
    case SkipSeverity::kInfo:
      return "info";
    case SkipSeverity::kDataLoss:
      return "data_loss";
    case SkipSeverity::kError:
      return "error";
  }
  return "error";
}

std::string_view ScopeName(SkipScope s) {
  switch (s) {
    case SkipScope::kEvent:
      return "event";
    case SkipScope::kInputMember:
      return "input_member";
    case SkipScope::kExportItem:
      return "export_item";
  }
  return "event";
}

std::string SkipKey(SkipId id, std::string_view detail) {
  const SkipReason& r = Reason(id);
  std::string key(r.key);
  if (r.has_detail) {
    key += '_';
    key += detail.empty() ? std::string_view("other") : detail;
  }
  return key;
}

}  // namespace strata
