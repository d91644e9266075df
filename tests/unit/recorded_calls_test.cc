// The one decoder of a recording's collective calls (importers/recorded_calls.h) on constructed segments:
// each probe's source (the NCCL plugin's states, c10d's methods by symbol, gloo's algorithms, NCCL's API),
// probes that are no collective's left out, c10d calls before the attach left out, returns and gloo's bytes
// on their call, times on the Unix clock, the processes' exits and ranks, the world size and the end.
#include <gtest/gtest.h>

#include "importers/recorded_calls.h"

namespace strata {
namespace {

constexpr uint64_t kMs = 1'000'000;
constexpr int64_t kOffset = 1'700'000'000'000'000'000;  // the segment's realtime - monotonic

RecordedSegment Job() {
  RecordedSegment seg;
  seg.data.header.realtime_minus_monotonic_ns = kOffset;
  seg.processes[10] = {10, 1, 0, "python3", "", 0, 0};
  seg.processes[20] = {20, 1, 1, "python3", "", 0, 0};
  seg.processes[30] = {30, 1, std::nullopt, "launcher", "", 0, 0};
  seg.processes[10].world_size = 2;
  seg.probes.push_back(
      {"c10d::ProcessGroupGloo::allreduce", "all_reduce", ProbeKind::kCollectiveEnqueue, "libtorch_cpu.so"});  // 0
  seg.probes.push_back({"gloo::allreduce", "all_reduce", ProbeKind::kCollective, "libgloo.so"});               // 1
  seg.probes.push_back({"ncclAllReduce", "all_reduce", ProbeKind::kCollectiveEnqueue, "libnccl.so"});
  seg.probes.push_back({"gloo::Context::createUnboundBuffer(void*, unsigned long)", "buffer",
                        ProbeKind::kCollectiveBuffer, "libgloo.so"});  // 3
  return seg;
}

RecordedCollectiveCalls Decode(const RecordedSegment& seg) {
  RecordedRun run;
  run.segments.push_back(seg);
  return DecodeRecordedCalls(run);
}

TEST(RecordedCalls, SourcesReturnsBytesAndUnixTimes) {
  RecordedSegment seg = Job();
  seg.attached_ns = 50 * kMs;
  // {tid, tgid, probe, ts, comm, count}
  seg.data.call_enters.push_back({10, 10, 0, 40 * kMs, 7, 0});        // c10d before the attach: left out
  seg.data.call_enters.push_back({10, 10, 0, 100 * kMs, 7, 0});       // c10d
  seg.data.call_enters.push_back({11, 10, 3, 100 * kMs + 10, 0, 4});  // gloo's buffer of 4 bytes: no call
  seg.data.call_enters.push_back({11, 10, 1, 100 * kMs + 20, 0, 0});  // its algorithm
  seg.data.call_enters.push_back({10, 10, 2, 90 * kMs, 9, 512});      // NCCL's API, earlier: sorted first
  seg.data.calls.push_back({11, 10, 1, 100 * kMs + 20, 130 * kMs});   // the algorithm returned
  seg.data.call_enters.push_back({11, 10, 3, 200 * kMs + 10, 0, 4});  // the next algorithm's buffer
  seg.data.call_enters.push_back({11, 10, 1, 200 * kMs + 20, 0, 0});
  seg.data.call_enters.push_back({30, 30, 0, 100 * kMs, 7, 0});  // the launcher: no rank
  const RecordedCollectiveCalls d = Decode(seg);
  ASSERT_EQ(d.processes.size(), 1u);
  const RecordedRankCalls& p = d.processes[0];
  EXPECT_EQ(p.rank, 0);
  EXPECT_EQ(p.pid, 10u);
  ASSERT_EQ(p.calls.size(), 4u);
  EXPECT_EQ(p.calls[0].source, RecordedCallSource::kNcclApi);
  EXPECT_EQ(p.calls[0].count, 512u);
  EXPECT_EQ(p.calls[0].comm, 9u);
  EXPECT_EQ(p.calls[0].entered_unix_ns, kOffset + static_cast<int64_t>(90 * kMs));
  EXPECT_EQ(p.calls[0].returned_unix_ns, 0);
  EXPECT_EQ(p.calls[1].source, RecordedCallSource::kC10d);
  EXPECT_EQ(p.calls[1].op, "all_reduce");
  EXPECT_EQ(p.calls[2].source, RecordedCallSource::kAlgorithm);
  EXPECT_EQ(p.calls[2].tid, 11u);
  EXPECT_EQ(p.calls[2].returned_unix_ns, kOffset + static_cast<int64_t>(130 * kMs));
  // A thread's first algorithm in what was read gets 0 bytes (its buffers may predate the recording).
  EXPECT_EQ(p.calls[2].bytes, 0u);
  EXPECT_EQ(p.calls[3].bytes, 4u);
  EXPECT_EQ(p.calls[3].returned_unix_ns, 0);  // still inside
}

TEST(RecordedCalls, PluginStatesExitsRanksWorldSizeAndEnd) {
  RecordedSegment seg = Job();
  seg.launched = true;
  seg.end_ns = 900 * kMs;
  seg.probes.push_back({"plugin", "all_gather", ProbeKind::kCollectiveDeviceEnqueue, "plugin"});  // 4
  seg.probes.push_back({"plugin", "all_gather", ProbeKind::kCollectiveDeviceStart, "plugin"});    // 5
  seg.probes.push_back({"plugin", "all_gather", ProbeKind::kCollectiveDeviceDone, "plugin"});     // 6
  seg.communicators.push_back({0xabc, 4, 1, 20});
  seg.processes[20].exited_ns = 500 * kMs;
  seg.processes[20].exit_signal = 9;
  seg.data.call_enters.push_back({20, 20, 4, 100 * kMs, 0xabc, 8});
  seg.data.call_enters.push_back({20, 20, 5, 101 * kMs, 0xabc, 0});
  seg.data.call_enters.push_back({20, 20, 6, 102 * kMs, 0xabc, 0});
  const RecordedCollectiveCalls d = Decode(seg);
  ASSERT_EQ(d.processes.size(), 1u);
  const RecordedRankCalls& p = d.processes[0];
  EXPECT_EQ(p.rank, 1);
  EXPECT_TRUE(p.launched);
  ASSERT_EQ(p.calls.size(), 3u);
  EXPECT_EQ(p.calls[0].source, RecordedCallSource::kPluginEnqueue);
  EXPECT_EQ(p.calls[1].source, RecordedCallSource::kPluginStart);
  EXPECT_EQ(p.calls[2].source, RecordedCallSource::kPluginDone);
  EXPECT_EQ(p.calls[0].comm, 0xabcu);
  ASSERT_TRUE(p.exited_unix_ns);
  EXPECT_EQ(*p.exited_unix_ns, kOffset + static_cast<int64_t>(500 * kMs));
  EXPECT_EQ(p.exit_signal, 9);
  EXPECT_FALSE(p.exit_code);
  EXPECT_EQ(p.segment_end_unix_ns, kOffset + static_cast<int64_t>(900 * kMs));
  EXPECT_EQ(d.end_unix_ns, p.segment_end_unix_ns);
  EXPECT_EQ(d.ranks_seen, (std::set<int32_t>{0, 1}));  // rank 0 has a process but no call
  EXPECT_EQ(d.world_size, 4);                          // the plugin's communicator beats WORLD_SIZE=2
  EXPECT_EQ(d.segments, 1u);
}

TEST(RecordedCalls, EmptyRecording) {
  const RecordedCollectiveCalls d = DecodeRecordedCalls(RecordedRun{});
  EXPECT_TRUE(d.processes.empty());
  EXPECT_EQ(d.end_unix_ns, 0);
  EXPECT_EQ(d.segments, 0u);
  EXPECT_FALSE(d.world_size);
}

}  // namespace
}  // namespace strata
