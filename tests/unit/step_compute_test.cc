// A CPU trace's compute per step: each step's length less the time of CPU collectives inside it.
#include "analysis/step_compute.h"

#include <gtest/gtest.h>

#include <string>

namespace strata {
namespace {

constexpr int64_t ms = 1000000;

TraceStore OneRank() {
  TraceStore s;
  s.inputs.emplace_back();
  s.ranks.emplace_back();
  s.tracks.push_back(Track{0, TrackKind::kCpuThread, 1, 1, -1, StringId()});
  return s;
}

void Add(TraceStore* s, const std::string& name, int64_t ts, int64_t dur) {
  s->slices.append(ts, dur, s->strings.intern(name), StringId(), TrackId(0), kNoCorrelation, kSliceComplete);
}

SliceRows All(const TraceStore& s) {
  SliceRows rows;
  for (uint32_t i = 0; i < s.slices.size(); ++i) rows.push_back(SliceId(i));
  return rows;
}

TEST(StepCompute, StepLengthLessCollectivesInsideIt) {
  TraceStore s = OneRank();
  Add(&s, "ProfilerStep#1", 0, 100 * ms);
  Add(&s, "gloo:all_reduce", 60 * ms, 30 * ms);  // 30 ms waiting
  Add(&s, "aten::mm", 10 * ms, 40 * ms);         // compute: not subtracted
  Add(&s, "ProfilerStep#2", 100 * ms, 100 * ms);
  Add(&s, "gloo:all_reduce", 150 * ms, 20 * ms);
  Add(&s, "gloo:broadcast", 160 * ms, 60 * ms);  // overlaps the previous; runs 20 ms past the step's end
  const std::optional<double> c = CpuComputePerStepMs(s, All(s));
  ASSERT_TRUE(c.has_value());
  EXPECT_DOUBLE_EQ(*c, (70.0 + 50.0) / 2);  // step 2: [150, 200) inside it
}

TEST(StepCompute, NoneWithoutSteps) {
  TraceStore s = OneRank();
  Add(&s, "gloo:all_reduce", 0, 10 * ms);
  EXPECT_FALSE(CpuComputePerStepMs(s, All(s)).has_value());
}

}  // namespace
}  // namespace strata
