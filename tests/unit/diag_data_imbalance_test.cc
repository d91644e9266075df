// The data_imbalance rule of the trace paths on constructed lateness and ops: ranks late in turn in at least
// half of the steps, their ops slower across the board, and a real loss give the finding (ranks mapped to
// their numbers); a few late steps (jitter), one rank, a straggler already found, a loss under the minimum
// effect, lateness from one long op (a hiccup, not more data), or ops whose extra time covers under half of the
// lateness give none.
#include "analysis/diagnosis/data_imbalance.h"

#include <gtest/gtest.h>

#include <set>
#include <vector>

namespace strata::diagnosis {
namespace {

// `steps` x 4 ranks; late[s] = the rank late in step s, or -1, by `late_ns` (its blame).
StragglerAnalysis Lateness(const std::vector<int>& late_rank_by_step, double late_ns = 0) {
  StragglerAnalysis sa;
  sa.late.assign(late_rank_by_step.size(), std::vector<bool>(4, false));
  sa.blame_ns.assign(late_rank_by_step.size(), std::vector<double>(4, 0.0));
  std::set<int32_t> ranks;
  for (size_t s = 0; s < late_rank_by_step.size(); ++s)
    if (late_rank_by_step[s] >= 0) {
      sa.late[s][static_cast<size_t>(late_rank_by_step[s])] = true;
      sa.blame_ns[s][static_cast<size_t>(late_rank_by_step[s])] = late_ns;
      ++sa.late_pairs;
      ranks.insert(late_rank_by_step[s]);
    }
  for (int32_t r : ranks) sa.late_ranks.push_back(RankIndex(static_cast<size_t>(r)));
  return sa;
}

const std::vector<int32_t> kRankNumbers = {10, 11, 12, 13};

// Late pairs whose ops were slower across the board (or not, with broad = false).
LoadScaling Load(size_t measured, size_t broad) {
  LoadScaling l;
  l.measured = measured;
  l.broad = broad;
  for (size_t i = 0; i < measured; ++i) l.scaling.push_back(i < broad ? 1.2 : 1.0);
  return l;
}

// One step's ops: `n` compute leaves named by index, each `us` µs long.
std::vector<OpOccurrence> Ops(const std::vector<double>& us) {
  std::vector<OpOccurrence> out;
  for (size_t i = 0; i < us.size(); ++i) out.push_back({static_cast<StringId>(i + 1), 0, us[i] * 1e3, 0, true, true});
  return out;
}

TEST(DataImbalance, RanksLateInTurnInHalfTheSteps) {
  const StragglerAnalysis sa = Lateness({0, -1, 2, -1, 3, -1});
  EXPECT_TRUE(RanksLateInTurn(sa));
  const auto f = DataImbalanceFinding(sa, kRankNumbers, 0.08, Load(3, 3), {}, 0.03);
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->cause, Cause::kDataImbalance);
  EXPECT_EQ(f->layer, Layer::kData);
  EXPECT_EQ(f->ranks, RankNumbers({10, 12, 13}));
  EXPECT_DOUBLE_EQ(f->impact_pct, 8.0);
  const auto* e = std::get_if<LoadImbalanceEvidence>(&f->evidence.kind);
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->late_pairs, 3u);
  EXPECT_EQ(e->broad_late_pairs, 3u);
  EXPECT_DOUBLE_EQ(e->op_scaling_median, 1.2);
  EXPECT_NE(f->summary.find("their ops 20% slower"), std::string::npos) << f->summary;
  EXPECT_NE(f->summary.find("3 ranks take turns"), std::string::npos) << f->summary;
}

TEST(DataImbalance, JitterOneRankAStragglerOrASmallLossIsNot) {
  // Two late steps of six, on two ranks: what jitter does in a clean 4-8-rank job.
  EXPECT_FALSE(RanksLateInTurn(Lateness({1, -1, -1, 2, -1, -1})));
  EXPECT_FALSE(
      DataImbalanceFinding(Lateness({1, -1, -1, 2, -1, -1}), kRankNumbers, 0.08, Load(2, 2), {}, 0.03).has_value());
  // One rank late in every step is a straggler's pattern, not imbalance.
  EXPECT_FALSE(RanksLateInTurn(Lateness({1, 1, 1, 1})));
  const StragglerAnalysis rotating = Lateness({0, 1, 2, 3});
  const std::vector<Straggler> with_straggler(1);
  EXPECT_FALSE(DataImbalanceFinding(rotating, kRankNumbers, 0.08, Load(4, 4), with_straggler, 0.03).has_value());
  EXPECT_FALSE(DataImbalanceFinding(rotating, kRankNumbers, 0.02, Load(4, 4), {}, 0.03).has_value());
  EXPECT_TRUE(DataImbalanceFinding(rotating, kRankNumbers, 0.03, Load(4, 4), {}, 0.03).has_value());
}

TEST(DataImbalance, LatenessFromHiccupsIsNot) {
  // Ranks late in turn, but in most late steps the typical op ran as fast as the peers' (one long op or a
  // gap made the lateness): what a loaded machine does to a clean job.
  const StragglerAnalysis rotating = Lateness({0, 1, 2, 3});
  EXPECT_FALSE(DataImbalanceFinding(rotating, kRankNumbers, 0.08, Load(4, 1), {}, 0.03).has_value());
  EXPECT_FALSE(DataImbalanceFinding(rotating, kRankNumbers, 0.08, Load(0, 0), {}, 0.03).has_value());
  EXPECT_TRUE(DataImbalanceFinding(rotating, kRankNumbers, 0.08, Load(4, 2), {}, 0.03).has_value());
}

TEST(DataImbalance, OpScalingIsTheTimeWeightedMedianRatioOfLeafComputeOps) {
  // Every op 25 % slower: scaling 1.25, 187.5 µs of extra time.
  const auto peer = Ops({100, 200, 400, 50});
  EXPECT_DOUBLE_EQ(CompareOps(Ops({125, 250, 500, 62.5}), {peer, peer})->scaling, 1.25);
  EXPECT_DOUBLE_EQ(CompareOps(Ops({125, 250, 500, 62.5}), {peer, peer})->excess_ns, 187.5e3);
  // One op 20x longer (a preempted op): the typical op is as fast as the peers', scaling 1.
  EXPECT_DOUBLE_EQ(CompareOps(Ops({2000, 200, 400, 50}), {peer, peer})->scaling, 1.0);
  // The peers' median, not their mean: one slow peer does not move it.
  EXPECT_DOUBLE_EQ(CompareOps(Ops({110, 220, 440, 55}), {peer, peer, Ops({300, 600, 1200, 150})})->scaling, 1.1);
  // Ops under 10 µs, parents, non-compute ops and ops no peer ran do not count; nothing left: no scaling.
  auto own = Ops({5, 400, 300, 200});
  own[1].leaf = false;
  own[2].compute = false;
  own[3].name = StringId(99);
  EXPECT_FALSE(CompareOps(own, {Ops({5, 100, 100, 100})}).has_value());
}

TEST(DataImbalance, MeasureLoadScalingComparesLateRanksWithTheirRolePeers) {
  // 4 ranks in 2 roles (stages) whose ops differ 3x; rank 1 late in step 0 with ops 30 % slower than its
  // stage peer rank 0; rank 3 late in step 1 with ops as fast as rank 2's.
  StragglerAnalysis sa = Lateness({1, 3}, 60e3);  // 60 µs late: rank 1's ops' 90 µs of extra time explain it
  const std::vector<int32_t> role = {0, 0, 1, 1};
  const StepOps ops = [](size_t step, size_t rank) {
    const double base = rank < 2 ? 100 : 300;
    const double slow = (step == 0 && rank == 1) ? 1.3 : 1.0;
    return Ops({base * slow, 2 * base * slow});
  };
  const LoadScaling load = MeasureLoadScaling(sa, ops, role, 0.03);
  EXPECT_EQ(load.measured, 2u);
  EXPECT_EQ(load.broad, 1u);
  ASSERT_EQ(load.scaling.size(), 2u);
  EXPECT_NEAR(load.scaling[0], 1.3, 1e-9);
  EXPECT_NEAR(load.scaling[1], 1.0, 1e-9);
  // Without roles, rank 3's peers would include the stage-0 ranks (median of 100, 100, 300 = 100): 3x.
  EXPECT_NEAR(MeasureLoadScaling(sa, ops, {}, 0.03).scaling[1], 3.0, 1e-9);
}

TEST(DataImbalance, OpsSlowerByLessThanTheLatenessAreNotMoreData) {
  // Rank 1's ops 30 % slower (90 µs of extra time), but it was 2 ms late: the ops cover under half of its
  // lateness, so something else (a busy core's wake-ups, the interpreter between ops) made it late.
  const StepOps ops = [](size_t, size_t rank) {
    const double slow = rank == 1 ? 1.3 : 1.0;
    return Ops({100 * slow, 200 * slow});
  };
  const LoadScaling late_by_more = MeasureLoadScaling(Lateness({1, 1}, 2e6), ops, {}, 0.03);
  EXPECT_EQ(late_by_more.measured, 2u);
  EXPECT_EQ(late_by_more.broad, 0u);
  EXPECT_NEAR(late_by_more.scaling[0], 1.3, 1e-9);
  // 180 µs late: the 90 µs of extra time is half of it, enough.
  EXPECT_EQ(MeasureLoadScaling(Lateness({1, 1}, 180e3), ops, {}, 0.03).broad, 2u);
  EXPECT_EQ(MeasureLoadScaling(Lateness({1, 1}, 181e3), ops, {}, 0.03).broad, 0u);
}

}  // namespace
}  // namespace strata::diagnosis
