// RankIndex and RankNumber: the two meanings of "rank" kept apart by type (issue 50), as Perfetto keeps a
// thread's utid (its row in the trace processor's table) apart from its tid (what the OS called it).
//  - A rank index is a position in a job's list of ranks (TraceStore::ranks, the per-rank vectors of an
//    analysis): dense, 0 to the rank count − 1, meaningful only beside that list.
//  - A rank number is the rank the job gave a process (torch.distributed's rank): what every output names.
// They coincide when a job's inputs are ranks 0..n−1, which is how mixing them goes unnoticed.
// Invariants: neither converts implicitly to the other or to an integer (construction is explicit, .value()
// reads it); the way from an index to a number is the job's list of rank numbers (NumberOf).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
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

/// The rank number of index `i` in a job whose ranks, in index order, have the numbers `numbers`
/// (TraceStore::RankNumbers()). `i` must be an index of that list.
inline RankNumber NumberOf(RankIndex i, const std::vector<int32_t>& numbers) {
  return RankNumber(numbers.at(i.value()));
}

}  // namespace strata

namespace std {
template <class Tag, class T>
struct hash<strata::StrongRank<Tag, T>> {
  size_t operator()(strata::StrongRank<Tag, T> r) const noexcept { return hash<T>()(r.value()); }
};
}  // namespace std
