// OpenCollectives: gloo's algorithms that have no return probe (probe_catalog.h, ProbePoint::returns), paired with
// c10d's completion on the same thread. An algorithm entered on a thread stays open until c10d finishes its work
// on that thread; it is then one call, from the algorithm's entry to the completion, under the algorithm's probe.
// An error finishes nothing: the algorithm stays open, never completed, as a rank that timed out waiting in it.
// Invariants: at most one open algorithm per thread (a new entry replaces it: the thread moved on without a
// completion the probes saw); a completion closes what is open on its thread only, once; a completion with
// nothing open is no call; threads are independent.
#pragma once

#include <cstdint>
#include <map>
#include <optional>

namespace strata::recorder {

class OpenCollectives {
 public:
  struct Open {
    uint32_t probe = 0;     // the algorithm's probe point
    uint64_t entry_ns = 0;  // when the thread entered it
  };

  /// Thread `tid` entered the algorithm of `probe` at `ts`.
  void Entered(uint32_t tid, uint32_t probe, uint64_t ts) { open_[tid] = {probe, ts}; }

  /// c10d finished its work on `tid`: the algorithm open there, now closed; nullopt when none was open.
  std::optional<Open> Completed(uint32_t tid) {
    auto it = open_.find(tid);
    if (it == open_.end()) return std::nullopt;
    const Open done = it->second;
    open_.erase(it);
    return done;
  }

 private:
  std::map<uint32_t, Open> open_;  // tid -> the algorithm it is in
};

}  // namespace strata::recorder
