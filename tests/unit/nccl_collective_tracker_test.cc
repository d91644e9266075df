// CollectiveTracker (the NCCL profiler plugin's ABI-independent core): one record per collective with
// its device span, whatever order NCCL stops the collective and its kernel channels in; its three states
// (enqueued, kernel started, done), each once and in order; and its per-communicator sequence number, which
// point-to-point operations do not advance.
#include "recorder/nccl_profiler/collective_tracker.h"

#include <gtest/gtest.h>

#include <utility>
#include <vector>

namespace strata::nccl_profiler {
namespace {

struct Collected {
  std::vector<CompletedCollective> records;
  std::vector<std::pair<CollectiveState, CompletedCollective>> states;
  CollectiveTracker tracker{[this](const CompletedCollective& c) { records.push_back(c); },
                            [this](CollectiveState s, const CompletedCollective& c) { states.emplace_back(s, c); }};
};

CollectiveStart Coll(const char* func, uint64_t count, uint64_t host_ns, bool device_clock, uint64_t comm = 42,
                     int channels = 0) {
  CollectiveStart s;
  s.comm = comm;
  s.func = func;
  s.nccl_seq = 7;
  s.count = count;
  s.tid = 11;
  s.host_ns = host_ns;
  s.channels = channels;
  s.device_clock = device_clock;
  return s;
}

// One collective of `comm` run to completion on one channel (NCCL's order: stopped before its kernel).
uint64_t RunOne(Collected& c, uint64_t comm, const char* func = "AllReduce") {
  void* coll = c.tracker.StartCollective(Coll(func, 1, 100, true, comm, 1));
  c.tracker.Stop(coll);
  void* ch = c.tracker.StartChannel(coll, 200);
  c.tracker.ChannelStopped(ch, 300);
  c.tracker.Stop(ch);
  return c.records.back().seq;
}

TEST(NcclCollectiveTracker, SpanIsEarliestChannelStartToLatestStopInEitherOrder) {
  for (bool coll_first : {true, false}) {
    Collected c;
    void* coll = c.tracker.StartCollective(Coll("AllReduce", 1024, 500, true));
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
    EXPECT_EQ(r.comm, 42u);
    EXPECT_EQ(r.seq, 0u);
    EXPECT_EQ(r.nccl_seq, 7u);
    EXPECT_EQ(r.count, 1024u);
    EXPECT_EQ(r.tid, 11u);
    EXPECT_EQ(r.start_ns, 1500u);
    EXPECT_EQ(r.end_ns, 9000u);
    EXPECT_TRUE(r.device_clock);
    EXPECT_EQ(c.tracker.stats().completed, 1u);
  }
}

// NCCL stops a collective on the host right after enqueueing it, before its kernel starts: with its channel
// count known, it is done only when that many channels have stopped.
TEST(NcclCollectiveTracker, StoppedBeforeItsKernelIsDoneWhenItsChannelsAre) {
  Collected c;
  void* coll = c.tracker.StartCollective(Coll("AllReduce", 8, 100, true, 42, 2));
  c.tracker.Stop(coll);
  void* a = c.tracker.StartChannel(coll, 1000);
  ASSERT_NE(a, nullptr) << "its channels start after NCCL stopped it";
  c.tracker.ChannelStopped(a, 2000);
  c.tracker.Stop(a);
  EXPECT_TRUE(c.records.empty()) << "done with one of its two channels still to come";
  void* b = c.tracker.StartChannel(coll, 1100);
  c.tracker.ChannelStopped(b, 2500);
  c.tracker.Stop(b);
  ASSERT_EQ(c.records.size(), 1u);
  EXPECT_EQ(c.records[0].start_ns, 1000u);
  EXPECT_EQ(c.records[0].end_ns, 2500u);
  EXPECT_EQ(c.tracker.StartChannel(coll, 3000), nullptr) << "a channel of a done collective is an orphan";
  EXPECT_EQ(c.tracker.stats().orphan_channels, 1u);
}

TEST(NcclCollectiveTracker, StatesComeOnceEachAndInOrder) {
  Collected c;
  void* coll = c.tracker.StartCollective(Coll("AllGather", 512, 100, true, 9, 2));
  ASSERT_EQ(c.states.size(), 1u);
  EXPECT_EQ(c.states[0].first, CollectiveState::kEnqueued);
  c.tracker.Stop(coll);
  void* a = c.tracker.StartChannel(coll, 0);  // the first channel, its device time not known yet
  void* b = c.tracker.StartChannel(coll, 1200);
  ASSERT_EQ(c.states.size(), 2u) << "kernel started once, at its first channel";
  EXPECT_EQ(c.states[1].first, CollectiveState::kKernelStarted);
  c.tracker.ChannelStopped(a, 2000);
  c.tracker.Stop(a);
  c.tracker.ChannelStopped(b, 2100);
  c.tracker.Stop(b);
  ASSERT_EQ(c.states.size(), 3u);
  EXPECT_EQ(c.states[2].first, CollectiveState::kDone);
  for (const auto& [state, r] : c.states) {
    EXPECT_EQ(r.op, "all_gather");
    EXPECT_EQ(r.comm, 9u);
    EXPECT_EQ(r.seq, 0u);
    EXPECT_EQ(r.count, 512u);
    EXPECT_EQ(r.tid, 11u);
  }
  EXPECT_EQ(c.states[2].second.start_ns, 1200u);
  EXPECT_EQ(c.states[2].second.end_ns, 2100u);
  EXPECT_EQ(c.tracker.stats().started, 1u);
}

TEST(NcclCollectiveTracker, InFlightCollectiveIsNeverDone) {
  Collected c;
  void* coll = c.tracker.StartCollective(Coll("AllReduce", 8, 100, true, 42, 2));
  c.tracker.Stop(coll);
  c.tracker.StartChannel(coll, 1000);  // its kernel started and never finished: a hang
  c.tracker.StartChannel(coll, 1000);
  ASSERT_EQ(c.states.size(), 2u);
  EXPECT_EQ(c.states.back().first, CollectiveState::kKernelStarted);
  EXPECT_TRUE(c.records.empty());
  EXPECT_EQ(c.tracker.stats().started, 1u);
  EXPECT_EQ(c.tracker.stats().completed + c.tracker.stats().without_device_time, 0u);
}

TEST(NcclCollectiveTracker, SeqCountsEachCommunicatorsCollectivesApartFromPointToPoint) {
  Collected c;
  EXPECT_EQ(RunOne(c, 1), 0u);
  EXPECT_EQ(RunOne(c, 2), 0u) << "another communicator counts from 0";
  void* p2p = c.tracker.StartP2p(1, 1);  // a send on communicator 1: not a collective
  c.tracker.Stop(p2p);
  void* ch = c.tracker.StartChannel(p2p, 250);
  ASSERT_NE(ch, nullptr) << "a point-to-point operation's channel is not an orphan";
  c.tracker.ChannelStopped(ch, 260);
  c.tracker.Stop(ch);
  EXPECT_EQ(RunOne(c, 1), 1u) << "the send did not take collective #1 of communicator 1";
  EXPECT_EQ(RunOne(c, 1, "Broadcast"), 2u) << "one sequence over every collective function";
  EXPECT_EQ(RunOne(c, 2), 1u);
  EXPECT_EQ(c.records.size(), 5u) << "point-to-point operations are never reported";
  EXPECT_EQ(c.states.size(), 15u);
  const TrackerStats s = c.tracker.stats();
  EXPECT_EQ(s.p2p, 1u);
  EXPECT_EQ(s.started, 5u);
  EXPECT_EQ(s.orphan_channels, 0u);
}

TEST(NcclCollectiveTracker, NoDeviceTimeIsDoneAndCountedNotInvented) {
  Collected c;
  void* coll = c.tracker.StartCollective(Coll("AllGather", 1, 500, true));
  c.tracker.Stop(coll);  // no kernel channel ever reported
  void* coll2 = c.tracker.StartCollective(Coll("AllGather", 1, 600, true));
  void* ch = c.tracker.StartChannel(coll2, 700);
  c.tracker.Stop(ch);  // started, never reported a stop time
  c.tracker.Stop(coll2);
  EXPECT_TRUE(c.records.empty());
  EXPECT_EQ(c.tracker.stats().without_device_time, 2u);
  ASSERT_EQ(c.states.size(), 5u) << "enqueued twice, one kernel started, done twice";
  EXPECT_EQ(c.states[1].first, CollectiveState::kDone);
  EXPECT_EQ(c.states[4].first, CollectiveState::kDone);
  EXPECT_EQ(c.states[4].second.seq, 1u);
}

TEST(NcclCollectiveTracker, HostTimesForV3AndOrphans) {
  Collected c;
  void* coll = c.tracker.StartCollective(Coll("ReduceScatter", 8, 100, false));
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
