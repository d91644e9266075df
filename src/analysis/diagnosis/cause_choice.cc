// Naming a straggler's cause (see cause_choice.h).
#include "analysis/diagnosis/cause_choice.h"

#include <algorithm>
#include <cmath>

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
  out.cause = Cause::kUnknown;
  if (candidates.empty()) return out;
  const auto best =
      std::max_element(candidates.begin(), candidates.end(),
                       [](const CauseCandidate& a, const CauseCandidate& b) { return a.excess_ms < b.excess_ms; });
  out.excess_ms = best->excess_ms;
  out.explained = ExplainedShare(best->excess_ms, lateness_ms);
  if (best->excess_ms <= 0 || out.explained < kMinExplainedShare) return out;
  out.cause = best->cause;
  out.layer = best->layer;
  out.confidence = out.explained;
  return out;
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
