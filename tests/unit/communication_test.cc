// Tests of the communication table (analysis/communication.h): the transfer is the fastest member's time and
// the rest is waiting for the one that arrived last (a constructed job whose late rank and transfer are known),
// bytes and NCCL's bus bandwidth from the calls' args, no split for calls that return at launch, and the names.
#include "analysis/communication.h"

#include <gtest/gtest.h>

#include "diag_test_util.h"
#include "model/job_model.h"

namespace strata {
namespace {

using namespace diagtest;

CommunicationTable TableOf(const TraceStore& store) {
  const auto rows = SlicesByRank(store);
  const model::JobModel job = model::BuildJobModel(store, rows);
  return ComputeCommunication(store, job);
}

// Rank 1 computes 60 ms before each all_reduce, the others 30 ms; the transfer takes 10 ms.
DdpSpec LateRankOne(int ranks) {
  DdpSpec spec;
  spec.ranks = ranks;
  spec.steps = 6;
  spec.transfer = {10 * kMs};
  spec.plan = [](int r, int) { return BasicStep(r == 1 ? 60 * kMs : 30 * kMs); };
  return spec;
}

// Gives every collective call of the store `elements` elements of `dtype` (as Kineto's NCCL args would).
void AttachArgs(TraceStore* store, const std::string& dtype, int64_t elements) {
  CollectiveArgs a;
  a.dtype = store->strings.intern(dtype);
  a.in_nelems = a.out_nelems = elements;
  const auto index = static_cast<uint32_t>(store->collective_args.size());
  store->collective_args.push_back(a);
  SliceTable& s = store->slices;
  for (size_t i = 0; i < s.name.size(); ++i) {
    if (store->strings.view(s.name[i]) != "gloo:all_reduce") continue;
    s.flags[i] |= kSliceCollectiveArgs;
    s.args[i] = index;
  }
}

TEST(Communication, TransferIsTheFastestMembersTimeAndTheRestIsWaitingForTheLast) {
  const TraceStore store = LoadDdp(LateRankOne(2));
  const CommunicationTable t = TableOf(store);
  ASSERT_EQ(t.ops.size(), 1u);
  const CommunicationOp& op = t.ops[0];
  EXPECT_EQ(op.op, "all_reduce");
  EXPECT_EQ(op.name, "gloo:all_reduce");
  EXPECT_EQ(op.members, 2);
  EXPECT_EQ(op.calls, 6u);
  ASSERT_TRUE(op.split);
  EXPECT_NEAR(op.transfer_ms, 10.0, 0.01);
  // rank 0 waits 30 ms for rank 1 in every call, rank 1 not at all: 15 ms a member, 25 ms in the call
  EXPECT_NEAR(op.wait_ms, 15.0, 0.01);
  EXPECT_NEAR(op.time_ms, 25.0, 0.01);
  EXPECT_NEAR(op.transfer_ms + op.wait_ms, op.time_ms, 1e-9);  // means: the figures add up
  EXPECT_NEAR(op.wait_ms_by_rank.at(0), 30.0, 0.01);
  EXPECT_NEAR(op.wait_ms_by_rank.at(1), 0.0, 0.01);
  ASSERT_EQ(op.last_arrivals.size(), 1u);
  EXPECT_EQ(op.last_arrivals.at(1), 6u);
  EXPECT_LT(op.bytes, 0);  // no args: unknown
  EXPECT_LT(op.busbw_gbps, 0);
}

TEST(Communication, BusBandwidthFromTheCallsBytesByNcclsFormula) {
  TraceStore store = LoadDdp(LateRankOne(4));
  AttachArgs(&store, "Float", 2'500'000);  // 10 MB a call, moved in 10 ms: algbw 1 GB/s
  const CommunicationTable t = TableOf(store);
  ASSERT_EQ(t.ops.size(), 1u);
  const CommunicationOp& op = t.ops[0];
  EXPECT_DOUBLE_EQ(op.bytes, 10'000'000.0);
  EXPECT_NEAR(op.algbw_gbps, 1.0, 0.001);
  EXPECT_NEAR(op.busbw_gbps, 1.5, 0.001);  // all_reduce over 4: x 2(n-1)/n
  EXPECT_EQ(op.members, 4);
  // three ranks wait 30 ms for rank 1: 22.5 ms a member
  EXPECT_NEAR(op.wait_ms, 22.5, 0.01);
}

TEST(Communication, CallsThatReturnAtLaunchAreNotSplit) {
  DdpSpec spec = LateRankOne(2);
  spec.collective = "nccl:all_reduce";
  const TraceStore store = LoadDdp(spec);
  const CommunicationTable t = TableOf(store);
  ASSERT_EQ(t.ops.size(), 1u);
  EXPECT_FALSE(t.ops[0].split);
  EXPECT_LT(t.ops[0].transfer_ms, 0);
  EXPECT_LT(t.ops[0].wait_ms, 0);
  EXPECT_TRUE(t.ops[0].last_arrivals.empty());
}

TEST(Communication, NamesOfOpsAlgorithmsAndTypes) {
  EXPECT_EQ(OpOfCollective("gloo:all_reduce"), "all_reduce");
  EXPECT_EQ(OpOfCollective("nccl:_allgather_base"), "all_gather");
  EXPECT_EQ(OpOfCollective("ncclDevKernel_ReduceScatter_Sum_f32_RING_LL"), "reduce_scatter");
  EXPECT_EQ(OpOfCollective(kNcclKernel), "all_reduce");
  EXPECT_EQ(OpOfCollective("nccl:send"), "send");
  EXPECT_EQ(OpOfCollective("ncclKernel_SendRecv(ncclDevComm*)"), "send_recv");
  EXPECT_EQ(OpOfCollective("gloo:broadcast"), "broadcast");
  EXPECT_EQ(OpOfCollective("Foo"), "foo");
  EXPECT_EQ(AlgorithmOfKernel(kNcclKernel), "ring LL");
  EXPECT_EQ(AlgorithmOfKernel("ncclDevKernel_AllReduce_Sum_bf16_TREE_LL128"), "tree LL128");
  EXPECT_EQ(AlgorithmOfKernel("gloo:all_reduce"), "");
  EXPECT_EQ(ElementBytes("Float"), 4);
  EXPECT_EQ(ElementBytes("c10::BFloat16"), 2);
  EXPECT_EQ(ElementBytes("Long"), 8);
  EXPECT_EQ(ElementBytes("mystery"), 0);
  EXPECT_DOUBLE_EQ(BusBandwidthFactor("all_reduce", 8), 1.75);
  EXPECT_DOUBLE_EQ(BusBandwidthFactor("all_gather", 8), 0.875);
  EXPECT_DOUBLE_EQ(BusBandwidthFactor("broadcast", 8), 1.0);
  EXPECT_DOUBLE_EQ(BusBandwidthFactor("barrier", 8), 0.0);
}

}  // namespace
}  // namespace strata
