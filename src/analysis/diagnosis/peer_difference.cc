// The differential profile against the peers' median (see peer_difference.h).
#include "analysis/diagnosis/peer_difference.h"

#include <algorithm>

namespace strata::diagnosis {

ProfileExcess ExcessOverPeers(const WindowProfile& own, const std::vector<const WindowProfile*>& peers) {
  auto parts = [](const WindowProfile* p) {
    return std::array<double, 5>{p->compute_ns, p->data_ns, p->host_gap_ns, p->device_busy_ns, p->device_idle_ns};
  };
  const std::array<double, 5> mine = parts(&own), reference = PeerMedians<5>(peers, parts);
  ProfileExcess e;
  e.compute_ms = (mine[0] - reference[0]) / 1e6;
  e.data_ms = (mine[1] - reference[1]) / 1e6;
  e.host_gap_ms = (mine[2] - reference[2]) / 1e6;
  e.device_busy_ms = (mine[3] - reference[3]) / 1e6;
  e.device_idle_ms = (mine[4] - reference[4]) / 1e6;
  e.peer_device_busy_ms = reference[3] / 1e6;
  std::map<StringId, double> names;  // every op any of them ran
  for (const auto& [name, ns] : own.op_ns) names[name];
  for (const WindowProfile* p : peers)
    for (const auto& [name, ns] : p->op_ns) names[name];
  auto op_of = [](const WindowProfile& p, StringId name) {
    auto it = p.op_ns.find(name);
    return it == p.op_ns.end() ? 0.0 : it->second;
  };
  for (const auto& entry : names) {
    const StringId name = entry.first;
    e.op_ms[name] =
        (op_of(own, name) - PeerMedian(peers, [&](const WindowProfile* p) { return op_of(*p, name); })) / 1e6;
  }
  return e;
}

void ExcessMean::Add(const ProfileExcess& e) {
  sum_.compute_ms += e.compute_ms;
  sum_.data_ms += e.data_ms;
  sum_.host_gap_ms += e.host_gap_ms;
  sum_.device_busy_ms += e.device_busy_ms;
  sum_.device_idle_ms += e.device_idle_ms;
  sum_.peer_device_busy_ms += e.peer_device_busy_ms;
  for (const auto& [name, ms] : e.op_ms) sum_.op_ms[name] += ms;
  ++windows_;
}

ProfileExcess ExcessMean::Mean() const {
  if (windows_ == 0) return {};
  const double n = static_cast<double>(windows_);
  ProfileExcess m;
  m.compute_ms = sum_.compute_ms / n;
  m.data_ms = sum_.data_ms / n;
  m.host_gap_ms = sum_.host_gap_ms / n;
  m.device_busy_ms = sum_.device_busy_ms / n;
  m.device_idle_ms = sum_.device_idle_ms / n;
  m.peer_device_busy_ms = sum_.peer_device_busy_ms / n;
  for (const auto& [name, ms] : sum_.op_ms) m.op_ms[name] = ms / n;
  return m;
}

std::vector<std::pair<StringId, double>> ExcessMean::OpsLargestFirst() const {
  std::vector<std::pair<StringId, double>> out;
  if (windows_ == 0) return out;
  const double n = static_cast<double>(windows_);
  for (const auto& [name, ms] : sum_.op_ms)
    if (ms / n > 0) out.emplace_back(name, ms / n);
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  return out;
}

}  // namespace strata::diagnosis
