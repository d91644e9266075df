// Step rhythm (model/step_rhythm.h): where steps begin in a sequence of same-named collective calls.
#include "model/step_rhythm.h"

#include <gtest/gtest.h>

#include <random>

namespace strata::model {
namespace {

// `steps` steps of: a long host stretch, then `burst` calls separated by short gaps; `lead` extra calls
// (initial broadcasts) first. Times in µs with jitter.
std::vector<std::pair<int64_t, int64_t>> Job(size_t steps, size_t burst, size_t lead, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> jitter(0, 400);
  std::vector<std::pair<int64_t, int64_t>> calls;
  int64_t t = 0;
  for (size_t i = 0; i < lead; ++i, t += 20000) calls.emplace_back(t, t + 500);
  for (size_t s = 0; s < steps; ++s) {
    t += 30000 + jitter(rng);  // forward, most of the backward
    for (size_t c = 0; c < burst; ++c) {
      calls.emplace_back(t, t + 800 + jitter(rng));
      t = calls.back().second + 1500 + jitter(rng);  // optimizer step, next bucket
    }
  }
  return calls;
}

TEST(StepRhythm, FindsTwoCallsPerStepOfOneName) {
  const Rhythm r = DetectRhythm(Job(10, 2, 0, 1));
  EXPECT_EQ(r.period, 2u);
  EXPECT_EQ(r.first, 2u);  // call 0 has no gap before it: the first whole step opens at call 2
}

TEST(StepRhythm, LeadingCallsShiftThePhase) {
  const Rhythm r = DetectRhythm(Job(12, 3, 1, 2));
  EXPECT_EQ(r.period, 3u);
  EXPECT_EQ(r.first % 3, 1u);  // steps open after the lone initial call
}

TEST(StepRhythm, OneCallPerStepWhenSpacedRegularly) {
  const Rhythm r = DetectRhythm(Job(10, 1, 0, 3));
  EXPECT_EQ(r.period, 1u);
}

TEST(StepRhythm, NoRhythmInIrregularCalls) {
  std::mt19937 rng(4);
  std::uniform_int_distribution<int> gap(100, 100000);
  std::vector<std::pair<int64_t, int64_t>> calls;
  int64_t t = 0;
  for (int i = 0; i < 40; ++i, t += gap(rng)) calls.emplace_back(t, t + 100);
  EXPECT_EQ(DetectRhythm(calls).period, 0u);
}

TEST(StepRhythm, TooFewStepsIsNoRhythm) {
  EXPECT_EQ(DetectRhythm(Job(2, 2, 0, 5)).period, 0u);
  EXPECT_EQ(DetectRhythm({}).period, 0u);
}

}  // namespace
}  // namespace strata::model
