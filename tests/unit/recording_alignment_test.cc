// Putting a recording on a rank's trace clock by matching collectives: the trace holds a run of the
// recorded calls (its active steps), offsets are recovered within jitter, and inconsistent matches are
// refused.
#include <gtest/gtest.h>

#include "importers/recorded_layers.h"
#include "model/recording_alignment.h"

namespace strata::model {
namespace {

constexpr int64_t kMs = 1'000'000;

RecordedSegment RecordedCalls(const std::vector<int64_t>& ends_ms, ProbeKind kind) {
  RecordedSegment seg;
  seg.processes[10] = {10, 1, 0, "python3", "", 0, 0};
  seg.processes[11] = {11, 1, 1, "python3", "", 0, 0};
  seg.probes.push_back({"gloo::allreduce", "all_reduce", kind, "libgloo.so"});
  for (int64_t end : ends_ms) {
    seg.data.calls.push_back({12, 10, 0, static_cast<uint64_t>((end - 3) * kMs), static_cast<uint64_t>(end * kMs)});
    seg.data.calls.push_back({13, 11, 0, 1, 2});  // rank 1's calls are not rank 0's
  }
  return seg;
}

// The rank's collective calls as the recording's decoded layers hold them (none for a rank not recorded).
RecordedCollectiveTimes CallsOf(const RecordedSegment& seg, int32_t rank) {
  RecordedRun run;
  run.segments.push_back(seg);
  const RecordedLayers layers = DecodeRecordedLayers(run);
  auto r = layers.segments[0].ranks.find(rank);
  return r == layers.segments[0].ranks.end() ? RecordedCollectiveTimes{} : r->second.collectives;
}

TEST(RecordingAlignment, FindsTheShiftAndOffsetOfTheProfiledSteps) {
  // 11 steps with two all_reduces each (irregular spacing); the trace profiled steps 5..10.
  // Step times vary a few ms, as in real runs.
  const int64_t step_ms[11] = {97, 101, 95, 99, 104, 96, 98, 93, 102, 100, 97};
  std::vector<int64_t> ends;
  int64_t t = 1000;
  for (int step = 0; step < 11; ++step) {
    ends.push_back(t + 40);
    ends.push_back(t + 80 + step % 2);
    t += step_ms[step];
  }
  const RecordedSegment seg = RecordedCalls(ends, ProbeKind::kCollective);
  std::vector<std::pair<int64_t, int64_t>> trace;
  const int64_t offset = -987'654 * kMs;  // the trace clock starts near 0
  for (size_t i = 10; i < ends.size(); ++i) {
    const int64_t jitter = (i % 2 ? 20'000 : -15'000);  // tens of microseconds
    trace.emplace_back(ends[i] * kMs + offset - 2 * kMs, ends[i] * kMs + offset + jitter);
  }
  auto a = AlignRecording(CallsOf(seg, 0), trace);
  ASSERT_TRUE(a.has_value());
  EXPECT_NEAR(static_cast<double>(a->trace_minus_recorded_ns), static_cast<double>(offset), 20'000.0);
  EXPECT_EQ(a->matched, trace.size());
  EXPECT_LE(a->spread_ns, 35'000);
}

// 18 profiled calls of an irregular loop (two per step), `late` of them stamped by the profiler `late_ms` after
// the recorder saw them return (the thread preempted in between): the recorded calls and the trace.
std::pair<RecordedSegment, std::vector<std::pair<int64_t, int64_t>>> PreemptedCalls(size_t late, int64_t late_ms,
                                                                                    int64_t offset) {
  std::vector<int64_t> ends;
  int64_t t = 1000;
  for (int step = 0; step < 12; ++step) {
    ends.push_back(t + 40 + step % 3);
    ends.push_back(t + 80);
    t += 95 + (step * 7) % 11;
  }
  std::vector<std::pair<int64_t, int64_t>> trace;
  for (size_t i = 6; i < ends.size(); ++i) {
    const int64_t stamp_late = (i - 6) % 6 == 1 && (i - 6) / 6 < late ? late_ms * kMs : 0;
    trace.emplace_back(ends[i] * kMs + offset - 2 * kMs, ends[i] * kMs + offset + stamp_late);
  }
  return {RecordedCalls(ends, ProbeKind::kCollective), trace};
}

TEST(RecordingAlignment, TakesAMatchWithAFewPreemptedCalls) {
  // 3 of 18 pairs off by 5 ms (15 of 18 agree: 83 %); every other shift is far worse.
  const int64_t offset = -12'345 * kMs;
  const auto [seg, trace] = PreemptedCalls(3, 5, offset);
  auto a = AlignRecording(CallsOf(seg, 0), trace);
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->trace_minus_recorded_ns, offset);
  EXPECT_EQ(a->matched, 18u);
}

TEST(RecordingAlignment, RefusesAMatchWhereUnderThreeQuartersAgree) {
  // A third of the pairs off by 5 ms: the best offset holds 12 of 18 (67 %), under three quarters.
  const auto [seg, trace] = PreemptedCalls(0, 0, 0);
  auto shifted = trace;
  for (size_t i = 0; i < shifted.size(); i += 3) shifted[i].second += 5 * kMs;
  EXPECT_FALSE(AlignRecording(CallsOf(seg, 0), shifted).has_value());
}

TEST(RecordingAlignment, RefusesAPerfectlyRegularLoop) {
  std::vector<int64_t> ends;
  for (int step = 0; step < 10; ++step) ends.push_back(1000 + step * 100);
  const RecordedSegment seg = RecordedCalls(ends, ProbeKind::kCollective);
  std::vector<std::pair<int64_t, int64_t>> trace;
  for (size_t i = 4; i < 8; ++i) trace.emplace_back(0, ends[i] * kMs - 77 * kMs);
  EXPECT_FALSE(AlignRecording(CallsOf(seg, 0), trace).has_value());  // every shift by whole steps fits
}

TEST(RecordingAlignment, RefusesWhatDoesNotMatch) {
  const RecordedSegment seg = RecordedCalls({100, 200, 300, 400, 500, 600}, ProbeKind::kCollective);
  // Spacing unlike any run of the recorded calls.
  std::vector<std::pair<int64_t, int64_t>> trace = {{0, 5 * kMs}, {0, 70 * kMs}, {0, 71 * kMs}, {0, 300 * kMs}};
  EXPECT_FALSE(AlignRecording(CallsOf(seg, 0), trace).has_value());
  EXPECT_FALSE(AlignRecording(CallsOf(seg, 0), {{0, 1}}).has_value());          // too few
  EXPECT_FALSE(AlignRecording(CallsOf(seg, 7), {{0, 1}, {2, 3}}).has_value());  // rank not recorded
}

TEST(RecordingAlignment, EnqueueOnlyCallsAreMatchedOnStarts) {
  const RecordedSegment seg = RecordedCalls({100, 250, 330, 480, 600}, ProbeKind::kCollectiveEnqueue);
  std::vector<std::pair<int64_t, int64_t>> trace;
  for (int64_t end : {250, 330, 480}) trace.emplace_back((end - 3) * kMs + 5 * kMs, end * kMs + 40 * kMs);
  auto a = AlignRecording(CallsOf(seg, 0), trace);
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->trace_minus_recorded_ns, 5 * kMs);
}

}  // namespace
}  // namespace strata::model
