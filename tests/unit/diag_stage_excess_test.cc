// The one statistic of stage_imbalance (analysis/diagnosis/stage_excess.h): its definition on small cases, and
// its invariants over seeded random stage loads — never negative, zero when every stage does equal work,
// permuted by a relabelling of the stages, never more than the stage's lead over the fastest other stage nor
// its own work, and a saving of at most the whole step — with the members' spread over the same loads.
#include "analysis/diagnosis/stage_excess.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <random>
#include <vector>

namespace strata::diagnosis {
namespace {

TEST(DiagStageExcess, AStageIsComparedWithAnEvenSplitOfTheStagesWork) {
  // Two stages of 30 and 10: an even split is 20 each, so balancing saves 10 (not the 20 between them).
  StepStageExcess e = MeasureStageExcess({{30, 30}, {10, 10}});
  EXPECT_DOUBLE_EQ(e.stage[0], 10);
  EXPECT_DOUBLE_EQ(e.stage[1], 0);
  // Four stages: the level is the mean of all four.
  e = MeasureStageExcess({{10}, {10}, {2}, {18}});
  EXPECT_DOUBLE_EQ(e.stage[3], 8);
  EXPECT_DOUBLE_EQ(e.stage[0], 0);
  // A stage's work is its members' mean; each member is measured against the same level.
  e = MeasureStageExcess({{14, 20, 20}, {10, 12}});
  EXPECT_DOUBLE_EQ(e.stage[0], 18 - 14.5);
  EXPECT_EQ(e.member[0], (std::vector<double>{0, 5.5, 5.5}));
  EXPECT_EQ(e.member[1], (std::vector<double>{0, 0}));
  // One stage has nothing to be compared with.
  e = MeasureStageExcess({{5, 9}});
  EXPECT_DOUBLE_EQ(e.stage[0], 0);
  EXPECT_EQ(e.member[0], (std::vector<double>{0, 0}));
}

TEST(DiagStageExcess, TheSavingIsTheMeanShareOfItsSteps) {
  EXPECT_DOUBLE_EQ(MeanShareOfStep({10, 30}, {100, 100}), 0.2);
  EXPECT_DOUBLE_EQ(MeanShareOfStep({10, 30}, {100, 0}), 0.05);  // a step without time counts 0
  EXPECT_DOUBLE_EQ(MeanShareOfStep({}, {}), 0.0);
}

TEST(DiagStageExcess, TheSpreadOfAStagesMembersIsItsWeakestAndStrongestExcess) {
  // stage_imbalance's confidence in both paths: a stage whose members all carry the excess is a stage; one
  // member carrying it alone is a rank.
  const MemberSpread s = SpreadOfMembers({4, 1, 3});
  EXPECT_DOUBLE_EQ(s.weakest, 1);
  EXPECT_DOUBLE_EQ(s.strongest, 4);
  const MemberSpread none = SpreadOfMembers({});
  EXPECT_DOUBLE_EQ(none.weakest, 0);
  EXPECT_DOUBLE_EQ(none.strongest, 0);
  // Over steps: the member excesses of MeasureStageExcess, summed per member, then spread.
  const StepStageExcess a = MeasureStageExcess({{30, 26}, {10, 10}}), b = MeasureStageExcess({{24, 30}, {10, 10}});
  const MemberSpread over = SpreadOfMembers({a.member[0][0] + b.member[0][0], a.member[0][1] + b.member[0][1]});
  EXPECT_DOUBLE_EQ(over.weakest, 11 + 5.5);  // level 19, then 18.5
  EXPECT_DOUBLE_EQ(over.strongest, 7 + 11.5);
}

// Random stage loads: 2–6 stages of 1–4 members each, some of them all equal.
StageWork RandomWork(std::mt19937* rng) {
  std::uniform_int_distribution<int> stages(2, 6), members(1, 4);
  std::uniform_real_distribution<double> load(1.0, 100.0);
  StageWork work(static_cast<size_t>(stages(*rng)));
  for (auto& m : work) {
    m.resize(static_cast<size_t>(members(*rng)));
    for (double& w : m) w = load(*rng);
  }
  return work;
}

constexpr double kEps = 1e-9;  // loads are 1–100 ns

TEST(DiagStageExcess, InvariantsHoldOverRandomStageLoads) {
  std::mt19937 rng(50);
  for (int trial = 0; trial < 2000; ++trial) {
    const StageWork work = RandomWork(&rng);
    const StepStageExcess e = MeasureStageExcess(work);
    ASSERT_EQ(e.stage.size(), work.size());
    std::vector<double> stage_work;
    for (const auto& m : work)
      stage_work.push_back(std::accumulate(m.begin(), m.end(), 0.0) / static_cast<double>(m.size()));
    for (size_t s = 0; s < work.size(); ++s) {
      EXPECT_GE(e.stage[s], 0.0);
      double fastest_other = 1e300;
      for (size_t o = 0; o < work.size(); ++o)
        if (o != s) fastest_other = std::min(fastest_other, stage_work[o]);
      // A saving never exceeds the lateness it removes: the stage's lead over the fastest other stage, nor
      // the stage's own work; as a share of a step its work fits in, never above 1.
      EXPECT_LE(e.stage[s], std::max(0.0, stage_work[s] - fastest_other) + 1e-9);
      EXPECT_LE(e.stage[s], stage_work[s]);
      EXPECT_LE(MeanShareOfStep({e.stage[s]}, {stage_work[s]}), 1.0);
      ASSERT_EQ(e.member[s].size(), work[s].size());
      for (size_t k = 0; k < work[s].size(); ++k) {
        EXPECT_GE(e.member[s][k], 0.0);
        EXPECT_LE(e.member[s][k], work[s][k]);
      }
      // The members' spread (stage_imbalance's confidence): bounded by the members' own excesses, the weakest
      // never above the strongest, whatever order the members come in.
      const MemberSpread spread = SpreadOfMembers(e.member[s]);
      EXPECT_LE(spread.weakest, spread.strongest);
      EXPECT_DOUBLE_EQ(spread.weakest, *std::min_element(e.member[s].begin(), e.member[s].end()));
      EXPECT_DOUBLE_EQ(spread.strongest, *std::max_element(e.member[s].begin(), e.member[s].end()));
      std::vector<double> reversed(e.member[s].rbegin(), e.member[s].rend());
      EXPECT_DOUBLE_EQ(SpreadOfMembers(reversed).weakest, spread.weakest);
      EXPECT_DOUBLE_EQ(SpreadOfMembers(reversed).strongest, spread.strongest);
    }
    // Relabelling the stages (a random permutation) permutes the excesses alike.
    std::vector<size_t> order(work.size());
    std::iota(order.begin(), order.end(), 0);
    std::shuffle(order.begin(), order.end(), rng);
    StageWork relabelled;
    for (size_t s : order) relabelled.push_back(work[s]);
    const StepStageExcess p = MeasureStageExcess(relabelled);
    // (Means summed in another order may differ in the last bits: kEps.)
    for (size_t k = 0; k < order.size(); ++k) {
      EXPECT_NEAR(p.stage[k], e.stage[order[k]], kEps);
      for (size_t j = 0; j < p.member[k].size(); ++j) EXPECT_NEAR(p.member[k][j], e.member[order[k]][j], kEps);
    }
    // Every stage doing equal work, whatever its members' spread around it: no excess anywhere.
    StageWork equal = work;
    for (size_t s = 0; s < equal.size(); ++s)
      for (double& w : equal[s]) w += stage_work[0] - stage_work[s];
    for (double x : MeasureStageExcess(equal).stage) EXPECT_NEAR(x, 0.0, kEps);
  }
}

}  // namespace
}  // namespace strata::diagnosis
