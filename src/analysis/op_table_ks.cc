// KAIR's KS divergence of an op table's ranks (see op_table_ks.h).
#include "analysis/op_table_ks.h"

#include <algorithm>

#include "analysis/diagnosis/ks_divergence.h"
#include "analysis/rank_step_busy.h"

namespace strata {

std::optional<diagnosis::KsDivergence> OpTableKs(const TraceStore& store, const std::vector<SliceRows>& rows_by_rank,
                                                 const std::vector<int32_t>& stages) {
  const size_t ranks = store.ranks.size();
  if (ranks < 2) return std::nullopt;
  OpTableTypes types(store);
  std::vector<std::vector<double>> sorted(ranks);
  for (size_t r = 0; r < ranks && r < rows_by_rank.size(); ++r) {
    for (const SliceId row : rows_by_rank[r])
      if (types.IsCompute(row.value)) sorted[r].push_back(static_cast<double>(store.slices.dur_ns[row.value]));
    std::sort(sorted[r].begin(), sorted[r].end());
  }
  std::vector<double> score = diagnosis::KsScores(sorted, stages);
  return diagnosis::KsDivergenceOf(sorted, std::move(score), stages, diagnosis::KsSample::kComputeOpDurations,
                                   stages.empty() ? diagnosis::KsPeers::kAllRanks : diagnosis::KsPeers::kStagePeers);
}

}  // namespace strata
