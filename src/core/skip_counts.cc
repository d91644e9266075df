// SkipCounts: counting by reason, and listing the counts by their written key.
#include "core/skip_counts.h"

#include <algorithm>

namespace strata {
namespace {

/// The detail a reason with has_detail is counted under: "other" when none was given (as SkipKey writes it).
std::string DetailOrOther(std::string_view detail) { return detail.empty() ? "other" : std::string(detail); }

}  // namespace

void SkipCounts::Add(SkipId id, uint64_t n, std::string_view detail) {
  if (n == 0) return;
  if (Reason(id).has_detail)
    detailed_[{id, DetailOrOther(detail)}] += n;
  else
    plain_[static_cast<size_t>(id)] += n;
}

void SkipCounts::Merge(const SkipCounts& other) {
  for (size_t i = 0; i < plain_.size(); ++i) plain_[i] += other.plain_[i];
  for (const auto& [key, n] : other.detailed_) detailed_[key] += n;
}

uint64_t SkipCounts::Count(SkipId id) const {
  if (!Reason(id).has_detail) return plain_[static_cast<size_t>(id)];
  uint64_t n = 0;
  for (auto it = detailed_.lower_bound({id, std::string()}); it != detailed_.end() && it->first.first == id; ++it)
    n += it->second;
  return n;
}

uint64_t SkipCounts::Count(SkipId id, std::string_view detail) const {
  if (!Reason(id).has_detail) return plain_[static_cast<size_t>(id)];
  const auto it = detailed_.find({id, DetailOrOther(detail)});
  return it == detailed_.end() ? 0 : it->second;
}

uint64_t SkipCounts::Total() const {
  uint64_t n = 0;
  for (uint64_t v : plain_) n += v;
  for (const auto& [key, v] : detailed_) n += v;
  return n;
}

std::vector<SkipCounts::Entry> SkipCounts::Entries() const {
  std::vector<Entry> out;
  for (size_t i = 0; i < plain_.size(); ++i)
    if (plain_[i]) out.push_back({static_cast<SkipId>(i), SkipKey(static_cast<SkipId>(i)), plain_[i]});
  for (const auto& [key, n] : detailed_) out.push_back({key.first, SkipKey(key.first, key.second), n});
  std::sort(out.begin(), out.end(), [](const Entry& a, const Entry& b) { return a.key < b.key; });
  return out;
}

std::map<std::string, uint64_t> SkipCounts::ByKey() const {
  std::map<std::string, uint64_t> out;
  for (const Entry& e : Entries()) out[e.key] += e.n;
  return out;
}

}  // namespace strata
