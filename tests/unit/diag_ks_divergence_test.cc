// KAIR's KS divergence between ranks (analysis/diagnosis/ks_divergence.h): the invariants of every output over
// generated samples (rank counts 2..300, with and without stages), and the relations that must hold between
// inputs: relabelling ranks permutes the scores; a stage's scores do not depend on another stage's samples; a
// rank drawn from a shifted distribution leads the ranking; the straggler localization scores as KsScores does.
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <random>
#include <set>

#include "analysis/diagnosis/ks_divergence.h"

namespace strata::diagnosis {
namespace {

using Samples = std::vector<std::vector<double>>;

Samples Generate(std::mt19937& rng, size_t ranks, size_t per_rank) {
  std::normal_distribution<double> noise(100.0, 5.0);
  Samples out(ranks);
  for (auto& s : out) {
    for (size_t i = 0; i < per_rank; ++i) s.push_back(noise(rng));
    std::sort(s.begin(), s.end());
  }
  return out;
}

std::vector<int32_t> Stages(size_t ranks, int32_t count) {
  std::vector<int32_t> out;
  if (count < 2) return out;
  for (size_t r = 0; r < ranks; ++r) out.push_back(static_cast<int32_t>(r % static_cast<size_t>(count)));
  return out;
}

void ExpectInvariants(const KsDivergence& ks, size_t ranks, const std::vector<int32_t>& stages) {
  const size_t n = ks.groups.size(), most = (ranks + kMaxKsGroups - 1) / kMaxKsGroups;
  ASSERT_EQ(ks.matrix.size(), n);
  for (size_t i = 0; i < n; ++i) {
    ASSERT_EQ(ks.matrix[i].size(), n);
    EXPECT_EQ(ks.matrix[i][i], 0.0);
    for (size_t j = 0; j < n; ++j) {
      EXPECT_EQ(ks.matrix[i][j], ks.matrix[j][i]);
      EXPECT_GE(ks.matrix[i][j], 0.0);
      EXPECT_LE(ks.matrix[i][j], 1.0);
    }
  }
  std::vector<int> seen(ranks, 0);
  for (size_t g = 0; g < n; ++g) {
    EXPECT_LE(ks.groups[g].size(), most);
    EXPECT_TRUE(std::is_sorted(ks.groups[g].begin(), ks.groups[g].end()));
    for (const size_t r : ks.groups[g]) {
      ++seen.at(r);
      if (!stages.empty()) {
        EXPECT_EQ(stages[r], stages[ks.groups[g].front()]) << "a group spans two stages";
      }
      EXPECT_LE(ks.score[r], ks.score[ks.lead[g]]) << "the lead is its group's highest score";
    }
    EXPECT_NE(std::find(ks.groups[g].begin(), ks.groups[g].end(), ks.lead[g]), ks.groups[g].end());
  }
  EXPECT_EQ(std::count(seen.begin(), seen.end(), 1), static_cast<std::ptrdiff_t>(ranks)) << "a rank in one group";
  std::vector<size_t> sorted_ranking = ks.ranking;
  std::sort(sorted_ranking.begin(), sorted_ranking.end());
  std::vector<size_t> all(n);
  std::iota(all.begin(), all.end(), size_t{0});
  EXPECT_EQ(sorted_ranking, all);
  for (size_t k = 1; k < n; ++k) EXPECT_GE(ks.score[ks.lead[ks.ranking[k - 1]]], ks.score[ks.lead[ks.ranking[k]]]);
  for (const double s : ks.score) {
    EXPECT_GE(s, 0.0);
    EXPECT_LE(s, 1.0);
  }
}

TEST(KsDivergence, InvariantsOverGeneratedRanks) {
  std::mt19937 rng(4242);
  for (const size_t ranks : {2, 3, 8, 63, 64, 65, 130, 300})
    for (const int32_t stage_count : {1, 2, 4}) {
      SCOPED_TRACE(testing::Message() << ranks << " ranks, " << stage_count << " stages");
      const Samples s = Generate(rng, ranks, 12);
      const std::vector<int32_t> stages = Stages(ranks, stage_count);
      const auto ks = KsDivergenceOf(s, KsScores(s, stages), stages, KsSample::kStepBusy,
                                     stages.empty() ? KsPeers::kAllRanks : KsPeers::kStagePeers);
      ASSERT_TRUE(ks.has_value());
      ExpectInvariants(*ks, ranks, stages);
      const size_t biggest_peer_set = stages.empty() ? ranks : (ranks + stage_count - 1) / stage_count;
      EXPECT_EQ(ks->pooled, biggest_peer_set > kMaxKsGroups);
    }
}

TEST(KsDivergence, NoneWithoutTwoRanksOrSamples) {
  EXPECT_FALSE(KsDivergenceOf({{1.0, 2.0}}, {0.0}, {}, KsSample::kStepBusy, KsPeers::kAllRanks).has_value());
  EXPECT_FALSE(KsDivergenceOf({{}, {}}, {0.0, 0.0}, {}, KsSample::kStepBusy, KsPeers::kAllRanks).has_value());
  EXPECT_EQ(KsScores({{}, {1.0}}, {}), (std::vector<double>{0.0, 0.0}));
}

TEST(KsDivergence, RelabellingRanksPermutesTheScores) {
  std::mt19937 rng(7);
  for (const size_t ranks : {5, 40, 90}) {
    const Samples s = Generate(rng, ranks, 10);
    std::vector<size_t> perm(ranks);
    std::iota(perm.begin(), perm.end(), size_t{0});
    std::shuffle(perm.begin(), perm.end(), rng);
    Samples shuffled(ranks);
    for (size_t r = 0; r < ranks; ++r) shuffled[perm[r]] = s[r];
    const std::vector<double> a = KsScores(s, {}), b = KsScores(shuffled, {});
    for (size_t r = 0; r < ranks; ++r) EXPECT_DOUBLE_EQ(a[r], b[perm[r]]) << ranks << " ranks, rank " << r;
  }
}

TEST(KsDivergence, AStagesScoresIgnoreOtherStages) {
  std::mt19937 rng(11);
  Samples s = Generate(rng, 12, 10);
  const std::vector<int32_t> stages = Stages(12, 2);
  const std::vector<double> before = KsScores(s, stages);
  for (size_t r = 1; r < 12; r += 2)  // stage 1: every odd rank, made far slower
    for (double& x : s[r]) x *= 10;
  const std::vector<double> after = KsScores(s, stages);
  for (size_t r = 0; r < 12; r += 2) EXPECT_EQ(before[r], after[r]) << "stage 0's rank " << r;
}

TEST(KsDivergence, AShiftedRankLeadsTheRanking) {
  std::mt19937 rng(3);
  for (const size_t ranks : {4, 32, 200}) {
    Samples s = Generate(rng, ranks, 16);
    const size_t slow = ranks / 3;
    for (double& x : s[slow]) x += 50;  // 10 standard deviations
    const auto ks = KsDivergenceOf(s, KsScores(s, {}), {}, KsSample::kStepBusy, KsPeers::kAllRanks);
    ASSERT_TRUE(ks.has_value());
    EXPECT_EQ(ks->lead[ks->ranking.front()], slow) << ranks << " ranks";
    const auto& top = ks->groups[ks->ranking.front()];
    EXPECT_NE(std::find(top.begin(), top.end(), slow), top.end());
  }
}

TEST(KsDivergence, PairwiseScoreIsTheMeanDistanceToThePeers) {
  const Samples s = {{1, 2, 3}, {1, 2, 3}, {10, 11, 12}};
  const std::vector<double> score = KsScores(s, {});
  EXPECT_DOUBLE_EQ(score[0], 0.5);  // 0 to rank 1, 1 to rank 2
  EXPECT_DOUBLE_EQ(score[2], 1.0);
  const auto ks = KsDivergenceOf(s, score, {}, KsSample::kStepBusy, KsPeers::kAllRanks);
  ASSERT_TRUE(ks.has_value());
  EXPECT_EQ(ks->matrix[0][2], 1.0);
  EXPECT_EQ(ks->matrix[0][1], 0.0);
  EXPECT_EQ(ks->ranking.front(), 2u);
}

}  // namespace
}  // namespace strata::diagnosis
