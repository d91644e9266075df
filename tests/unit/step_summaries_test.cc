// The online per-rank step summaries (analysis/online/step_summaries.h) from a constructed recording of a two-rank
// job with no profiler: rank 1 is preempted by a process outside the job for 10 ms of each step's compute,
// rank 0 pauses 5 ms per step in Python's GC. The summaries carry those as run-queue and GC time (from the
// recording, as the cross-layer pass measures them), each counted in one class only; every step carries its
// start on the wall clock; a step is emitted once across rounds.
#include <gtest/gtest.h>

#ifdef STRATA_HAVE_RECORDER

#include <map>

#include "analysis/online/step_summaries.h"
#include "importers/recording_trace.h"

namespace strata::online {
namespace {

constexpr uint64_t kMs = 1'000'000;
constexpr int64_t kRealtimeOffsetNs = 1'700'000'000LL * 1'000'000'000LL;
constexpr uint32_t kOtherPid = 999;

// Rank r (pid 100 + 10 r, gloo worker thread pid + 1): 30 ms on the CPU per 100 ms step (rank 1 also
// waits 10 ms runnable while pid 999 holds its CPU, so it arrives at 40 ms), then the gradient all_reduce
// (until the last rank arrives) and the loss all_reduce.
RecordedRun Recording(int steps) {
  RecordedSegment seg;
  seg.data.path = "run/record-host-1.sseg";
  seg.data.header.realtime_minus_monotonic_ns = kRealtimeOffsetNs;
  seg.probes.push_back(
      {"gloo::allreduce(gloo::AllreduceOptions const&)", "all_reduce", ProbeKind::kCollective, "libgloo.so"});
  seg.sample_hz = 100;
  seg.other_processes[static_cast<int>(kOtherPid)] = "stress";
  for (int r = 0; r < 2; ++r) {
    const auto pid = static_cast<uint32_t>(100 + 10 * r);
    seg.processes[static_cast<int>(pid)] = {static_cast<int>(pid), 1, r, "python3", "", 0, 0};
    const uint64_t arrive = r == 0 ? 30 : 40;
    for (int s = 1; s <= steps; ++s) {
      const uint64_t t0 = static_cast<uint64_t>(s) * 100;
      if (r == 1)  // preempted at 10 ms by pid 999, runnable until it gets the CPU back at 20 ms
        seg.data.off_cpu.push_back(
            {pid, pid, (t0 + 10) * kMs, (t0 + 20) * kMs, 10 * kMs, 0, kOtherPid, kOtherPid, 0, 0});
      else
        seg.data.gcs.push_back({pid, pid, (t0 + 5) * kMs, (t0 + 10) * kMs, 2, 100});
      seg.data.off_cpu.push_back({pid, pid, (t0 + arrive) * kMs, (t0 + 100) * kMs, 0, 1, 0, 0, 0, 0});
      seg.data.calls.push_back({pid + 1, pid, 0, (t0 + arrive) * kMs, (t0 + 41) * kMs});
      seg.data.calls.push_back({pid + 1, pid, 0, (t0 + 43) * kMs, (t0 + 44) * kMs});
    }
  }
  RecordedRun run;
  run.segments.push_back(std::move(seg));
  return run;
}

std::map<int, std::vector<online::RankStepSummary>> ByRank(const std::vector<online::RankStepSummary>& all) {
  std::map<int, std::vector<online::RankStepSummary>> out;
  for (const auto& s : all) out[s.rank].push_back(s);
  return out;
}

TEST(StepSummaries, RunQueueAndGcTimeComeFromTheRecordingInOneClassEach) {
  const RecordedRun run = Recording(12);
  auto store = TraceStoreFromRecording(run);
  ASSERT_TRUE(store.ok()) << store.error();
  StepCursor cursor;
  const auto by_rank = ByRank(SummarizeNewSteps(store.value(), &cursor));
  ASSERT_EQ(by_rank.size(), 2u);
  ASSERT_GE(by_rank.at(0).size(), 6u);
  ASSERT_EQ(by_rank.at(0).size(), by_rank.at(1).size());
  for (size_t i = 0; i < by_rank.at(0).size(); ++i) {
    const online::RankStepSummary &r0 = by_rank.at(0)[i], &r1 = by_rank.at(1)[i];
    ASSERT_EQ(r0.step, r1.step);
    EXPECT_EQ(r0.step, static_cast<int64_t>(i));
    EXPECT_NEAR(r1.runq_s, 0.010, 0.001) << "step " << i << ": rank 1 waited 10 ms behind pid 999";
    EXPECT_NEAR(r0.runq_s, 0.0, 1e-9);
    EXPECT_NEAR(r0.gc_s, 0.005, 0.001) << "step " << i << ": rank 0's GC pause";
    EXPECT_NEAR(r1.gc_s, 0.0, 1e-9);
    // Both computed 30 ms on the CPU: rank 0's GC is taken out of its on-CPU time, and rank 1's wait in the
    // run queue is not also off the CPU "for another reason".
    EXPECT_NEAR(r0.oncpu_s + r0.gc_s, r1.oncpu_s, 0.002) << "step " << i;
    EXPECT_LE(r1.offcpu_other_s, r0.offcpu_other_s + 0.001) << "step " << i;
    EXPECT_NEAR(r0.start_unix, r1.start_unix, 0.005);
    EXPECT_GT(r0.start_unix, 1.7e9);
    EXPECT_LT(r0.start_unix, 1.7e9 + 2);
  }
  // A later round over the same recording emits nothing it already did.
  EXPECT_TRUE(SummarizeNewSteps(store.value(), &cursor).empty());
}

}  // namespace
}  // namespace strata::online

#endif  // STRATA_HAVE_RECORDER
