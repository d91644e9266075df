// Where a late rank arrived latest in each step (see latest_arrival.h).
#include "analysis/diagnosis/latest_arrival.h"

#include <utility>
#include <vector>

#include "analysis/diagnosis/peer_difference.h"

namespace strata::diagnosis {

std::map<int64_t, size_t> LatestArrivals(const model::JobModel& job, size_t rank,
                                         const std::vector<int64_t>& offset_ns) {
  const model::CollectiveModel& cm = job.collectives;
  const auto arrival = [&](size_t q, const model::MatchedCollective& m) {
    const int64_t offset = q < offset_ns.size() ? offset_ns[q] : 0;
    return static_cast<double>(cm.calls[q][static_cast<size_t>(m.call[q])].start_ns - offset);
  };
  std::map<int64_t, std::pair<double, size_t>> best;  // step -> (lateness, matched index)
  for (size_t i = 0; i < cm.matched.size(); ++i) {
    const model::MatchedCollective& m = cm.matched[i];
    if (rank >= m.call.size() || m.call[rank] < 0 || m.present < 2) continue;
    std::vector<size_t> peers;
    for (size_t q = 0; q < m.call.size(); ++q)
      if (q != rank && m.call[q] >= 0) peers.push_back(q);
    const double late = arrival(rank, m) - PeerMedian(peers, [&](size_t q) { return arrival(q, m); });
    auto [it, fresh] = best.try_emplace(m.step, late, i);
    if (!fresh && late > it->second.first) it->second = {late, i};
  }
  std::map<int64_t, size_t> out;
  for (const auto& [step, at] : best) out[step] = at.second;
  return out;
}

}  // namespace strata::diagnosis
