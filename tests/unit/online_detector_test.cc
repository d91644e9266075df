// Online straggler detection (analysis/online/online_detector.h) on generated step-summary streams: a rank
// that slows clearly from a given step is detected within two steps with its cause, a small lateness once it
// held for most of ten steps; one noisy step raises nothing;
// a clean stream of many steps raises nothing; a detection closes once the rank is on time again.
#include "analysis/online/online_detector.h"

#include <gtest/gtest.h>

#include <random>

namespace strata::online {
namespace {

// One step of `ranks` ranks: 100 ms steps, own work 60 ms ± jitter; rank `slow` computes `extra_s` more
// (its peers wait that much longer).
std::vector<RankStepSummary> Step(int64_t step, int ranks, int slow, double extra_s, std::mt19937& rng,
                                  bool gc = false) {
  std::normal_distribution<double> jitter(0, 0.0005);
  std::vector<RankStepSummary> out;
  for (int r = 0; r < ranks; ++r) {
    RankStepSummary s;
    s.rank = r;
    s.step = step;
    s.step_s = 0.1 + (slow >= 0 ? extra_s : 0);
    const double work = 0.06 + jitter(rng) + (r == slow ? extra_s : 0);
    s.wait_s = s.step_s - work;
    s.oncpu_s = work - (gc && r == slow ? extra_s : 0);
    s.gc_s = gc && r == slow ? extra_s : 0;
    out.push_back(s);
  }
  return out;
}

TEST(OnlineDetector, SlowRankFromStep20IsDetectedAtStep21WithItsCause) {
  std::mt19937 rng(1);
  OnlineDetector det;
  std::vector<Detection> all;
  for (int64_t s = 0; s < 30; ++s) {
    auto opened = det.AddStep(s, Step(s, 16, s >= 20 ? 5 : -1, 0.01, rng), static_cast<double>(s));
    all.insert(all.end(), opened.begin(), opened.end());
  }
  ASSERT_EQ(all.size(), 1u);
  EXPECT_EQ(all[0].rank, 5);
  EXPECT_EQ(all[0].first_step, 20);
  EXPECT_EQ(all[0].step, 21);
  EXPECT_EQ(all[0].cause, "slow_compute");
  EXPECT_NEAR(all[0].late_s, 0.01, 0.002);
  EXPECT_EQ(det.open().count(5), 1u);
}

TEST(OnlineDetector, GcPausesNameTheirCause) {
  std::mt19937 rng(2);
  OnlineDetector det;
  std::vector<Detection> all;
  for (int64_t s = 0; s < 10; ++s) {
    auto opened = det.AddStep(s, Step(s, 8, 3, 0.02, rng, /*gc=*/true), 0);
    all.insert(all.end(), opened.begin(), opened.end());
  }
  ASSERT_EQ(all.size(), 1u);
  EXPECT_EQ(all[0].cause, "gc_pause");
}

TEST(OnlineDetector, TwoRanksAreEnough) {
  std::mt19937 rng(3);
  OnlineDetector det;
  size_t opened = 0;
  for (int64_t s = 0; s < 5; ++s) opened += det.AddStep(s, Step(s, 2, 1, 0.01, rng), 0).size();
  EXPECT_EQ(opened, 1u);
  EXPECT_EQ(det.open().begin()->first, 1);
}

TEST(OnlineDetector, OneNoisyStepRaisesNothingAndACleanStreamNeither) {
  std::mt19937 rng(4);
  OnlineDetector det;
  size_t opened = 0;
  for (int64_t s = 0; s < 2000; ++s) opened += det.AddStep(s, Step(s, 32, s == 500 ? 7 : -1, 0.03, rng), 0).size();
  EXPECT_EQ(opened, 0u);
}

// A lateness just over the minimum effect (4 ms on 104 ms steps: 3.8 %, under twice the 3 % minimum) is
// detected only once it held in 8 of the last 10 steps; the same lateness for two steps in three (jitter at
// the edge, as on a clean 4-rank job) raises nothing.
TEST(OnlineDetector, ASmallLatenessMustHoldLongerThanAClearOne) {
  std::mt19937 rng(7);
  OnlineDetector det;
  std::vector<Detection> all;
  for (int64_t s = 0; s < 40; ++s) {
    const bool slow = s >= 20 || s == 5 || s == 6;
    auto opened = det.AddStep(s, Step(s, 16, slow ? 9 : -1, 0.004, rng), static_cast<double>(s));
    all.insert(all.end(), opened.begin(), opened.end());
  }
  ASSERT_EQ(all.size(), 1u) << "the 2-step blip at steps 5-6 raised a detection";
  EXPECT_EQ(all[0].rank, 9);
  EXPECT_EQ(all[0].first_step, 20);
  EXPECT_GE(all[0].step, 27) << "at least 8 of the last 10 steps late";
  EXPECT_LE(all[0].step, 29) << "jitter (0.5 ms) may leave a step or two under the minimum effect";
}

TEST(OnlineDetector, ADetectionClosesWhenTheRankIsOnTimeAgain) {
  std::mt19937 rng(5);
  OnlineDetector det;
  for (int64_t s = 0; s < 5; ++s) det.AddStep(s, Step(s, 8, 2, 0.01, rng), 0);
  ASSERT_EQ(det.open().size(), 1u);
  for (int64_t s = 5; s < 9; ++s) det.AddStep(s, Step(s, 8, -1, 0, rng), 0);
  EXPECT_TRUE(det.open().empty());
}

TEST(OnlineDetector, GroupsAreComparedApart) {
  // Stage 1's ranks all do twice the work of stage 0's: nobody is late within its own stage.
  std::mt19937 rng(6);
  OnlineDetector det;
  size_t opened = 0;
  for (int64_t s = 0; s < 10; ++s) {
    auto step = Step(s, 8, -1, 0, rng);
    for (auto& r : step)
      if (r.rank >= 4) r.group = 1, r.wait_s -= 0.03;
    opened += det.AddStep(s, step, 0).size();
  }
  EXPECT_EQ(opened, 0u);
}

}  // namespace
}  // namespace strata::online
