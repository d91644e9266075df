// The one rule for which process of a rank is its main one (the process that runs the training loop, as
// against its DataLoader workers or helpers): the most collective calls (the loop makes them), then the most
// probed calls of any kind, then the first seen, then the lowest pid. The recording-as-trace importer takes the
// rank's main thread from it, the layers' decoder the rank's network namespace.
#pragma once

#include <cstdint>
#include <map>

#include "store/recorded_run.h"

namespace strata {

class MainProcessRule {
 public:
  /// Counts each process's calls of `seg` once. O(calls).
  explicit MainProcessRule(const RecordedSegment& seg);
  /// Whether process `a` is likelier a rank's main process than `b` (a strict order over the segment's pids).
  bool Better(uint32_t a, uint32_t b) const;

 private:
  const RecordedSegment& seg_;
  std::map<uint32_t, size_t> collective_calls_, calls_;
};

}  // namespace strata
