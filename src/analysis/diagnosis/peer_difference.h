// The differential profile (KAIR's blame, SysOM-AI's layered comparison): what a rank did in a window minus
// the median of what its peers did in theirs, per part of the window (window_profile.h) and per op name.
// The one peer comparison of the offline paths: the data-parallel trace path (trace_diagnosis) and the
// grouped path (group_diagnosis: pipeline stages, op tables) choose the windows and the peers, and compare
// with this. Invariant: an op absent from a profile counts 0 there, so every op any of them ran is compared.
#pragma once

#include <map>
#include <utility>
#include <vector>

#include "analysis/diagnosis/window_profile.h"

namespace strata::diagnosis {

/// One window: the rank's time minus its peers' median, in ms (negative: less than its peers).
struct ProfileExcess {
  double compute_ms = 0, data_ms = 0, host_gap_ms = 0, device_busy_ms = 0, device_idle_ms = 0;
  double peer_device_busy_ms = 0;    // the peers' median device-busy time (what device_busy exceeds)
  std::map<StringId, double> op_ms;  // per op name
};

/// `own` against `peers` (at least one; none: every excess is `own`'s time).
ProfileExcess ExcessOverPeers(const WindowProfile& own, const std::vector<const WindowProfile*>& peers);

/// The mean excess over several windows (a straggler's late steps).
class ExcessMean {
 public:
  void Add(const ProfileExcess& e);
  size_t windows() const { return windows_; }
  /// The mean per window of each part (0 without windows).
  ProfileExcess Mean() const;
  /// The ops whose mean excess is positive, largest first.
  std::vector<std::pair<StringId, double>> OpsLargestFirst() const;

 private:
  ProfileExcess sum_;
  size_t windows_ = 0;
};

}  // namespace strata::diagnosis
