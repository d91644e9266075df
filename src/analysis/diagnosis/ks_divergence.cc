// KAIR's KS divergence between ranks (see ks_divergence.h).
#include "analysis/diagnosis/ks_divergence.h"

#include <algorithm>
#include <map>
#include <numeric>

#include "core/robust_stats.h"

namespace strata::diagnosis {

namespace {

/// The rank indices of each stage (one set of all ranks without stages), in ascending order.
std::vector<std::vector<size_t>> PeerSets(size_t ranks, const std::vector<int32_t>& stages) {
  std::map<int32_t, std::vector<size_t>> by_stage;
  for (size_t r = 0; r < ranks; ++r) by_stage[stages.size() == ranks ? stages[r] : 0].push_back(r);
  std::vector<std::vector<size_t>> out;
  for (auto& [stage, members] : by_stage) out.push_back(std::move(members));
  return out;
}

/// Scores the ranks of `members` among themselves (see ks_divergence.h) into `score`.
void ScoreAmong(const std::vector<std::vector<double>>& sorted, const std::vector<size_t>& members,
                std::vector<double>* score) {
  const size_t n = members.size();
  if (n < 2) return;
  if (n <= kMaxKsGroups) {
    std::vector<std::vector<double>> d(n, std::vector<double>(n, 0.0));
    for (size_t a = 0; a < n; ++a)
      for (size_t b = a + 1; b < n; ++b) d[a][b] = d[b][a] = KsDistanceSorted(sorted[members[a]], sorted[members[b]]);
    for (size_t a = 0; a < n; ++a) {
      double sum = 0;
      for (size_t b = 0; b < n; ++b)
        if (a != b) sum += d[a][b];
      (*score)[members[a]] = sum / static_cast<double>(n - 1);
    }
    return;
  }
  std::vector<double> pooled;
  for (const size_t r : members) pooled.insert(pooled.end(), sorted[r].begin(), sorted[r].end());
  std::sort(pooled.begin(), pooled.end());  // once: O(N log N) over the peers, not per rank
  for (const size_t r : members) (*score)[r] = KsDistanceToSorted(sorted[r], pooled);
}

/// The matrix's groups: ranks by stage then index, at most ceil(ranks / kMaxKsGroups) to a group, one stage each.
std::vector<std::vector<size_t>> Groups(size_t ranks, const std::vector<int32_t>& stages) {
  const size_t size = std::max<size_t>(1, (ranks + kMaxKsGroups - 1) / kMaxKsGroups);
  std::vector<std::vector<size_t>> out;
  for (const std::vector<size_t>& stage : PeerSets(ranks, stages))
    for (size_t at = 0; at < stage.size(); at += size)
      out.emplace_back(stage.begin() + static_cast<std::ptrdiff_t>(at),
                       stage.begin() + static_cast<std::ptrdiff_t>(std::min(stage.size(), at + size)));
  return out;
}

/// The sorted samples of a group's ranks pooled.
std::vector<double> Pooled(const std::vector<std::vector<double>>& sorted, const std::vector<size_t>& group) {
  std::vector<double> out;
  for (const size_t r : group) out.insert(out.end(), sorted[r].begin(), sorted[r].end());
  std::sort(out.begin(), out.end());
  return out;
}

double MedianSample(const std::vector<double>& sorted) {
  return MedianOfSorted(sorted.size(), [&](size_t k) { return sorted[k]; });
}

/// Whether rank `a` ranks before rank `b`: a higher score, then the slower median sample, then the lower index.
bool Before(const std::vector<double>& score, const std::vector<double>& median, size_t a, size_t b) {
  if (score[a] != score[b]) return score[a] > score[b];
  if (median[a] != median[b]) return median[a] > median[b];
  return a < b;
}

}  // namespace

std::vector<double> KsScores(const std::vector<std::vector<double>>& sorted, const std::vector<int32_t>& stages) {
  std::vector<double> score(sorted.size(), 0.0);
  for (const std::vector<size_t>& peers : PeerSets(sorted.size(), stages)) ScoreAmong(sorted, peers, &score);
  return score;
}

std::optional<KsDivergence> KsDivergenceOf(const std::vector<std::vector<double>>& sorted, std::vector<double> score,
                                           const std::vector<int32_t>& stages, KsSample of, KsPeers peers) {
  const size_t ranks = sorted.size();
  const bool any = std::any_of(sorted.begin(), sorted.end(), [](const auto& s) { return !s.empty(); });
  if (ranks < 2 || !any || score.size() != ranks) return std::nullopt;
  KsDivergence out;
  out.of = of;
  out.peers = peers;
  for (const std::vector<size_t>& set :
       PeerSets(ranks, peers == KsPeers::kStagePeers ? stages : std::vector<int32_t>{}))
    out.pooled = out.pooled || set.size() > kMaxKsGroups;
  out.score = std::move(score);
  out.groups = Groups(ranks, stages);
  const size_t n = out.groups.size();
  std::vector<std::vector<double>> pooled;
  for (const std::vector<size_t>& g : out.groups) pooled.push_back(Pooled(sorted, g));
  out.matrix.assign(n, std::vector<double>(n, 0.0));
  for (size_t i = 0; i < n; ++i)
    for (size_t j = i + 1; j < n; ++j) out.matrix[i][j] = out.matrix[j][i] = KsDistanceSorted(pooled[i], pooled[j]);
  std::vector<double> median(ranks);
  for (size_t r = 0; r < ranks; ++r) median[r] = MedianSample(sorted[r]);
  for (const std::vector<size_t>& g : out.groups)
    out.lead.push_back(
        *std::min_element(g.begin(), g.end(), [&](size_t a, size_t b) { return Before(out.score, median, a, b); }));
  out.ranking.resize(n);
  std::iota(out.ranking.begin(), out.ranking.end(), size_t{0});
  std::stable_sort(out.ranking.begin(), out.ranking.end(), [&](size_t i, size_t j) {
    const size_t a = out.lead[i], b = out.lead[j];
    if (out.score[a] != out.score[b]) return out.score[a] > out.score[b];
    return median[a] > median[b];
  });
  return out;
}

}  // namespace strata::diagnosis
