// CollectiveTracker (the NCCL profiler plugin's ABI-independent core): one record per collective with
// its device span, whatever order NCCL stops the collective and its kernel channels in.
#include "recorder/nccl_profiler/collective_tracker.h"

#include <gtest/gtest.h>

#include <vector>

namespace strata::nccl_profiler {
namespace {

struct Collected {
  std::vector<CompletedCollective> records;
  CollectiveTracker tracker{[this](const CompletedCollective& c) { records.push_back(c); }};
};

TEST(NcclCollectiveTracker, SpanIsEarliestChannelStartToLatestStopInEitherOrder) {
  for (bool coll_first : {true, false}) {
    Collected c;
    void* coll = c.tracker.StartCollective("AllReduce", 7, 1024, 11, 500, true);
    void* a = c.tracker.StartChannel(coll, 2000);
    void* b = c.tracker.StartChannel(coll, 1500);
    ASSERT_NE(a, nullptr);
    if (coll_first) c.tracker.Stop(coll);
    c.tracker.ChannelStopped(a, 9000);
    c.tracker.Stop(a);
    EXPECT_TRUE(c.records.empty()) << "reported before its last channel stopped";
    c.tracker.ChannelStopped(b, 8000);
    c.tracker.Stop(b);
    if (!coll_first) {
      EXPECT_TRUE(c.records.empty()) << "reported before the collective itself stopped";
      c.tracker.Stop(coll);
    }
    ASSERT_EQ(c.records.size(), 1u);
    const CompletedCollective& r = c.records[0];
    EXPECT_EQ(r.op, "all_reduce");
    EXPECT_EQ(r.seq, 7u);
    EXPECT_EQ(r.count, 1024u);
    EXPECT_EQ(r.tid, 11u);
    EXPECT_EQ(r.start_ns, 1500u);
    EXPECT_EQ(r.end_ns, 9000u);
    EXPECT_TRUE(r.device_clock);
    EXPECT_EQ(c.tracker.stats().completed, 1u);
  }
}

TEST(NcclCollectiveTracker, NoDeviceTimeIsCountedNotInvented) {
  Collected c;
  void* coll = c.tracker.StartCollective("AllGather", 1, 1, 1, 500, true);
  c.tracker.Stop(coll);  // no kernel channel ever reported
  void* coll2 = c.tracker.StartCollective("AllGather", 2, 1, 1, 600, true);
  void* ch = c.tracker.StartChannel(coll2, 700);
  c.tracker.Stop(ch);  // started, never reported a stop time
  c.tracker.Stop(coll2);
  EXPECT_TRUE(c.records.empty());
  EXPECT_EQ(c.tracker.stats().without_device_time, 2u);
}

TEST(NcclCollectiveTracker, HostTimesForV3AndOrphans) {
  Collected c;
  void* coll = c.tracker.StartCollective("ReduceScatter", 3, 8, 2, 100, false);
  void* ch = c.tracker.StartChannel(coll, 150);
  c.tracker.Stop(ch, 400);  // v3: the channel's stop is the host time at stopEvent
  c.tracker.Stop(coll, 999);
  ASSERT_EQ(c.records.size(), 1u);
  EXPECT_EQ(c.records[0].op, "reduce_scatter");
  EXPECT_EQ(c.records[0].start_ns, 150u);
  EXPECT_EQ(c.records[0].end_ns, 400u);
  EXPECT_FALSE(c.records[0].device_clock);
  EXPECT_EQ(c.tracker.StartChannel(nullptr, 5), nullptr);
  EXPECT_EQ(c.tracker.stats().orphan_channels, 1u);
  c.tracker.Stop(nullptr);  // NCCL stopping an event the plugin gave no handle for
}

TEST(NcclCollectiveTracker, SnakeCaseOp) {
  EXPECT_EQ(SnakeCaseOp("AllReduce"), "all_reduce");
  EXPECT_EQ(SnakeCaseOp("Broadcast"), "broadcast");
  EXPECT_EQ(SnakeCaseOp("SendRecv"), "send_recv");
  EXPECT_EQ(SnakeCaseOp(""), "unknown");
  EXPECT_EQ(SnakeCaseOp("\x1b[2K"), "2_k");
}

}  // namespace
}  // namespace strata::nccl_profiler
