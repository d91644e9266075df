// SkipCounts: how many events an input (or the Perfetto export) skipped or repaired, by reason. An array
// indexed by SkipId holds the reasons without a detail; the few reasons that carry one (a phase letter, a
// member name, a kind of recorded event) are counted per (reason, detail). Outputs list the counts by the
// key they write (SkipKey), in key order, so JSON and text are stable whatever order events came in.
// Invariants: a reason with has_detail is counted only per detail (its array slot stays 0); no entry is 0
// (adding 0 changes nothing); Total() is the sum of every entry.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/skip_reasons.h"

namespace strata {

class SkipCounts {
 public:
  /// One non-zero count as outputs list it.
  struct Entry {
    SkipId id;
    std::string key;  // SkipKey(id, detail)
    uint64_t n;
  };

  /// Counts n events skipped (or repaired) for `id`; `detail` is used only by reasons with has_detail
  /// (empty: "other").
  void Add(SkipId id, uint64_t n = 1, std::string_view detail = {});
  /// Adds every count of `other`.
  void Merge(const SkipCounts& other);

  /// The events counted for `id`, every detail of it included.
  uint64_t Count(SkipId id) const;
  /// The events counted for `id` with this detail (a reason without a detail ignores it).
  uint64_t Count(SkipId id, std::string_view detail) const;
  uint64_t Total() const;
  bool Empty() const { return Total() == 0; }

  /// Every non-zero count, ordered by key.
  std::vector<Entry> Entries() const;
  /// Key -> count, ordered by key: the plain map the JSON contract's per-input "skipped" writes.
  std::map<std::string, uint64_t> ByKey() const;

  friend bool operator==(const SkipCounts&, const SkipCounts&) = default;

 private:
  std::array<uint64_t, static_cast<size_t>(SkipId::kCount)> plain_{};
  std::map<std::pair<SkipId, std::string>, uint64_t> detailed_;
};

}  // namespace strata
