// KAIR's KS divergence of an op table's ranks (see op_table_ks.h).
#include "analysis/op_table_ks.h"

#include <algorithm>

#include "analysis/rank_step_busy.h"
#include "core/robust_stats.h"

namespace strata {

namespace {

/// Each rank's score (see op_table_ks.h) over its sorted samples.
std::vector<double> Scores(const std::vector<std::vector<double>>& samples) {
  const size_t ranks = samples.size();
  std::vector<double> score(ranks, 0.0);
  if (ranks <= diagnosis::kMaxKsGroups) {
    for (size_t a = 0; a < ranks; ++a) {
      for (size_t b = 0; b < ranks; ++b)
        if (a != b) score[a] += KsDistanceSorted(samples[a], samples[b]);
      score[a] /= static_cast<double>(ranks - 1);
    }
  } else {
    std::vector<double> pooled;
    for (const auto& s : samples) pooled.insert(pooled.end(), s.begin(), s.end());
    std::sort(pooled.begin(), pooled.end());
    for (size_t a = 0; a < ranks; ++a) score[a] = KsDistanceSorted(samples[a], pooled);
  }
  return score;
}

}  // namespace

std::optional<diagnosis::KsDivergence> OpTableKs(const TraceStore& store, const std::vector<SliceRows>& rows_by_rank) {
  const size_t ranks = store.ranks.size();
  if (ranks < 2) return std::nullopt;
  OpTableTypes types(store);
  std::vector<std::vector<double>> samples(ranks);
  for (size_t r = 0; r < ranks && r < rows_by_rank.size(); ++r) {
    for (const SliceId row : rows_by_rank[r])
      if (types.IsCompute(row.value)) samples[r].push_back(static_cast<double>(store.slices.dur_ns[row.value]));
    std::sort(samples[r].begin(), samples[r].end());
  }
  diagnosis::KsDivergence out;
  out.score = Scores(samples);
  out.group_size = (ranks + diagnosis::kMaxKsGroups - 1) / diagnosis::kMaxKsGroups;
  std::vector<std::vector<double>> groups;
  for (size_t a = 0; a < ranks; a += out.group_size) {
    std::vector<double> g;
    for (size_t r = a; r < std::min(ranks, a + out.group_size); ++r)
      g.insert(g.end(), samples[r].begin(), samples[r].end());
    std::sort(g.begin(), g.end());
    groups.push_back(std::move(g));
  }
  out.matrix.assign(groups.size(), std::vector<double>(groups.size(), 0.0));
  for (size_t i = 0; i < groups.size(); ++i)
    for (size_t j = 0; j < groups.size(); ++j)
      if (i != j) out.matrix[i][j] = KsDistanceSorted(groups[i], groups[j]);
  return out;
}

}  // namespace strata
