// The one decoder of a recording's layers (importers/recorded_layers.h) on constructed segments: the rank's
// main thread only, who held its CPU (a process outside the job, none on an idle CPU, never the recorder or
// the job's own processes), uninterruptible sleeps before the run-queue part, every thread's GC, counters by
// name, the training window from collective calls (else the processes' lives), link series only when each
// rank has a namespace of its own, and the agent's slice from a time on.
#include <gtest/gtest.h>

#include "importers/recorded_layers.h"

namespace strata {
namespace {

constexpr uint64_t kMs = 1'000'000;

// Ranks 0 (pids 10, worker 11) and 1 (pid 20); the recorder is pid 5, "stress" pid 99 runs beside them.
RecordedSegment Job() {
  RecordedSegment seg;
  seg.processes[10] = {10, 1, 0, "python3", "", 0, 0};
  seg.processes[11] = {11, 10, 0, "pt_data_worker", "", 0, 0};
  seg.processes[20] = {20, 1, 1, "python3", "", 0, 0};
  seg.recorder_pid = 5;
  seg.other_processes[99] = "stress";
  seg.probes.push_back({"gloo::allreduce", "all_reduce", ProbeKind::kCollective, "libgloo.so"});
  seg.data.calls.push_back({10, 10, 0, 100 * kMs, 110 * kMs});
  seg.data.calls.push_back({10, 10, 0, 900 * kMs, 950 * kMs});
  return seg;
}

RecordedLayerSegment Decode(const RecordedSegment& seg) {
  RecordedRun run;
  run.segments.push_back(seg);
  RecordedLayers layers = DecodeRecordedLayers(run);
  EXPECT_EQ(layers.segments.size(), 1u);
  return layers.segments.at(0);
}

TEST(RecordedLayers, RunQueueWaitsOfMainThreadsWithWhoHeldTheCpu) {
  RecordedSegment seg = Job();
  // {tid, tgid, start, end, runq, state, preempted_by, ran_before, waker, cpu}
  seg.data.off_cpu.push_back({10, 10, 200 * kMs, 230 * kMs, 30 * kMs, 0, 99, 99, 0, 0});   // preempted by stress
  seg.data.off_cpu.push_back({10, 10, 300 * kMs, 320 * kMs, 20 * kMs, 1, 0, 0, 0, 0});     // woke on an idle CPU
  seg.data.off_cpu.push_back({10, 10, 400 * kMs, 410 * kMs, 10 * kMs, 0, 5, 5, 0, 0});     // the recorder: not another
  seg.data.off_cpu.push_back({10, 10, 500 * kMs, 505 * kMs, 5 * kMs, 0, 11, 11, 0, 0});    // its own worker
  seg.data.off_cpu.push_back({12, 10, 600 * kMs, 700 * kMs, 100 * kMs, 0, 99, 99, 0, 0});  // a helper thread
  seg.data.off_cpu.push_back({30, 30, 600 * kMs, 700 * kMs, 100 * kMs, 0, 99, 99, 0, 0});  // no rank
  const RecordedLayerSegment d = Decode(seg);
  const RankLayers& r0 = d.ranks.at(0);
  ASSERT_EQ(r0.runq.size(), 4u);
  EXPECT_EQ(r0.runq[0].other_pid, 99u);
  EXPECT_EQ(r0.runq[0].start, 200 * kMs);
  EXPECT_EQ(r0.runq[0].end, 230 * kMs);
  EXPECT_EQ(r0.runq[1].other_pid, 0u);
  EXPECT_TRUE(r0.runq[1].idle_cpu);
  for (const RunQueueWait& w : r0.runq) EXPECT_FALSE(w.after_uninterruptible);  // preempted, or an ordinary sleep
  EXPECT_EQ(r0.runq[2].other_pid, 0u);
  EXPECT_FALSE(r0.runq[2].idle_cpu);
  EXPECT_EQ(r0.runq[3].other_pid, 0u);
  EXPECT_EQ(d.process_names.at(99), "stress");
  EXPECT_TRUE(d.ranks.at(1).runq.empty());
  EXPECT_EQ(d.ranks.size(), 2u);
}

TEST(RecordedLayers, UninterruptibleSleepEndsWhereTheRunQueueWaitBegins) {
  RecordedSegment seg = Job();
  seg.data.off_cpu.push_back({20, 20, 200 * kMs, 300 * kMs, 10 * kMs, 2, 0, 0, 0, 0});
  seg.data.gcs.push_back({21, 20, 400 * kMs, 450 * kMs, 2, 100});  // any thread's GC counts
  const RecordedLayerSegment d = Decode(seg);
  const RankLayers& r1 = d.ranks.at(1);
  ASSERT_EQ(r1.dstate.size(), 1u);
  EXPECT_EQ(r1.dstate[0].start, 200 * kMs);
  EXPECT_EQ(r1.dstate[0].end, 290 * kMs);
  ASSERT_EQ(r1.runq.size(), 1u);
  EXPECT_EQ(r1.runq[0].start, 290 * kMs);
  EXPECT_TRUE(r1.runq[0].after_uninterruptible);  // it woke from the sleep into this wait
  ASSERT_EQ(r1.gcs.size(), 1u);
  EXPECT_EQ(r1.gcs[0].end, 450 * kMs);
}

TEST(RecordedLayers, TrainingWindowFromCollectivesElseLifetimes) {
  RecordedSegment seg = Job();
  seg.processes[20].first_seen_ns = 50 * kMs;
  seg.processes[20].exited_ns = 800 * kMs;
  const RecordedLayerSegment d = Decode(seg);
  EXPECT_EQ(d.ranks.at(0).training.start, 100 * kMs);
  EXPECT_EQ(d.ranks.at(0).training.end, 950 * kMs);
  EXPECT_EQ(d.ranks.at(0).collectives.blocking_ends, (std::vector<int64_t>{110 * kMs, 950 * kMs}));
  EXPECT_EQ(d.ranks.at(1).training.start, 50 * kMs);
  EXPECT_EQ(d.ranks.at(1).training.end, 800 * kMs);
  EXPECT_TRUE(d.ranks.at(1).collectives.blocking_ends.empty());
}

TEST(RecordedLayers, CountersByNameAndLinksOnlyInOwnNamespaces) {
  RecordedSegment seg = Job();
  auto series = [&](const std::string& name, int pid, const std::string& label, std::vector<double> values) {
    seg.series.push_back({name, pid, static_cast<int>(seg.series.size()), label, "", true});
    for (size_t i = 0; i < values.size(); ++i)
      seg.data.counters.push_back({(values.size() - i) * 100 * kMs, static_cast<uint32_t>(seg.series.size() - 1),
                                   values[values.size() - 1 - i]});
  };
  series("cgroup.cpu.throttled_ns", 10, "", {0, 5e6});
  series("proc.majflt", 11, "", {1, 2});
  series("proc.utime_ns", 10, "", {1, 2});  // not read
  series("net.ns_inode", 10, "", {7, 7});
  series("net.ns_inode", 20, "", {8, 8});
  series("net.rx_bytes", 10, "eth0", {0, 1e6});
  series("net.rx_bytes", 10, "lo", {0, 1e6});
  series("net.link_capacity_bps", 20, "eth0", {1e9, 1e9});
  RecordedLayerSegment d = Decode(seg);
  ASSERT_EQ(d.ranks.at(0).counters.size(), 2u);
  EXPECT_EQ(d.ranks.at(0).counters[0].counter, RankCounter::kCgroupThrottledNs);
  EXPECT_EQ(d.ranks.at(0).counters[1].counter, RankCounter::kMajorFaults);
  // Samples come sorted by time whatever the row order.
  EXPECT_LT(d.ranks.at(0).counters[0].points.front().first, d.ranks.at(0).counters[0].points.back().first);
  EXPECT_TRUE(d.own_namespaces);
  ASSERT_EQ(d.ranks.at(0).links.size(), 1u);  // lo is left out
  EXPECT_EQ(d.ranks.at(0).links[0].interface, "eth0");
  EXPECT_EQ(d.ranks.at(0).links[0].kind, LinkSeries::Kind::kRxBytes);
  ASSERT_EQ(d.ranks.at(1).links.size(), 1u);
  EXPECT_EQ(d.ranks.at(1).links[0].kind, LinkSeries::Kind::kCapacityBps);
  // Both ranks in one namespace: no link figures for either.
  seg.data.counters.push_back({300 * kMs, 4, 7});
  d = Decode(seg);
  EXPECT_FALSE(d.own_namespaces);
  EXPECT_TRUE(d.ranks.at(0).links.empty());
}

TEST(RecordedLayers, TheAgentsSliceKeepsWhatEndsFromItsStart) {
  RecordedSegment seg = Job();
  seg.data.off_cpu.push_back({10, 10, 200 * kMs, 230 * kMs, 30 * kMs, 0, 99, 99, 0, 0});
  seg.data.off_cpu.push_back({10, 10, 600 * kMs, 630 * kMs, 30 * kMs, 0, 99, 99, 0, 0});
  seg.series.push_back({"proc.majflt", 10, 0, "", "", true});
  for (uint64_t t = 0; t < 10; ++t) seg.data.counters.push_back({t * 100 * kMs, 0, static_cast<double>(t)});
  RecordedRun run;
  run.segments.push_back(seg);
  const RecordedLayers part = LayersFrom(DecodeRecordedLayers(run), 500 * kMs, 150 * kMs);
  const RankLayers& r0 = part.segments.at(0).ranks.at(0);
  ASSERT_EQ(r0.runq.size(), 1u);
  EXPECT_EQ(r0.runq[0].start, 600 * kMs);
  ASSERT_EQ(r0.counters.size(), 1u);
  EXPECT_EQ(r0.counters[0].points.front().first, 400 * kMs);  // from the margin before the start on
  EXPECT_EQ(r0.training.end, 950 * kMs);                      // kept whole
}

}  // namespace
}  // namespace strata
