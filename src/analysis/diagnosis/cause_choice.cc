// Naming a finding's cause (see cause_choice.h).
#include "analysis/diagnosis/cause_choice.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "analysis/diagnosis/result.h"
#include "core/round.h"

namespace strata::diagnosis {

double ExplainedShare(double explained_ms, double effect_ms) {
  if (!(effect_ms > 0) || !std::isfinite(explained_ms)) return 0.0;
  return std::clamp(explained_ms / effect_ms, 0.0, 1.0);
}

std::vector<CauseCandidate> ProfileCandidates(const ProfileExcess& e, bool gpu, bool ops_observed,
                                              double device_idle_ms) {
  std::vector<CauseCandidate> out = {{Cause::kDataloaderStall, Layer::kData, e.data_ms}};
  if (ops_observed) out.push_back({Cause::kHostStall, Layer::kHost, e.host_gap_ms});
  if (gpu) {
    out.push_back({Cause::kSlowCompute, Layer::kGpu, e.device_busy_ms});
    // Device idle while the host thread is busy computing/launching: the host cannot feed the device.
    out.push_back({Cause::kLaunchOverhead, Layer::kHost, std::min(device_idle_ms, e.compute_ms)});
  } else {
    out.push_back({Cause::kSlowCompute, Layer::kCpu, e.compute_ms});
  }
  return out;
}

CauseChoice ChooseCause(const std::vector<CauseCandidate>& candidates, double lateness_ms) {
  CauseChoice out;
  out.names = true;
  out.cause = Cause::kUnknown;
  if (candidates.empty()) return out;
  const auto best =
      std::max_element(candidates.begin(), candidates.end(),
                       [](const CauseCandidate& a, const CauseCandidate& b) { return a.excess_ms < b.excess_ms; });
  out.excess = best->excess_ms;
  out.explained = ExplainedShare(best->excess_ms, lateness_ms);
  if (best->excess_ms <= 0 || out.explained < kMinExplainedShare) return out;
  out.cause = best->cause;
  out.layer = best->layer;
  out.confidence = out.explained;
  return out;
}

CauseChoice NameCause(const ProfileEvidence& e) { return ChooseCause(e.candidates, e.lateness_ms); }

namespace {

CauseChoice Refined(Cause cause, Layer layer, double confidence, std::string why) {
  CauseChoice out;
  out.names = true;
  out.cause = cause;
  out.layer = layer;
  out.confidence = confidence;
  out.explained = confidence;
  out.why = std::move(why);
  return out;
}

// Whether an SM clock of `c.own` against the peers' `c.peers` is throttled: clearly below them, or below them by
// enough to account for the rank's device slowdown (thresholds.h).
bool ClockThrottled(const CounterMeans& c, double device_slowdown) {
  if (c.peers <= 0) return false;
  if (c.own < thresholds::kSmClockThrottledShare * c.peers) return true;
  if (c.own <= 0 || c.own >= (1 - thresholds::kSmClockMinDeficit) * c.peers) return false;
  return device_slowdown > 0 && c.peers / c.own - 1 >= thresholds::kSmClockExplainsShare * device_slowdown;
}

bool Above(const std::optional<CounterMeans>& c, double multiple) {
  return c && c->peers > 0 && c->own > multiple * c->peers;
}

}  // namespace

bool CountersMayRefine(Cause named) {
  return named == Cause::kSlowCompute || named == Cause::kSlowCommunication || named == Cause::kUnknown;
}

CauseChoice NameCause(const CounterEvidence& e) {
  const bool compute = e.named == Cause::kSlowCompute || e.named == Cause::kUnknown;
  const bool comm = e.named == Cause::kSlowCommunication || e.named == Cause::kUnknown;
  if (compute && e.sm_clock_mhz && ClockThrottled(*e.sm_clock_mhz, e.device_slowdown))
    return Refined(Cause::kThermalThrottling, Layer::kGpu, e.confidence,
                   fmt::format("its SM clock averages {:.0f} MHz against {:.0f} MHz on its peers (throttled)",
                               e.sm_clock_mhz->own, e.sm_clock_mhz->peers));
  if (compute && Above(e.pcie_bytes, thresholds::kPcieBusyMultiple))
    return Refined(Cause::kPciePressure, Layer::kOs, e.confidence,
                   fmt::format("its PCIe traffic is {:.1f}x its peers' (other traffic competes for the bus)",
                               e.pcie_bytes->own / e.pcie_bytes->peers));
  if (comm && e.nic_bytes)
    return NameCause(TrafficEvidence{TrafficSource::kCounterTrack, {*e.nic_bytes}, e.confidence, 1});
  return CauseChoice{};  // names nothing
}

bool LinkCarriesForeignTraffic(TrafficSource source, const LinkLoad& link) {
  const CounterMeans& bytes_per_s = link.bytes_per_s;
  if (source == TrafficSource::kCounterTrack) {
    const double bar = thresholds::kNicBusyMultiple * bytes_per_s.peers;
    return bar > 0 && bytes_per_s.own >= bar;
  }
  const double floor = link.capacity_bps > 0 ? thresholds::kMinRecordedExcess * link.capacity_bps / 8
                                             : thresholds::kMinForeignTrafficBytesPerS;
  return bytes_per_s.own >= thresholds::kForeignTrafficBytesMultiple * bytes_per_s.peers + floor;
}

CauseChoice NameCause(const TrafficEvidence& e) {
  CauseChoice out;
  out.names = LinkCarriesForeignTraffic(e.source, e.link);
  if (!out.names) return out;
  out.cause = Cause::kNetworkContention;
  out.layer = Layer::kComm;
  out.excess = e.explained;
  out.explained = ExplainedShare(e.explained, e.effect);
  out.confidence = out.explained;
  const CounterMeans& b = e.link.bytes_per_s;
  out.why =
      e.source == TrafficSource::kCounterTrack
          ? fmt::format("its NIC carries {:.1f}x its peers' traffic (foreign traffic shares the link)", b.own / b.peers)
          : fmt::format(
                "its network interfaces moved {:.1f} MB/s against {:.1f} MB/s on its peers' for the "
                "same collectives: other traffic shares its link",
                b.own / 1e6, b.peers / 1e6);
  return out;
}

CauseChoice NameCause(const RecordingEvidence& e) {
  CauseChoice out;
  if (e.candidates.empty()) return out;
  auto best =
      std::max_element(e.candidates.begin(), e.candidates.end(),
                       [](const RecordedCandidate& a, const RecordedCandidate& b) { return a.excess < b.excess; });
  const bool positive = e.late_share > 0;
  if (positive && e.candidates.front().excess >= kMinExplainedShare * e.late_share) best = e.candidates.begin();
  RecordedCandidate chosen = *best;
  if (e.link && positive)
    if (CauseChoice traffic = NameCause(TrafficEvidence{TrafficSource::kRecording, *e.link, 1, 1}); traffic.names)
      chosen = RecordedCandidate{traffic.cause, traffic.layer, e.late_share, std::move(traffic.why)};
  out.cause = chosen.cause;
  out.layer = chosen.layer;
  out.excess = chosen.excess;
  out.explained = ExplainedShare(chosen.excess, e.late_share);
  out.confidence = out.explained;
  out.why = std::move(chosen.what);
  // A recording replaces what the traces could only guess at (or names what they did not see), when it
  // explains enough of the lateness.
  static const std::set<Cause> kTraceLevelGuesses = {Cause::kSlowCompute, Cause::kHostStall, Cause::kUnknown,
                                                     Cause::kLaunchOverhead};
  const bool explains = positive && chosen.excess >= kMinExplainedShare * e.late_share;
  out.names = explains && (!e.named || kTraceLevelGuesses.count(*e.named));
  return out;
}

CauseChoice NameSecondCause(const RecordingEvidence& e, std::optional<Cause> first) {
  CauseChoice out;
  if (!first || !(e.late_share > 0)) return out;
  const RecordedCandidate* best = nullptr;
  for (const RecordedCandidate& c : e.candidates) {
    if (c.cause == *first) continue;
    if (c.cause == Cause::kCpuContention && *first == Cause::kCpuThrottling) continue;
    if (!best || c.Beside() > best->Beside()) best = &c;
  }
  if (!best || best->Beside() < kMinSecondCauseShare * e.late_share) return out;
  out.names = true;
  out.cause = best->cause;
  out.layer = best->layer;
  out.excess = best->Beside();
  out.explained = ExplainedShare(out.excess, e.late_share);
  out.confidence = out.explained;
  out.why = best->what;
  return out;
}

CauseChoice NameCause(const PatternEvidence& e) {
  struct Named {
    Cause cause;
    Layer layer;
  };
  static const std::map<Pattern, Named> kPatterns = {
      {Pattern::kRankStopped, {Cause::kHang, Layer::kComm}},
      {Pattern::kCollectiveMismatch, {Cause::kCollectiveMismatch, Layer::kComm}},
      {Pattern::kSlowStage, {Cause::kStageImbalance, Layer::kGpu}},
      {Pattern::kRanksLateInTurn, {Cause::kDataImbalance, Layer::kData}},
      {Pattern::kSlowTransfers, {Cause::kSlowCommunication, Layer::kComm}},
      {Pattern::kSlowerLink, {Cause::kSlowCommunication, Layer::kComm}},
      {Pattern::kCpuTakenByOthers, {Cause::kCpuContention, Layer::kCpu}},
      {Pattern::kCgroupThrottled, {Cause::kCpuThrottling, Layer::kCpu}},
  };
  const Named& n = kPatterns.at(e.pattern);
  CauseChoice out;
  out.names = true;
  out.cause = n.cause;
  out.layer = e.layer.value_or(n.layer);
  out.excess = e.explained;
  out.explained = ExplainedShare(e.explained, e.effect);
  out.confidence = out.explained;
  return out;
}

void SetCause(const CauseChoice& choice, Finding* f) {
  if (!choice.names) return;
  f->cause = choice.cause;
  f->layer = choice.layer;
  f->confidence = RoundTo(choice.confidence, 2);
}

const char* CausePhrase(Cause cause) {
  if (cause == Cause::kSlowCompute) return "its compute takes longer";
  if (cause == Cause::kDataloaderStall) return "its data loading takes longer";
  if (cause == Cause::kHostStall) return "its host thread stalls outside any op";
  if (cause == Cause::kLaunchOverhead) return "its device waits for the host to launch work";
  if (cause == Cause::kSlowCommunication) return "its transfers take longer";
  return "cause not determined from the trace";
}

}  // namespace strata::diagnosis
