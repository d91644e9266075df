// OpGraph: each dependency rule and group of op_graph.h checked on small templates, plus the no-op
// detection, the overlapped reduce-scatter variant and the error cases (cycle, missing stage, bad seqs).
#include "analysis/whatif/op_graph.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

namespace strata::whatif {
namespace {

TemplateOp Op(int32_t stage, const char* type, int32_t seq, double start_ms, double end_ms, int32_t chunk = 0) {
  auto t = OpTypeFromName(type);
  EXPECT_TRUE(t.has_value()) << type;
  return TemplateOp{stage, *t, seq, chunk, static_cast<int64_t>(start_ms * 1e6), static_cast<int64_t>(end_ms * 1e6)};
}

/// One step of dp 0 of the 2-stage, 2-microbatch 1F1B pipeline of whatif_pipeline_test.cc, plus a tail.
std::vector<TemplateOp> TwoStagePipeline() {
  return {
      Op(0, "params-all-gather", 0, 0, 1),
      Op(0, "forward-compute", 0, 1, 3),
      Op(0, "forward-send", 0, 3, 3),
      Op(0, "forward-compute", 1, 3, 5),
      Op(0, "forward-send", 1, 5, 5),
      Op(0, "backward-recv", 0, 3, 9),
      Op(0, "backward-compute", 0, 9, 13),
      Op(0, "backward-recv", 1, 13, 15),
      Op(0, "backward-compute", 1, 15, 19),
      Op(0, "gc", 0, 19, 19),
      Op(0, "layernorm-grads-all-reduce", 0, 19, 19.1),
      Op(0, "embedding-grads-all-reduce", 0, 19.1, 20),
      Op(0, "grads-reduce-scatter", 0, 20, 32),
      Op(0, "optimizer-clip-main-grad", 0, 32, 33),
      Op(0, "optimizer", 0, 33, 34),
      Op(1, "params-all-gather", 0, 0, 1),
      Op(1, "forward-recv", 0, 0, 3),
      Op(1, "forward-compute", 0, 3, 5),
      Op(1, "backward-compute", 0, 5, 9),
      Op(1, "backward-send", 0, 9, 9),
      Op(1, "forward-recv", 1, 5, 5),
      Op(1, "forward-compute", 1, 9, 11),
      Op(1, "backward-compute", 1, 11, 15),
      Op(1, "backward-send", 1, 15, 15),
      Op(1, "gc", 0, 15, 15),
      Op(1, "layernorm-grads-all-reduce", 0, 15, 15.1),
      Op(1, "embedding-grads-all-reduce", 0, 15.1, 20),
      Op(1, "grads-reduce-scatter", 0, 20, 28),
      Op(1, "optimizer-clip-main-grad", 0, 28, 33),
      Op(1, "optimizer", 0, 33, 34),
  };
}

/// A built OpGraph with name-based accessors for assertions (a build error fails the test).
class Graph {
 public:
  explicit Graph(const std::vector<TemplateOp>& ops) {
    auto g = BuildOpGraph(ops);
    if (!g.ok()) {
      ADD_FAILURE() << g.error();
      return;
    }
    g_ = std::move(g).value();
  }
  uint32_t N(int32_t stage, const char* type, int32_t seq) const {
    const uint32_t n = g_.Find(stage, *OpTypeFromName(type), seq);
    EXPECT_NE(n, kNoNode) << type << "#" << seq << "@" << stage;
    return n;
  }
  /// Names of the dependencies of a node, sorted.
  std::set<std::string> Deps(int32_t stage, const char* type, int32_t seq) const {
    std::set<std::string> out;
    for (uint32_t d : g_.deps(N(stage, type, seq))) out.insert(g_.NodeName(d));
    return out;
  }
  /// Names of the members of a node's group, and whether it is dp-synced.
  std::pair<std::set<std::string>, bool> Group(int32_t stage, const char* type, int32_t seq) const {
    const uint32_t g = g_.nodes()[N(stage, type, seq)].group;
    EXPECT_NE(g, kNoGroup);
    std::set<std::string> out;
    if (g == kNoGroup) return {out, false};
    for (uint32_t m : g_.groups()[g].members) out.insert(g_.NodeName(m));
    return {out, g_.groups()[g].dp_sync};
  }
  const OpGraph& graph() const { return g_; }

 private:
  OpGraph g_;
};

using Names = std::set<std::string>;

TEST(WhatIfGraph, ChainsAndP2pComputeEdges) {
  const Graph g(TwoStagePipeline());
  // Stage 0: F0 waits for the all-gather of its chunk; F1 follows F0; B0 follows F1 and the recv feeding it.
  EXPECT_EQ(g.Deps(0, "forward-compute", 0), (Names{"params-all-gather#0@stage0"}));
  EXPECT_EQ(g.Deps(0, "forward-compute", 1), (Names{"forward-compute#0@stage0"}));
  EXPECT_EQ(g.Deps(0, "backward-compute", 0), (Names{"forward-compute#1@stage0", "backward-recv#0@stage0"}));
  EXPECT_EQ(g.Deps(0, "backward-compute", 1), (Names{"backward-compute#0@stage0", "backward-recv#1@stage0"}));
  // A send follows its compute and the previous send of its type.
  EXPECT_EQ(g.Deps(0, "forward-send", 0), (Names{"forward-compute#0@stage0"}));
  EXPECT_EQ(g.Deps(0, "forward-send", 1), (Names{"forward-compute#1@stage0", "forward-send#0@stage0"}));
  // The first backward-recv waits for the forward-compute two places before the first backward (F0);
  // the second waits for the previous backward-compute and the previous recv.
  EXPECT_EQ(g.Deps(0, "backward-recv", 0), (Names{"forward-compute#0@stage0"}));
  EXPECT_EQ(g.Deps(0, "backward-recv", 1), (Names{"backward-recv#0@stage0", "backward-compute#0@stage0"}));
  // Stage 1: the first recv has no dependency (starts at the step's start); F0 waits for it.
  EXPECT_TRUE(g.Deps(1, "forward-recv", 0).empty());
  EXPECT_EQ(g.Deps(1, "forward-compute", 0), (Names{"params-all-gather#0@stage1", "forward-recv#0@stage1"}));
  EXPECT_EQ(g.Deps(1, "forward-recv", 1), (Names{"forward-recv#0@stage1", "forward-compute#0@stage1"}));
  EXPECT_EQ(g.Deps(1, "forward-compute", 1), (Names{"backward-compute#0@stage1", "forward-recv#1@stage1"}));
  EXPECT_EQ(g.Deps(1, "backward-send", 0), (Names{"backward-compute#0@stage1"}));
  // F0 -> B0 on stage 1: the first backward is one place after the first forward: no extra rule.
  EXPECT_EQ(g.Deps(1, "backward-compute", 0), (Names{"forward-compute#0@stage1"}));
  EXPECT_TRUE(g.Deps(0, "params-all-gather", 0).empty());
}

TEST(WhatIfGraph, TailChain) {
  const Graph g(TwoStagePipeline());
  EXPECT_EQ(g.Deps(0, "gc", 0), (Names{"backward-compute#1@stage0"}));
  EXPECT_EQ(g.Deps(0, "layernorm-grads-all-reduce", 0), (Names{"gc#0@stage0"}));
  EXPECT_EQ(g.Deps(0, "embedding-grads-all-reduce", 0), (Names{"layernorm-grads-all-reduce#0@stage0"}));
  EXPECT_EQ(g.Deps(0, "grads-reduce-scatter", 0),
            (Names{"embedding-grads-all-reduce#0@stage0", "params-all-gather#0@stage0"}));
  EXPECT_EQ(g.Deps(0, "optimizer-clip-main-grad", 0), (Names{"grads-reduce-scatter#0@stage0"}));
  EXPECT_EQ(g.Deps(0, "optimizer", 0), (Names{"optimizer-clip-main-grad#0@stage0"}));
  EXPECT_EQ(g.Deps(1, "gc", 0), (Names{"backward-compute#1@stage1"}));
}

TEST(WhatIfGraph, Groups) {
  const Graph g(TwoStagePipeline());
  EXPECT_EQ(g.Group(0, "forward-send", 0),
            std::make_pair(Names{"forward-send#0@stage0", "forward-recv#0@stage1"}, false));
  EXPECT_EQ(g.Group(0, "forward-send", 1),
            std::make_pair(Names{"forward-send#1@stage0", "forward-recv#1@stage1"}, false));
  EXPECT_EQ(g.Group(1, "backward-send", 1),
            std::make_pair(Names{"backward-send#1@stage1", "backward-recv#1@stage0"}, false));
  EXPECT_EQ(g.Group(0, "params-all-gather", 0), std::make_pair(Names{"params-all-gather#0@stage0"}, true));
  EXPECT_EQ(g.Group(1, "grads-reduce-scatter", 0), std::make_pair(Names{"grads-reduce-scatter#0@stage1"}, true));
  EXPECT_EQ(g.Group(0, "embedding-grads-all-reduce", 0),
            std::make_pair(Names{"embedding-grads-all-reduce#0@stage0", "embedding-grads-all-reduce#0@stage1"}, false));
  EXPECT_EQ(g.Group(1, "optimizer-clip-main-grad", 0),
            std::make_pair(Names{"optimizer-clip-main-grad#0@stage0", "optimizer-clip-main-grad#0@stage1"}, true));
  EXPECT_EQ(g.Group(1, "layernorm-grads-all-reduce", 0),
            std::make_pair(Names{"layernorm-grads-all-reduce#0@stage1"}, false));
  // Compute ops are in no group; every communication op is in exactly one.
  const OpGraph& og = g.graph();
  std::vector<int> seen(og.nodes().size(), 0);
  for (const CommGroup& grp : og.groups())
    for (uint32_t m : grp.members) ++seen[m];
  for (uint32_t n = 0; n < og.nodes().size(); ++n)
    EXPECT_EQ(seen[n], IsCommunication(og.nodes()[n].type) ? 1 : 0) << og.NodeName(n);
  // Every start, end and group event appears once in the event order.
  EXPECT_EQ(og.event_order().size(), 2 * og.nodes().size() + og.groups().size());
}

TEST(WhatIfGraph, NoOpP2pOps) {
  std::vector<TemplateOp> ops = TwoStagePipeline();
  // Stage 0 records forward-recvs although nothing feeds it. The first two start before the last forward
  // started, so they are matched to F0 and F1, but their peer chunk (-1) is outside the model (type 2);
  // the third starts after the last forward started (type 1).
  ops.push_back(Op(0, "forward-recv", 0, 0.5, 1));
  ops.push_back(Op(0, "forward-recv", 1, 3, 3));
  ops.push_back(Op(0, "forward-recv", 2, 6, 6));
  // Stage 1 records a backward-send that ends before its first backward ended (type 1).
  for (TemplateOp& op : ops)
    if (op.stage == 1 && op.type == OpType::kBackwardSend) ++op.seq;
  ops.push_back(Op(1, "backward-send", 0, 4, 4.5));
  const Graph g(ops);
  const OpGraph& og = g.graph();
  for (int k = 0; k < 3; ++k) EXPECT_TRUE(og.nodes()[g.N(0, "forward-recv", k)].no_op) << k;
  EXPECT_TRUE(og.nodes()[g.N(1, "backward-send", 0)].no_op);
  EXPECT_FALSE(og.nodes()[g.N(1, "backward-send", 1)].no_op);
  EXPECT_FALSE(og.nodes()[g.N(1, "forward-recv", 0)].no_op);
  // No-ops are groups of their own; the real ops still pair up in order.
  EXPECT_EQ(g.Group(0, "forward-recv", 0).first, (Names{"forward-recv#0@stage0"}));
  EXPECT_EQ(g.Group(1, "backward-send", 0).first, (Names{"backward-send#0@stage1"}));
  EXPECT_EQ(g.Group(1, "backward-send", 1).first, (Names{"backward-send#1@stage1", "backward-recv#0@stage0"}));
  EXPECT_EQ(g.Group(1, "backward-send", 2).first, (Names{"backward-send#2@stage1", "backward-recv#1@stage0"}));
  // Type-2 no-ops keep their compute edges (as the artifact does); type-1 ones only chain.
  EXPECT_EQ(g.Deps(0, "forward-compute", 0), (Names{"params-all-gather#0@stage0", "forward-recv#0@stage0"}));
  EXPECT_EQ(g.Deps(0, "forward-compute", 1), (Names{"forward-compute#0@stage0", "forward-recv#1@stage0"}));
  EXPECT_EQ(g.Deps(0, "forward-recv", 1), (Names{"forward-recv#0@stage0", "forward-compute#0@stage0"}));
  EXPECT_EQ(g.Deps(0, "forward-recv", 2), (Names{"forward-recv#1@stage0"}));
  EXPECT_TRUE(g.Deps(1, "backward-send", 0).empty());
  EXPECT_EQ(g.Deps(1, "backward-send", 1), (Names{"backward-send#0@stage1", "backward-compute#0@stage1"}));
}

TEST(WhatIfGraph, MissingFirstRecvSkipsTheFirstCompute) {
  // A recv for every forward but the first (the first microbatch came from elsewhere): recv k feeds F(k+1).
  std::vector<TemplateOp> ops = {
      Op(0, "forward-compute", 0, 0, 1), Op(0, "forward-recv", 0, 1, 1.5),  Op(0, "forward-compute", 1, 1.5, 2.5),
      Op(0, "forward-recv", 1, 2.5, 3),  Op(0, "forward-compute", 2, 3, 4), Op(0, "optimizer", 0, 4, 5),
  };
  const Graph g(ops);
  EXPECT_EQ(g.Deps(0, "forward-recv", 0), (Names{"forward-compute#0@stage0"}));
  EXPECT_EQ(g.Deps(0, "forward-compute", 1), (Names{"forward-compute#0@stage0", "forward-recv#0@stage0"}));
  EXPECT_EQ(g.Deps(0, "forward-compute", 2), (Names{"forward-compute#1@stage0", "forward-recv#1@stage0"}));
  EXPECT_EQ(g.Deps(0, "optimizer", 0), (Names{"forward-compute#2@stage0"}));
}

TEST(WhatIfGraph, OverlappedReduceScatterWaitsForItsChunkNotTheTail) {
  std::vector<TemplateOp> ops = {
      Op(0, "params-all-gather", 0, 0, 1),        Op(0, "forward-compute", 0, 1, 2),
      Op(0, "backward-compute", 0, 2, 4),         Op(0, "grads-reduce-scatter", 0, 4, 6),  // overlaps the next backward
      Op(0, "backward-compute", 1, 4, 5),         Op(0, "gc", 0, 5, 5),
      Op(0, "optimizer-clip-main-grad", 0, 6, 7), Op(0, "optimizer", 0, 7, 8),
  };
  const Graph g(ops);
  EXPECT_EQ(g.Deps(0, "grads-reduce-scatter", 0), (Names{"params-all-gather#0@stage0", "backward-compute#1@stage0"}));
  EXPECT_EQ(g.Deps(0, "optimizer-clip-main-grad", 0), (Names{"gc#0@stage0", "grads-reduce-scatter#0@stage0"}));
}

TEST(WhatIfGraph, Errors) {
  // A reduce-scatter recorded before the all-gather makes the chain all-gather/reduce-scatter contradict
  // the compute order: a cycle, reported with the ops that can never start.
  std::vector<TemplateOp> cyclic = {
      Op(0, "params-all-gather", 0, 10, 11),
      Op(0, "forward-compute", 0, 11, 12),
      Op(0, "backward-compute", 0, 12, 13),
      Op(0, "grads-reduce-scatter", 0, 5, 6),
  };
  auto c = BuildOpGraph(cyclic);
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.error().find("cycle"), std::string::npos) << c.error();
  EXPECT_NE(c.error().find("forward-compute#0@stage0"), std::string::npos) << c.error();

  auto missing_stage = BuildOpGraph({Op(0, "forward-compute", 0, 0, 1), Op(2, "forward-compute", 0, 0, 1)});
  ASSERT_FALSE(missing_stage.ok());
  EXPECT_NE(missing_stage.error().find("stage 1"), std::string::npos) << missing_stage.error();

  auto gap = BuildOpGraph({Op(0, "forward-compute", 0, 0, 1), Op(0, "forward-compute", 2, 1, 2)});
  ASSERT_FALSE(gap.ok());
  EXPECT_NE(gap.error().find("number 1"), std::string::npos) << gap.error();

  auto dup = BuildOpGraph({Op(0, "forward-compute", 0, 0, 1), Op(0, "forward-compute", 0, 1, 2)});
  ASSERT_FALSE(dup.ok());

  EXPECT_FALSE(BuildOpGraph({}).ok());
}

TEST(WhatIfGraph, OpTypeNames) {
  for (int t = 0; t < kNumOpTypes; ++t) {
    const OpType type = static_cast<OpType>(t);
    EXPECT_EQ(OpTypeFromName(OpTypeName(type)), type);
  }
  EXPECT_FALSE(OpTypeFromName("separate-grads-all-reduce").has_value());
  EXPECT_FALSE(IsCommunication(OpType::kGc));
  EXPECT_FALSE(IsCommunication(OpType::kOptimizer));
  EXPECT_TRUE(IsCommunication(OpType::kLayernormGradsAllReduce));
  EXPECT_TRUE(IsCommunication(OpType::kOptimizerClipMainGrad));
  EXPECT_EQ(OpGroupName(OpType::kBackwardRecv), "backward-pp-comm");
  EXPECT_EQ(OpGroupName(OpType::kForwardSend), "forward-pp-comm");
  EXPECT_EQ(OpGroupName(OpType::kOptimizer), "optimizer");
}

}  // namespace
}  // namespace strata::whatif
