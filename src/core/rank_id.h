// RankIndex and RankNumber: the two meanings of "rank" kept apart by type (issue 50), as Perfetto keeps a
// thread's utid (its row in the trace processor's table) apart from its tid (what the OS called it).
//  - A rank index is a position in a job's list of ranks (TraceStore::ranks, the per-rank vectors of an
//    analysis): dense, 0 to the rank count − 1, meaningful only beside that list.
//  - A rank number is the rank the job gave a process (torch.distributed's rank): what every output names.
// They coincide when a job's inputs are ranks 0..n−1, which is how mixing them goes unnoticed.
// Invariants: neither converts implicitly to the other or to an integer (construction is explicit, .value()
// reads it); the way from an index to a number is the job's list of rank numbers (NumberOf). Both print as
// their value (fmt) and are written to JSON as it (to_json), so outputs need no conversion.
#pragma once

#include <fmt/format.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <iosfwd>
#include <vector>

namespace strata {

/// A value of type T that means one thing (Tag): compared and hashed as T, converted to nothing implicitly.
template <class Tag, class T>
class StrongRank {
 public:
  constexpr StrongRank() = default;
  constexpr explicit StrongRank(T value) : value_(value) {}
  constexpr T value() const { return value_; }
  friend constexpr bool operator==(StrongRank a, StrongRank b) { return a.value_ == b.value_; }
  friend constexpr bool operator!=(StrongRank a, StrongRank b) { return a.value_ != b.value_; }
  friend constexpr bool operator<(StrongRank a, StrongRank b) { return a.value_ < b.value_; }

 private:
  T value_{};
};

struct RankIndexTag {};
struct RankNumberTag {};

/// A position in a job's list of ranks (see above).
using RankIndex = StrongRank<RankIndexTag, size_t>;
/// The rank the job gave a process (see above); -1 is no rank.
using RankNumber = StrongRank<RankNumberTag, int32_t>;

/// Writes a rank as its value to a JSON value (nlohmann's to_json, found by argument-dependent lookup).
template <class Json, class Tag, class T>
void to_json(Json& j, StrongRank<Tag, T> r) {
  j = r.value();
}

/// Prints a rank as its value to a stream (test messages).
template <class Char, class Traits, class Tag, class T>
std::basic_ostream<Char, Traits>& operator<<(std::basic_ostream<Char, Traits>& os, StrongRank<Tag, T> r) {
  return os << r.value();
}

/// Rank numbers of plain integers, in order (a boundary with code that keeps them as int32_t).
inline std::vector<RankNumber> RankNumbers(const std::vector<int32_t>& values) {
  std::vector<RankNumber> out;
  out.reserve(values.size());
  for (const int32_t v : values) out.emplace_back(v);
  return out;
}

/// The rank number of index `i` in a job whose ranks, in index order, have the numbers `numbers`
/// (TraceStore::RankNumbers()). `i` must be an index of that list.
inline RankNumber NumberOf(RankIndex i, const std::vector<int32_t>& numbers) {
  return RankNumber(numbers.at(i.value()));
}

}  // namespace strata

/// Prints a rank as its value, with its value's format spec.
template <class Tag, class T>
struct fmt::formatter<strata::StrongRank<Tag, T>> : fmt::formatter<T> {
  template <class Context>
  auto format(strata::StrongRank<Tag, T> r, Context& ctx) const -> decltype(ctx.out()) {
    return fmt::formatter<T>::format(r.value(), ctx);
  }
};

namespace std {
template <class Tag, class T>
struct hash<strata::StrongRank<Tag, T>> {
  size_t operator()(strata::StrongRank<Tag, T> r) const noexcept { return hash<T>()(r.value()); }
};
}  // namespace std
