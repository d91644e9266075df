// Online straggler detection (analysis/online/online_detector.h) on generated step-summary streams: a rank
// that slows clearly from a given step is detected once clearly late in 2 of 3 steps over a second (7 of 10 steps
// of 100 ms) with its cause, a small lateness once it held for 8 in 10 steps over two seconds (16 of 20); one
// noisy step, or a blip of a few steps, raises nothing;
// a clean stream of many steps raises nothing; a (lasting) detection closes once the rank is on time again; its
// confidence is the share of its lateness the named class's excess covers, and under half names no cause.
#include "analysis/online/online_detector.h"

#include <gtest/gtest.h>

#include "analysis/diagnosis/thresholds.h"

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

TEST(OnlineDetector, SlowRankFromStep20IsDetectedAtStep26WithItsCause) {
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
  EXPECT_EQ(all[0].step, 26) << "clearly late in 7 of the last 10 steps of 110 ms (2 of 3 over a second)";
  EXPECT_EQ(all[0].cause, diagnosis::Cause::kSlowCompute);
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
  EXPECT_EQ(all[0].cause, diagnosis::Cause::kGcPause);
}

// Two ranks are judged by each rank's self score (issue 25): it needs kOnlineSelfMinHistory steps of history,
// so the rank slow from step 10 is named, as it was from step 0 against its one peer before (when a rank
// slow from the start was named too, and so was jitter: 2-rank jobs were then left out of serve and agent).
TEST(OnlineDetector, TwoRanksAreEnough) {
  std::mt19937 rng(3);
  OnlineDetector det;
  size_t opened = 0;
  for (int64_t s = 0; s < 25; ++s) opened += det.AddStep(s, Step(s, 2, s >= 10 ? 1 : -1, 0.01, rng), 0).size();
  EXPECT_EQ(opened, 1u);
  EXPECT_EQ(det.open().begin()->first, 1);
  EXPECT_EQ(det.open().begin()->second.decided_by, DecidingScore::kSelf);
}

TEST(OnlineDetector, OneNoisyStepRaisesNothingAndACleanStreamNeither) {
  std::mt19937 rng(4);
  OnlineDetector det;
  size_t opened = 0;
  for (int64_t s = 0; s < 2000; ++s) opened += det.AddStep(s, Step(s, 32, s == 500 ? 7 : -1, 0.03, rng), 0).size();
  EXPECT_EQ(opened, 0u);
}

// A lateness just over the minimum effect (4 ms on 104 ms steps: 3.8 %, under twice the 3 % minimum) is
// detected only once it held in 8 of 10 steps over two seconds (16 of the last 20); the same lateness for two
// steps in three (jitter at the edge, as on a clean 4-rank job) raises nothing.
TEST(OnlineDetector, ASmallLatenessMustHoldLongerThanAClearOne) {
  std::mt19937 rng(7);
  OnlineDetector det;
  std::vector<Detection> all;
  for (int64_t s = 0; s < 50; ++s) {
    const bool slow = s >= 20 || s == 5 || s == 6;
    auto opened = det.AddStep(s, Step(s, 16, slow ? 9 : -1, 0.004, rng), static_cast<double>(s));
    all.insert(all.end(), opened.begin(), opened.end());
  }
  ASSERT_EQ(all.size(), 1u) << "the 2-step blip at steps 5-6 raised a detection";
  EXPECT_EQ(all[0].rank, 9);
  EXPECT_EQ(all[0].first_step, 20);
  EXPECT_GE(all[0].step, 35) << "at least 16 of the last 20 steps late";
  EXPECT_LE(all[0].step, 38) << "jitter (0.5 ms) may leave a step or two under the minimum effect";
}

// What a clean 2-rank agent run showed (2026-11-29): 64 ms steps, each rank's own work 60.4 ms within 0.05 ms,
// and rank 0 working 4-5 ms more for 3 steps (the run queue behind other processes): a 200 ms blip opened a
// `lasting` detection by the 2-of-3 rule. Now the rule spans a second: the blip raises nothing, and the same
// lateness from step 300 on is named within 16 steps (clearly late in 11 of them).
TEST(OnlineDetector, ABlipOfAFewShortStepsRaisesNothingALastingSlowdownIsNamedWithinASecond) {
  std::mt19937 rng(8);
  std::normal_distribution<double> jitter(0, 0.00005);
  OnlineDetector det;
  std::vector<Detection> all;
  for (int64_t s = 0; s < 330; ++s) {
    const bool blip = s >= 200 && s < 203, slow = s >= 300;
    std::vector<RankStepSummary> step;
    for (int r = 0; r < 2; ++r) {
      RankStepSummary x;
      x.rank = r;
      x.step = s;
      x.step_s = 0.064 + (blip || slow ? 0.0045 : 0);
      x.oncpu_s = 0.0604 + jitter(rng) + (r == 0 && (blip || slow) ? 0.0045 : 0);
      x.wait_s = x.step_s - x.oncpu_s;
      step.push_back(x);
    }
    auto opened = det.AddStep(s, step, static_cast<double>(s));
    all.insert(all.end(), opened.begin(), opened.end());
  }
  ASSERT_EQ(all.size(), 1u) << "the 3-step blip at step 200 raised a detection";
  EXPECT_EQ(all[0].rank, 0);
  EXPECT_EQ(all[0].decided_by, DecidingScore::kSelf);
  EXPECT_EQ(all[0].onset_step, 300);
  EXPECT_GE(all[0].step, 310) << "clearly late in 11 of the last 16 steps (2 of 3 over a second of 64 ms steps)";
  EXPECT_LE(all[0].step, 315);
}

// The cause is named from the late run, not the detecting step alone (as the clean agent run of 2026-11-29
// showed: the run queue covered most of a blip, its detecting step 17 %, and it was named `unknown`): rank 0
// works 4.5 ms more from step 300, 4.4 ms of it behind the run queue for 9 steps and 0.8 ms after, the rest in
// no class. Detected from step 310, where the step alone names nothing; the run names cpu_contention.
TEST(OnlineDetector, TheCauseIsNamedFromTheLateRunNotTheDetectingStepAlone) {
  std::mt19937 rng(10);
  std::normal_distribution<double> jitter(0, 0.00005);
  OnlineDetector det;
  std::vector<Detection> all;
  for (int64_t s = 0; s < 330; ++s) {
    const bool slow = s >= 300;
    std::vector<RankStepSummary> step;
    for (int r = 0; r < 2; ++r) {
      RankStepSummary x;
      x.rank = r;
      x.step = s;
      x.step_s = 0.064 + (slow ? 0.0045 : 0);
      x.oncpu_s = 0.0604 + jitter(rng);
      x.wait_s = x.step_s - x.oncpu_s - (r == 0 && slow ? 0.0045 : 0);
      if (r == 0 && slow) x.runq_s = s < 309 ? 0.0044 : 0.0008;
      step.push_back(x);
    }
    auto opened = det.AddStep(s, step, static_cast<double>(s));
    all.insert(all.end(), opened.begin(), opened.end());
  }
  ASSERT_EQ(all.size(), 1u);
  const Detection& d = all[0];
  EXPECT_EQ(d.rank, 0);
  ASSERT_GE(d.step, 310) << "the detecting step shows 0.8 ms of run queue in 4.5 ms (18 %)";
  EXPECT_EQ(d.cause, diagnosis::Cause::kCpuContention);
  const double steps = static_cast<double>(d.step - 300 + 1);
  EXPECT_NEAR(d.excess_s, (9 * 0.0044 + (steps - 9) * 0.0008) / steps, 1e-5) << "per late step of the run";
  EXPECT_NEAR(d.late_s, 0.0045, 1e-4);
  EXPECT_DOUBLE_EQ(d.confidence, d.explained);
  EXPECT_NEAR(d.confidence, d.excess_s / d.late_s, 1e-3);
}

TEST(OnlineDetector, ADetectionClosesWhenTheRankIsOnTimeAgain) {
  std::mt19937 rng(5);
  OnlineDetector det;
  for (int64_t s = 0; s < 10; ++s) det.AddStep(s, Step(s, 8, 2, 0.01, rng), 0);
  ASSERT_EQ(det.open().size(), 1u);
  for (int64_t s = 10; s < 14; ++s) det.AddStep(s, Step(s, 8, -1, 0, rng), 0);
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

// One step of 8 ranks (100 ms steps, own work 60 ms ± jitter) where rank 3 works `late_s` longer, of which
// `gc_s` in GC pauses and `oncpu_s` more on CPU (the rest in no class of the summary).
std::vector<RankStepSummary> SplitStep(int64_t step, double late_s, double gc_s, double oncpu_s, std::mt19937& rng) {
  std::normal_distribution<double> jitter(0, 0.0002);
  std::vector<RankStepSummary> out;
  for (int r = 0; r < 8; ++r) {
    RankStepSummary s;
    s.rank = r;
    s.step = step;
    s.step_s = 0.1 + late_s;
    const double work = 0.06 + jitter(rng);
    s.oncpu_s = work + (r == 3 ? oncpu_s : 0);
    s.gc_s = r == 3 ? gc_s : 0;
    s.wait_s = s.step_s - work - (r == 3 ? late_s : 0);
    out.push_back(s);
  }
  return out;
}

std::vector<Detection> DetectSplit(double late_s, double gc_s, double oncpu_s, uint32_t seed) {
  std::mt19937 rng(seed);
  OnlineDetector det;
  std::vector<Detection> all;
  for (int64_t s = 0; s < 6; ++s) {
    auto opened = det.AddStep(s, SplitStep(s, late_s, gc_s, oncpu_s, rng), 0);
    all.insert(all.end(), opened.begin(), opened.end());
  }
  return all;
}

// 20 ms late, 15 ms of it in GC (4 ms more on CPU): gc_pause, at the share GC covers, about 0.75.
TEST(OnlineDetector, ConfidenceIsTheShareOfTheLatenessTheNamedClassCovers) {
  const std::vector<Detection> all = DetectSplit(0.02, 0.015, 0.004, 8);
  ASSERT_EQ(all.size(), 1u);
  const Detection& d = all[0];
  EXPECT_EQ(d.rank, 3);
  EXPECT_EQ(d.cause, diagnosis::Cause::kGcPause);
  EXPECT_NEAR(d.excess_s, 0.015, 1e-9) << "the peers have no GC time";
  EXPECT_DOUBLE_EQ(d.confidence, d.excess_s / d.late_s);
  EXPECT_DOUBLE_EQ(d.explained, d.confidence);
  EXPECT_NEAR(d.confidence, 0.75, 0.03);
  EXPECT_GE(d.confidence, diagnosis::thresholds::kMinExplainedShare);
}

// 20 ms late, but its largest class (8 ms of GC) covers under half: no cause named, confidence 0, the
// share still reported.
TEST(OnlineDetector, EvidenceUnderHalfTheLatenessNamesNoCauseAndConfidenceZero) {
  const std::vector<Detection> all = DetectSplit(0.02, 0.008, 0.006, 9);
  ASSERT_EQ(all.size(), 1u);
  const Detection& d = all[0];
  EXPECT_EQ(d.rank, 3);
  EXPECT_EQ(d.cause, diagnosis::Cause::kUnknown);
  EXPECT_EQ(d.confidence, 0.0);
  EXPECT_NEAR(d.excess_s, 0.008, 1e-9);
  EXPECT_NEAR(d.explained, 0.4, 0.03);
}

}  // namespace
}  // namespace strata::online
