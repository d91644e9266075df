// The differential profile against the peers' median (see peer_difference.h).
#include "analysis/diagnosis/peer_difference.h"

#include <algorithm>

#include "core/robust_stats.h"

namespace strata::diagnosis {

ProfileExcess ExcessOverPeers(const WindowProfile& own, const std::vector<const WindowProfile*>& peers) {
  auto excess = [&](double WindowProfile::*field) {
    std::vector<double> v;
    for (const WindowProfile* p : peers) v.push_back(p->*field);
    return (own.*field - (v.empty() ? 0.0 : Median(v))) / 1e6;
  };
  ProfileExcess e;
  e.compute_ms = excess(&WindowProfile::compute_ns);
  e.data_ms = excess(&WindowProfile::data_ns);
  e.host_gap_ms = excess(&WindowProfile::host_gap_ns);
  e.device_busy_ms = excess(&WindowProfile::device_busy_ns);
  e.device_idle_ms = excess(&WindowProfile::device_idle_ns);
  std::vector<double> busy;
  for (const WindowProfile* p : peers) busy.push_back(p->device_busy_ns);
  e.peer_device_busy_ms = busy.empty() ? 0.0 : Median(busy) / 1e6;
  std::map<StringId, double> names;  // every op any of them ran
  for (const auto& [name, ns] : own.op_ns) names[name];
  for (const WindowProfile* p : peers)
    for (const auto& [name, ns] : p->op_ns) names[name];
  for (const auto& [name, unused] : names) {
    std::vector<double> v;
    for (const WindowProfile* p : peers) {
      auto it = p->op_ns.find(name);
      v.push_back(it == p->op_ns.end() ? 0.0 : it->second);
    }
    auto it = own.op_ns.find(name);
    e.op_ms[name] = ((it == own.op_ns.end() ? 0.0 : it->second) - (v.empty() ? 0.0 : Median(v))) / 1e6;
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
