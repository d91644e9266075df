// OpGraph construction: the dependency rules of op_graph.h applied stage by stage to the template step,
// then the communication groups, then a topological order of the replay events (which also proves the
// graph acyclic).
#include "analysis/whatif/op_graph.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <deque>
#include <tuple>

namespace strata::whatif {

namespace {

constexpr std::array<std::string_view, kNumOpTypes> kTypeNames = {"forward-compute",
                                                                  "backward-compute",
                                                                  "optimizer",
                                                                  "gc",
                                                                  "forward-send",
                                                                  "forward-recv",
                                                                  "backward-send",
                                                                  "backward-recv",
                                                                  "params-all-gather",
                                                                  "grads-reduce-scatter",
                                                                  "layernorm-grads-all-reduce",
                                                                  "embedding-grads-all-reduce",
                                                                  "optimizer-clip-main-grad"};

int Index(OpType t) { return static_cast<int>(t); }

bool IsForwardP2p(OpType t) { return t == OpType::kForwardSend || t == OpType::kForwardRecv; }
bool IsP2p(OpType t) { return t >= OpType::kForwardSend && t <= OpType::kBackwardRecv; }

/// Builds the graph; holds the per-build scratch state (dependency lists before they become CSR).
class GraphBuilder {
 public:
  GraphBuilder(const std::vector<TemplateOp>& ops, const OpGraphOptions& options, OpGraph& graph,
               std::vector<OpNode>& nodes, std::vector<std::vector<uint32_t>>& by_stage_type, int32_t stages,
               int32_t chunks)
      : ops_(ops),
        options_(options),
        graph_(graph),
        nodes_(nodes),
        by_stage_type_(by_stage_type),
        stages_(stages),
        chunks_(chunks),
        deps_(ops.size()) {}

  std::vector<std::vector<uint32_t>> TakeDeps() { return std::move(deps_); }

  void AddStageRules(int32_t s) {
    const std::vector<uint32_t> compute =
        Sorted(s, [](OpType t) { return t == OpType::kForwardCompute || t == OpType::kBackwardCompute; });
    Chain(compute, kNoNode);
    for (OpType t : {OpType::kForwardSend, OpType::kForwardRecv, OpType::kBackwardSend, OpType::kBackwardRecv})
      Chain(Sorted(s, [t](OpType x) { return x == t; }), kNoNode);
    Chain(Sorted(s, [](OpType t) { return t == OpType::kParamsAllGather || t == OpType::kGradsReduceScatter; }),
          kNoNode);

    MatchP2p(s, OpType::kForwardCompute, OpType::kForwardSend, OpType::kForwardRecv);
    MatchP2p(s, OpType::kBackwardCompute, OpType::kBackwardSend, OpType::kBackwardRecv);

    // The first backward send/recv wait for the forward-compute two places before the first backward.
    for (size_t i = 0; i < compute.size(); ++i) {
      if (nodes_[compute[i]].type != OpType::kBackwardCompute) continue;
      if (i >= 2 && nodes_[compute[i - 2]].type == OpType::kForwardCompute) {
        Add(compute[i - 2], graph_.Find(s, OpType::kBackwardRecv, 0));
        Add(compute[i - 2], graph_.Find(s, OpType::kBackwardSend, 0));
      }
      break;
    }

    // The last params-all-gather of each chunk precedes the first forward-compute of that chunk.
    const auto& ags = by_stage_type_[Slot(s, OpType::kParamsAllGather)];
    std::vector<bool> chunk_done(static_cast<size_t>(chunks_), false);
    for (auto it = ags.rbegin(); it != ags.rend(); ++it) {
      const int32_t c = Chunk(*it);
      if (chunk_done[c]) continue;
      chunk_done[c] = true;
      for (uint32_t n : compute) {
        if (nodes_[n].type == OpType::kForwardCompute && Chunk(n) == c) {
          Add(*it, n);
          break;
        }
      }
    }

    // Tail: last compute -> gc -> layernorm -> embedding -> reduce-scatters -> clip -> optimizer.
    uint32_t last = kNoNode;
    for (uint32_t n : compute)
      if (last == kNoNode || ops_[n].end_ns > ops_[last].end_ns) last = n;
    const int64_t last_end = last == kNoNode ? INT64_MIN : ops_[last].end_ns;
    std::vector<uint32_t> tail;
    for (OpType t : {OpType::kGc, OpType::kLayernormGradsAllReduce, OpType::kEmbeddingGradsAllReduce})
      for (uint32_t n : by_stage_type_[Slot(s, t)]) tail.push_back(n);
    std::vector<uint32_t> overlapped;
    for (uint32_t n : by_stage_type_[Slot(s, OpType::kGradsReduceScatter)]) {
      if (last != kNoNode && ops_[n].start_ns < last_end - options_.noop_epsilon_ns) {
        overlapped.push_back(n);
      } else {
        tail.push_back(n);
      }
    }
    const size_t after_rs = tail.size();
    for (OpType t : {OpType::kOptimizerClipMainGrad, OpType::kOptimizer})
      for (uint32_t n : by_stage_type_[Slot(s, t)]) tail.push_back(n);
    Chain(tail, last);
    for (uint32_t r : overlapped) {
      uint32_t last_bwd = kNoNode;
      for (uint32_t n : compute)
        if (nodes_[n].type == OpType::kBackwardCompute && Chunk(n) == Chunk(r) &&
            (last_bwd == kNoNode || ops_[n].end_ns > ops_[last_bwd].end_ns))
          last_bwd = n;
      Add(last_bwd, r);
    }
    if (!overlapped.empty() && after_rs < tail.size()) Add(overlapped.back(), tail[after_rs]);
  }

 private:
  size_t Slot(int32_t s, OpType t) const { return static_cast<size_t>(s) * kNumOpTypes + Index(t); }
  int32_t Chunk(uint32_t n) const { return std::max<int32_t>(nodes_[n].chunk, 0); }

  template <typename Pred>
  std::vector<uint32_t> Sorted(int32_t s, Pred pred) const {
    std::vector<uint32_t> out;
    for (int t = 0; t < kNumOpTypes; ++t)
      if (pred(static_cast<OpType>(t)))
        for (uint32_t n : by_stage_type_[Slot(s, static_cast<OpType>(t))]) out.push_back(n);
    std::sort(out.begin(), out.end(), [&](uint32_t a, uint32_t b) {
      return std::make_tuple(ops_[a].start_ns, ops_[a].seq, kTypeNames[Index(ops_[a].type)]) <
             std::make_tuple(ops_[b].start_ns, ops_[b].seq, kTypeNames[Index(ops_[b].type)]);
    });
    return out;
  }

  void Add(uint32_t from, uint32_t to) {
    if (from == kNoNode || to == kNoNode || from == to) return;
    deps_[to].push_back(from);
  }

  void Chain(const std::vector<uint32_t>& ids, uint32_t pred) {
    for (uint32_t n : ids) {
      Add(pred, n);
      pred = n;
    }
  }

  /// Marks no-ops of one direction and links its sends and recvs with the computes they serve.
  void MatchP2p(int32_t s, OpType compute_type, OpType send_type, OpType recv_type) {
    const std::vector<uint32_t> comps = Sorted(s, [compute_type](OpType t) { return t == compute_type; });
    for (OpType type : {send_type, recv_type}) {
      const bool recv = type == recv_type;
      const std::vector<uint32_t> p2p = Sorted(s, [type](OpType t) { return t == type; });
      if (comps.empty()) {
        for (uint32_t n : p2p) nodes_[n].no_op = true;
        continue;
      }
      int64_t last_start = INT64_MIN, first_end = INT64_MAX;
      for (uint32_t c : comps) {
        last_start = std::max(last_start, ops_[c].start_ns);
        first_end = std::min(first_end, ops_[c].end_ns);
      }
      auto carries_nothing = [&](uint32_t n) {
        return recv ? ops_[n].start_ns > last_start + options_.noop_epsilon_ns
                    : ops_[n].end_ns < first_end - options_.noop_epsilon_ns;
      };
      size_t real = 0;
      for (uint32_t n : p2p) real += carries_nothing(n) ? 0 : 1;
      // When exactly one recv is missing it is the first (a stage-0 forward-recv): skip its compute.
      size_t k = recv && real + 1 == comps.size() ? 1 : 0;
      // Global chunk of the peer: +1 for forward-send and backward-recv, -1 for forward-recv and backward-send.
      const int delta = (type == OpType::kForwardSend || type == OpType::kBackwardRecv) ? 1 : -1;
      for (uint32_t n : p2p) {
        if (carries_nothing(n) || k >= comps.size()) {
          nodes_[n].no_op = true;
          continue;
        }
        const uint32_t c = comps[k];
        const int32_t peer_gmc = Chunk(c) * stages_ + s + delta;
        if (peer_gmc < 0 || peer_gmc >= chunks_ * stages_) nodes_[n].no_op = true;
        if (recv) {
          Add(n, c);
          if (k > 0) Add(comps[k - 1], n);
        } else {
          Add(c, n);
        }
        ++k;
      }
    }
  }

  const std::vector<TemplateOp>& ops_;
  const OpGraphOptions& options_;
  const OpGraph& graph_;
  std::vector<OpNode>& nodes_;
  const std::vector<std::vector<uint32_t>>& by_stage_type_;
  int32_t stages_;
  int32_t chunks_;
  std::vector<std::vector<uint32_t>> deps_;
};

}  // namespace

std::string_view OpTypeName(OpType type) { return kTypeNames[Index(type)]; }

std::optional<OpType> OpTypeFromName(std::string_view name) {
  for (int i = 0; i < kNumOpTypes; ++i)
    if (kTypeNames[i] == name) return static_cast<OpType>(i);
  return std::nullopt;
}

std::string KnownOpTypeNames() {
  std::string out;
  for (int i = 0; i < kNumOpTypes; ++i) out += (i ? ", " : "") + std::string(kTypeNames[i]);
  return out;
}

Status AddOpMapEntry(std::string_view from, std::string_view to, std::map<std::string, std::string, std::less<>>* out) {
  if (from.empty() || to.empty()) return Status::Usage("expected FROM=TO (e.g. fwd=forward-compute)");
  if (!OpTypeFromName(to))
    return Status::Usage(fmt::format("{} is not an op type the what-if knows ({})", to, KnownOpTypeNames()));
  (*out)[std::string(from)] = std::string(to);
  return Status::Ok();
}

bool IsCommunication(OpType type) { return type >= OpType::kForwardSend; }

std::string_view OpGroupName(OpType type) {
  if (IsP2p(type)) return IsForwardP2p(type) ? "forward-pp-comm" : "backward-pp-comm";
  return OpTypeName(type);
}

uint32_t OpGraph::Find(int32_t stage, OpType type, int32_t seq) const {
  if (stage < 0 || stage >= num_stages_ || seq < 0) return kNoNode;
  const auto& v = by_stage_type_[static_cast<size_t>(stage) * kNumOpTypes + Index(type)];
  return static_cast<size_t>(seq) < v.size() ? v[seq] : kNoNode;
}

int32_t OpGraph::Count(int32_t stage, OpType type) const {
  if (stage < 0 || stage >= num_stages_) return 0;
  return static_cast<int32_t>(by_stage_type_[static_cast<size_t>(stage) * kNumOpTypes + Index(type)].size());
}

std::string OpGraph::NodeName(uint32_t node) const {
  const OpNode& n = nodes_[node];
  return fmt::format("{}#{}@stage{}", OpTypeName(n.type), n.seq, n.stage);
}

// Nodes from the template ops, indexed by (stage, type, seq); every stage must have ops and every (stage,
// type) consecutive sequence numbers 0..n-1.
Status OpGraph::IndexNodes(const std::vector<TemplateOp>& ops, int32_t max_stage, int32_t max_chunk) {
  num_stages_ = max_stage + 1;
  num_chunks_ = max_chunk + 1;
  by_stage_type_.assign(static_cast<size_t>(num_stages_) * kNumOpTypes, {});
  nodes_.reserve(ops.size());
  for (uint32_t i = 0; i < ops.size(); ++i) {
    const TemplateOp& op = ops[i];
    nodes_.push_back(OpNode{op.stage, op.type, op.seq, op.chunk, kNoGroup, false});
    auto& slot = by_stage_type_[static_cast<size_t>(op.stage) * kNumOpTypes + Index(op.type)];
    if (op.seq < 0) return Status::BadInput("what-if: negative op sequence number");
    if (slot.size() <= static_cast<size_t>(op.seq)) slot.resize(static_cast<size_t>(op.seq) + 1, kNoNode);
    if (slot[op.seq] != kNoNode)
      return Status::BadInput(fmt::format("what-if: two {} ops with sequence number {} on stage {} in one step",
                                          OpTypeName(op.type), op.seq, op.stage));
    slot[op.seq] = i;
  }
  for (int32_t s = 0; s < num_stages_; ++s) {
    bool any = false;
    for (int t = 0; t < kNumOpTypes; ++t) {
      const auto& slot = by_stage_type_[static_cast<size_t>(s) * kNumOpTypes + t];
      any = any || !slot.empty();
      for (size_t k = 0; k < slot.size(); ++k)
        if (slot[k] == kNoNode)
          return Status::BadInput(
              fmt::format("what-if: stage {} has no {} op number {} (numbers must be 0..n-1)", s, kTypeNames[t], k));
    }
    if (!any)
      return Status::BadInput(
          fmt::format("what-if: pipeline stage {} has no ops in the template step "
                      "(stages must be numbered 0..{})",
                      s, num_stages_ - 1));
  }

  return Status::Ok();
}

// Dependencies, stage by stage (GraphBuilder's rules), stored as CSR.
void OpGraph::AddDependencies(const std::vector<TemplateOp>& ops, const OpGraphOptions& options) {
  GraphBuilder builder(ops, options, *this, nodes_, by_stage_type_, num_stages_, num_chunks_);
  for (int32_t s = 0; s < num_stages_; ++s) builder.AddStageRules(s);
  std::vector<std::vector<uint32_t>> deps = builder.TakeDeps();
  dep_offsets_.assign(1, 0);
  for (auto& d : deps) {
    std::sort(d.begin(), d.end());
    d.erase(std::unique(d.begin(), d.end()), d.end());
    deps_.insert(deps_.end(), d.begin(), d.end());
    dep_offsets_.push_back(static_cast<uint32_t>(deps_.size()));
  }
}

// Communication groups: pipeline send/recv pairs, embedding all-reduce pairs of the first and last stage,
// the optimizer's clip across stages (a data-parallel sync), and every other communication op alone.
void OpGraph::AddGroups() {
  const int32_t P = num_stages_;
  auto add_group = [&](std::vector<uint32_t> members, bool dp_sync) {
    std::sort(members.begin(), members.end());
    for (uint32_t m : members) nodes_[m].group = static_cast<uint32_t>(groups_.size());
    groups_.push_back(CommGroup{std::move(members), dp_sync});
  };
  auto real_ops = [&](int32_t s, OpType t) {
    std::vector<uint32_t> out;
    for (uint32_t n : by_stage_type_[static_cast<size_t>(s) * kNumOpTypes + Index(t)])
      if (!nodes_[n].no_op) out.push_back(n);
    return out;
  };
  for (int32_t s = 0; s < P; ++s) {
    for (bool forward : {true, false}) {
      const std::vector<uint32_t> sends = real_ops(s, forward ? OpType::kForwardSend : OpType::kBackwardSend);
      const int32_t peer = forward ? (s + 1) % P : (s - 1 + P) % P;
      const std::vector<uint32_t> recvs = real_ops(peer, forward ? OpType::kForwardRecv : OpType::kBackwardRecv);
      for (size_t k = 0; k < std::max(sends.size(), recvs.size()); ++k) {
        if (k < sends.size() && k < recvs.size()) {
          add_group({sends[k], recvs[k]}, false);
        } else {
          add_group({k < sends.size() ? sends[k] : recvs[k]}, false);
        }
      }
    }
  }
  const int32_t emb_pairs =
      P > 1 ? std::min(Count(0, OpType::kEmbeddingGradsAllReduce), Count(P - 1, OpType::kEmbeddingGradsAllReduce)) : 0;
  for (int32_t k = 0; k < emb_pairs; ++k)
    add_group({Find(0, OpType::kEmbeddingGradsAllReduce, k), Find(P - 1, OpType::kEmbeddingGradsAllReduce, k)}, false);
  int32_t clips = 0;
  for (int32_t s = 0; s < P; ++s) clips = std::max(clips, Count(s, OpType::kOptimizerClipMainGrad));
  for (int32_t k = 0; k < clips; ++k) {
    std::vector<uint32_t> members;
    for (int32_t s = 0; s < P; ++s)
      if (uint32_t n = Find(s, OpType::kOptimizerClipMainGrad, k); n != kNoNode) members.push_back(n);
    add_group(std::move(members), true);
  }
  for (uint32_t n = 0; n < nodes_.size(); ++n) {
    const OpNode& node = nodes_[n];
    if (!IsCommunication(node.type) || node.group != kNoGroup) continue;
    add_group({n}, node.type == OpType::kParamsAllGather || node.type == OpType::kGradsReduceScatter);
  }
}

// Replay events in topological order (Kahn). Event ids: start n, end N+n, group 2N+g. A cycle is an error
// naming ops that can never start.
Status OpGraph::OrderEvents() {
  const uint32_t N = static_cast<uint32_t>(nodes_.size());
  const uint32_t E = 2 * N + static_cast<uint32_t>(groups_.size());
  std::vector<std::vector<uint32_t>> succ(E);
  std::vector<uint32_t> indegree(E, 0);
  auto edge = [&](uint32_t from, uint32_t to) {
    succ[from].push_back(to);
    ++indegree[to];
  };
  for (uint32_t n = 0; n < N; ++n) {
    for (uint32_t d : deps(n)) edge(N + d, n);
    if (nodes_[n].group == kNoGroup) {
      edge(n, N + n);
    } else {
      edge(2 * N + nodes_[n].group, N + n);
    }
  }
  for (uint32_t gi = 0; gi < groups_.size(); ++gi)
    for (uint32_t m : groups_[gi].members) edge(m, 2 * N + gi);
  std::deque<uint32_t> ready;
  for (uint32_t e = 0; e < E; ++e)
    if (indegree[e] == 0) ready.push_back(e);
  event_order_.reserve(E);
  while (!ready.empty()) {
    const uint32_t e = ready.front();
    ready.pop_front();
    if (e < N) {
      event_order_.push_back(Event{Event::kStart, e});
    } else if (e < 2 * N) {
      event_order_.push_back(Event{Event::kEnd, e - N});
    } else {
      event_order_.push_back(Event{Event::kGroup, e - 2 * N});
    }
    for (uint32_t s : succ[e])
      if (--indegree[s] == 0) ready.push_back(s);
  }
  if (event_order_.size() != E) {
    std::string stuck;
    int shown = 0;
    for (uint32_t n = 0; n < N && shown < 6; ++n) {
      if (indegree[n] == 0) continue;
      stuck += (shown++ ? ", " : "") + NodeName(n);
    }
    return Status::BadInput(fmt::format("what-if: the dependency model has a cycle; ops that can never start: {}",
                                        stuck.empty() ? std::string("(group waits only)") : stuck));
  }
  return Status::Ok();
}

// The steps: check and index the nodes, add dependencies and groups, order the replay events.
Expected<OpGraph> BuildOpGraph(const std::vector<TemplateOp>& ops, const OpGraphOptions& options) {
  if (ops.empty()) return Status::BadInput("what-if: the template step has no ops of a known type");
  if (ops.size() >= kNoNode / 2) return Status::Resource("what-if: too many ops in one step");
  OpGraph g;
  int32_t max_stage = -1, max_chunk = 0;
  for (const TemplateOp& op : ops) {
    if (op.stage < 0) return Status::BadInput(fmt::format("what-if: negative pipeline stage {}", op.stage));
    if (op.start_ns > op.end_ns)
      return Status::BadInput(fmt::format("what-if: an op of stage {} ends before it starts", op.stage));
    max_stage = std::max(max_stage, op.stage);
    max_chunk = std::max(max_chunk, op.chunk);
  }
  if (Status st = g.IndexNodes(ops, max_stage, max_chunk); !st.ok()) return st;
  g.AddDependencies(ops, options);
  g.AddGroups();
  if (Status st = g.OrderEvents(); !st.ok()) return st;
  return g;
}

}  // namespace strata::whatif
