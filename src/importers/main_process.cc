// MainProcessRule: which process of a rank is its main one (see main_process.h).
#include "importers/main_process.h"

#include <tuple>

namespace strata {

MainProcessRule::MainProcessRule(const RecordedSegment& seg) : seg_(seg) {
  for (const CallRow& c : seg.data.calls) {
    ++calls_[c.tgid];
    if (c.probe < seg.probes.size() && IsCollectiveCall(seg.probes[c.probe].kind)) ++collective_calls_[c.tgid];
  }
}

bool MainProcessRule::Better(uint32_t a, uint32_t b) const {
  auto count = [](const std::map<uint32_t, size_t>& m, uint32_t pid) {
    auto it = m.find(pid);
    return it == m.end() ? size_t{0} : it->second;
  };
  auto first_seen = [this](uint32_t pid) {
    auto it = seg_.processes.find(static_cast<int>(pid));
    return it == seg_.processes.end() ? UINT64_MAX : it->second.first_seen_ns;
  };
  // More calls first; then earlier; then the lower pid.
  return std::make_tuple(count(collective_calls_, b), count(calls_, b), first_seen(a), a) <
         std::make_tuple(count(collective_calls_, a), count(calls_, a), first_seen(b), b);
}

}  // namespace strata
