// The skip-reason table's lookups: a reason's output key, and the row an output key comes from.
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

std::string SkipKey(SkipId id, std::string_view detail) {
  const SkipReason& r = Reason(id);
  std::string key(r.key);
  if (r.has_detail) {
    key += '_';
    key += detail.empty() ? std::string_view("other") : detail;
  }
  return key;
}

const SkipReason* FindSkipReason(std::string_view key) {
  for (const SkipReason& r : kSkipReasons)
    if (!r.has_detail && r.key == key) return &r;
  // A key with a detail: the longest reason key that is a prefix followed by '_' and a non-empty detail.
  const SkipReason* best = nullptr;
  for (const SkipReason& r : kSkipReasons) {
    if (!r.has_detail || key.size() <= r.key.size() + 1 || key.substr(0, r.key.size()) != r.key ||
        key[r.key.size()] != '_')
      continue;
    if (!best || r.key.size() > best->key.size()) best = &r;
  }
  return best;
}

}  // namespace strata
