// The differential profile (KAIR's blame, SysOM-AI's layered comparison): what a rank did in a window minus
// the median of what its peers did in theirs, per part of the window (window_profile.h) and per op name.
// The one peer comparison of strata: PeerMedian(s) is its rule (the peers' median, part by part), and every
// path only chooses the windows and the peers — the data-parallel trace path (trace_diagnosis: a late step's
// window up to the late arrival, all other ranks), the grouped path (group_diagnosis: the pipeline stage's
// other ranks), the op-table path (op_table_diagnosis: a worker's compute per step, its stage's other dp
// ranks) through ExcessOverPeers, and the online detector (online_detector: one step's summary classes, the
// group's other ranks) and the cross-layer pass (cross_layer: a recorded layer metric, every other rank the
// recording measured) and what the reports draw (latest_arrival: a rank's arrival against the other ranks';
// timeline_facts and op_timeline_facts: the HTML timeline's late rank against the peers it is drawn beside)
// through PeerMedian(s) itself; no other file keeps a peer median of its own (issue 50).
// Invariant: a part or op absent from a profile counts 0 there, so every op any of them ran is compared.
#pragma once

#include <array>
#include <cstddef>
#include <map>
#include <utility>
#include <vector>

#include "analysis/diagnosis/window_profile.h"
#include "core/robust_stats.h"

namespace strata::diagnosis {

/// The peers' reference for one value: its median over `peers` (`value_of(peer)`; 0 without peers). A
/// rank's excess over its peers is its own value minus this. O(|peers|).
template <typename Peers, typename ValueOf>
double PeerMedian(const Peers& peers, ValueOf value_of) {
  std::vector<double> v;
  v.reserve(std::size(peers));
  for (const auto& p : peers) v.push_back(value_of(p));
  return Median(std::move(v));
}

/// The same for each of N parts (`parts_of(peer)` gives a peer's N parts). O(N · |peers|).
template <size_t N, typename Peers, typename PartsOf>
std::array<double, N> PeerMedians(const Peers& peers, PartsOf parts_of) {
  std::array<double, N> out{};
  for (size_t i = 0; i < N; ++i) out[i] = PeerMedian(peers, [&](const auto& p) { return parts_of(p)[i]; });
  return out;
}

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
