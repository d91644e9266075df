// StringPool: interns strings to dense 32-bit ids so tables store names as 4-byte columns. A StringId is a
// type of its own (as Perfetto's StringId), so a track or slice index, a count or a raw integer cannot be
// passed where a name is meant, nor a name used as an index without saying so (.value).
// Invariants: id 0 is the empty string; an id never changes once given; views returned by view() stay
// valid for the pool's lifetime (strings live in fixed-size arena blocks that are never moved).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string_view>
#include <vector>

namespace strata {

/// The id of an interned string: its index in the pool that interned it. Ordered and hashable (by value) so
/// it keys maps; default-constructed, the empty string.
struct StringId {
  uint32_t value = 0;
  constexpr StringId() = default;
  constexpr explicit StringId(uint32_t v) : value(v) {}
  friend constexpr auto operator<=>(StringId, StringId) = default;
};

class StringPool {
 public:
  static constexpr StringId kEmpty{0};

  StringPool();
  StringPool(StringPool&&) noexcept = default;
  StringPool& operator=(StringPool&&) noexcept = default;
  StringPool(const StringPool&) = delete;
  StringPool& operator=(const StringPool&) = delete;

  /// Returns the id of `s`, adding it if it is new.
  StringId intern(std::string_view s);
  /// Returns the id of `s` if present, else kEmpty for "" or UINT32_MAX when absent.
  StringId find(std::string_view s) const;
  std::string_view view(StringId id) const { return strings_[id.value]; }
  size_t size() const { return strings_.size(); }
  /// Bytes held (arena blocks, index and hash slots).
  size_t memory_bytes() const;

  static constexpr StringId kNotFound{UINT32_MAX};

 private:
  static uint64_t hash(std::string_view s);
  void grow();
  std::string_view store(std::string_view s);

  std::vector<std::string_view> strings_;  // by id
  std::vector<uint64_t> hashes_;           // by id, to rehash without recomputing
  std::vector<uint32_t> slots_;            // open addressing: id + 1, 0 = empty
  std::vector<std::unique_ptr<char[]>> blocks_;
  size_t block_used_ = 0;
  size_t block_size_ = 0;
  size_t arena_bytes_ = 0;
};

}  // namespace strata

template <>
struct std::hash<strata::StringId> {
  size_t operator()(strata::StringId id) const noexcept { return std::hash<uint32_t>()(id.value); }
};
