// Counter evidence for a finding's cause (see counter_evidence.h).
#include "analysis/diagnosis/counter_evidence.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <set>

#include "analysis/diagnosis/cause_choice.h"
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

}  // namespace

std::vector<CounterRefinement> JudgeWithCounters(const TraceStore& store, const model::StepModel& steps,
                                                 const std::vector<Finding>& findings) {
  std::vector<CounterRefinement> out;
  if (store.counters.size() == 0) return out;
  const size_t ranks = store.ranks.size();
  for (size_t fi = 0; fi < findings.size(); ++fi) {
    const Finding& f = findings[fi];
    const std::vector<int64_t>* late_steps = LateSteps(f.evidence);
    if (!f.rank || !late_steps) continue;
    if (!CountersMayRefine(f.cause)) continue;
    size_t target = ranks;
    for (size_t r = 0; r < ranks; ++r)
      if (store.ranks[r].rank == f.rank->value()) target = r;
    if (target == ranks) continue;
    const std::set<int64_t> late(late_steps->begin(), late_steps->end());
    // Mean of each counter kind per rank over that rank's windows of the late steps.
    std::vector<std::array<double, kKinds>> sum(ranks), count(ranks);
    for (size_t i = 0; i < store.counters.size(); ++i) {
      const Track& t = store.track(store.counters.track[i]);
      const CounterKind k = KindOf(store.strings.view(t.name));
      if (k == kOther || t.rank >= ranks) continue;
      const auto& windows = steps.by_rank[t.rank];
      const int w = model::FindWindow(windows, store.counters.ts_ns[i]);
      if (w < 0 || !late.count(windows[static_cast<size_t>(w)].step)) continue;
      sum[t.rank][k] += store.counters.value[i];
      count[t.rank][k] += 1;
    }
    CounterRefinement refinement{.finding = fi};
    // A rank's counter tracks come from its own input: a recording's GPU series, or a trace's counters.
    const char* source = store.inputs[store.ranks[target].input].recording() ? "recording" : "trace";
    CounterEvidence named{.named = f.cause, .confidence = f.confidence, .device_slowdown = DeviceSlowdown(f.evidence)};
    std::optional<CounterMeans>* means[kKinds] = {&named.sm_clock_mhz, &named.pcie_bytes, &named.nic_bytes};
    for (int k = 0; k < kKinds; ++k) {
      if (count[target][k] == 0) continue;
      std::vector<double> v;
      for (size_t r = 0; r < ranks; ++r)
        if (r != target && count[r][k] > 0) v.push_back(sum[r][k] / count[r][k]);
      if (v.empty()) continue;
      *means[k] = CounterMeans{sum[target][k] / count[target][k], Median(v)};
      refinement.counters.push_back({kKindName[k], (*means[k])->own, (*means[k])->peers, source});
    }
    if (refinement.counters.empty()) continue;
    refinement.choice = NameCause(named);
    out.push_back(std::move(refinement));
  }
  return out;
}

void ApplyCounterJudgement(std::vector<CounterRefinement> refinements, std::vector<Finding>* findings) {
  for (CounterRefinement& r : refinements) {
    Finding& f = (*findings)[r.finding];
    f.evidence.counters = std::move(r.counters);
    if (!r.choice.names) continue;
    f.evidence.cause_before_counters = f.cause;
    SetCause(r.choice, &f);
    f.summary += "; " + r.choice.why;
  }
}

}  // namespace strata::diagnosis
