// Ticker: a periodic deadline on the steady clock, for the recorder's loop (host counter and link samples).
// Invariants: Due() is true at most once per period; a tick taken late starts the next period from then (no
// burst of catching up); a rate of 0 is never due; MsUntilNext rounds up, so a loop that polls for that long
// wakes at or after the tick and never spins on a 0 ms poll while the tick is under a millisecond away.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>

namespace strata::recorder {

class Ticker {
 public:
  using Clock = std::chrono::steady_clock;
  Ticker(double hz, Clock::time_point start) : period_(hz > 0 ? static_cast<int64_t>(1e9 / hz) : 0), next_(start) {}
  bool Due(Clock::time_point now) {
    if (period_.count() <= 0 || now < next_) return false;
    next_ += period_;
    if (next_ < now) next_ = now + period_;
    return true;
  }
  /// Milliseconds from `now` to the next tick, rounded up, within 0..cap (cap when never due).
  int MsUntilNext(Clock::time_point now, int cap) const {
    if (period_.count() <= 0) return cap;
    const auto ms = std::chrono::ceil<std::chrono::milliseconds>(next_ - now).count();
    return static_cast<int>(std::clamp<int64_t>(ms, 0, cap));
  }

 private:
  std::chrono::nanoseconds period_;
  Clock::time_point next_;
};

}  // namespace strata::recorder
