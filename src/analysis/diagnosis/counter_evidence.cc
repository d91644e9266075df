// Counter evidence for a finding's cause (see counter_evidence.h).
#include "analysis/diagnosis/counter_evidence.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <set>

#include "analysis/diagnosis/thresholds.h"
#include "core/robust_stats.h"

namespace strata::diagnosis {

namespace {

enum CounterKind { kSmClock = 0, kPcie = 1, kNic = 2, kKinds = 3, kOther = 4 };
constexpr const char* kKindName[] = {"sm_clock", "pcie_bytes", "nic_bytes"};

CounterKind KindOf(std::string_view name) {
  std::string s(name);
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  auto has = [&](const char* p) { return s.find(p) != std::string::npos; };
  if (has("sm_clock") || has("sm clock") || has("clocks.sm") || has("sm_clk")) return kSmClock;
  if (has("pcie")) return kPcie;
  if (has("nic") || has("rdma") || has("infiniband") || has("net_")) return kNic;
  return kOther;
}

// The rank's device slowdown against its peers, as a share of their time: its device-busy excess over the
// peers' window before arrival (trace path) or over their device-busy time (grouped path); 0 when unknown.
double DeviceSlowdown(const FindingEvidence& e) {
  if (const auto* t = std::get_if<TraceRankEvidence>(&e.kind); t && t->peer_window_ms > 0)
    return std::max(0.0, t->excess_ms.device_busy) / t->peer_window_ms;
  if (const auto* g = std::get_if<GroupRankEvidence>(&e.kind); g && g->excess_ms && g->peer_device_busy_ms > 0)
    return std::max(0.0, g->excess_ms->device_busy) / g->peer_device_busy_ms;
  return 0;
}

// Whether a rank whose SM clock averages `own` against its peers' `peers` is throttled: clearly below them,
// or below them by enough to account for its device slowdown (thresholds.h).
bool ClockThrottled(double own, double peers, const FindingEvidence& e) {
  if (own < thresholds::kSmClockThrottledShare * peers) return true;
  if (own <= 0 || own >= (1 - thresholds::kSmClockMinDeficit) * peers) return false;
  const double slowdown = DeviceSlowdown(e);
  return slowdown > 0 && peers / own - 1 >= thresholds::kSmClockExplainsShare * slowdown;
}

}  // namespace

void RefineWithCounterEvidence(const TraceStore& store, const model::StepModel& steps, DiagnosisResult* result) {
  if (store.counters.size() == 0) return;
  const size_t ranks = store.ranks.size();
  for (Finding& f : result->findings) {
    const std::vector<int64_t>* late_steps = LateSteps(f.evidence);
    if (!f.rank || !late_steps) continue;
    const bool compute = f.cause == Cause::kSlowCompute || f.cause == Cause::kUnknown;
    const bool comm = f.cause == Cause::kSlowCommunication || f.cause == Cause::kUnknown;
    if (!compute && !comm) continue;
    size_t target = ranks;
    for (size_t r = 0; r < ranks; ++r)
      if (store.ranks[r].rank == *f.rank) target = r;
    if (target == ranks) continue;
    const std::set<int64_t> late(late_steps->begin(), late_steps->end());
    // Mean of each counter kind per rank over that rank's windows of the late steps.
    std::vector<std::array<double, kKinds>> sum(ranks), count(ranks);
    for (size_t i = 0; i < store.counters.size(); ++i) {
      const Track& t = store.tracks[store.counters.track[i]];
      const CounterKind k = KindOf(store.strings.view(t.name));
      if (k == kOther || t.rank >= ranks) continue;
      const auto& windows = steps.by_rank[t.rank];
      const int w = model::FindWindow(windows, store.counters.ts_ns[i]);
      if (w < 0 || !late.count(windows[static_cast<size_t>(w)].step)) continue;
      sum[t.rank][k] += store.counters.value[i];
      count[t.rank][k] += 1;
    }
    std::vector<CounterComparison> evidence;
    // A rank's counter tracks come from its own input: a recording's GPU series, or a trace's counters.
    const char* source = store.inputs[store.ranks[target].input].recording() ? "recording" : "trace";
    std::array<double, kKinds> own{}, peers{};
    std::array<bool, kKinds> known{};
    for (int k = 0; k < kKinds; ++k) {
      if (count[target][k] == 0) continue;
      std::vector<double> v;
      for (size_t r = 0; r < ranks; ++r)
        if (r != target && count[r][k] > 0) v.push_back(sum[r][k] / count[r][k]);
      if (v.empty()) continue;
      own[k] = sum[target][k] / count[target][k];
      peers[k] = Median(v);
      known[k] = true;
      evidence.push_back({kKindName[k], own[k], peers[k], source});
    }
    if (evidence.empty()) continue;
    f.evidence.counters = std::move(evidence);
    std::optional<Cause> refined;
    std::string why;
    if (compute && known[kSmClock] && peers[kSmClock] > 0 &&
        ClockThrottled(own[kSmClock], peers[kSmClock], f.evidence)) {
      refined = Cause::kThermalThrottling;
      why = fmt::format("its SM clock averages {:.0f} MHz against {:.0f} MHz on its peers (throttled)", own[kSmClock],
                        peers[kSmClock]);
      f.layer = Layer::kGpu;
    } else if (compute && known[kPcie] && peers[kPcie] > 0 &&
               own[kPcie] > thresholds::kPcieBusyMultiple * peers[kPcie]) {
      refined = Cause::kPciePressure;
      why = fmt::format("its PCIe traffic is {:.1f}x its peers' (other traffic competes for the bus)",
                        own[kPcie] / peers[kPcie]);
      f.layer = Layer::kOs;
    } else if (comm && known[kNic] && peers[kNic] > 0 && own[kNic] > thresholds::kNicBusyMultiple * peers[kNic]) {
      refined = Cause::kNetworkContention;
      why = fmt::format("its NIC carries {:.1f}x its peers' traffic (foreign traffic shares the link)",
                        own[kNic] / peers[kNic]);
      f.layer = Layer::kComm;
    }
    if (!refined) continue;
    f.evidence.cause_before_counters = f.cause;
    f.cause = *refined;
    f.summary += "; " + why;
  }
}

}  // namespace strata::diagnosis
