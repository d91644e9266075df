// OpGraph: the per-step dependency model of a pipeline-parallel op-table job (Megatron-style schedules),
// built once from one step of one data-parallel rank and applied to every step and dp rank (DESIGN.md,
// Diagnosis 7, "What-if impact"; the OSDI'25 what-if method).
//
// Model, for each worker (one pipeline stage of one dp rank), ops sorted by (start, seq, op type name):
//  - chains: forward- and backward-compute together in start order; each p2p op type (forward-send,
//    forward-recv, backward-send, backward-recv) its own chain; params-all-gather and grads-reduce-scatter
//    together;
//  - p2p <-> compute: ops of a p2p type that carried nothing are no-ops: type 1, a recv that starts after the
//    last compute of its direction started, or a send that ends before the first compute of its direction
//    ended (both with `noop_epsilon_ns` of tolerance); type 2 (virtual pipelines), an op whose peer model
//    chunk (global chunk = chunk * stages + stage, +-1) is outside the model. Every op that is not a type-1
//    no-op is matched, in order, to the k-th compute of its direction (k = 1 for the first when exactly one
//    recv is missing). A send follows its compute (compute_k -> send); a recv feeds its compute
//    (recv -> compute_k) and waits for the previous compute of that direction (compute_{k-1} -> recv).
//  - the first backward-send and backward-recv (seq 0) of a stage wait for the forward-compute two places
//    before the first backward-compute (when that op is a forward-compute);
//  - the last params-all-gather of each model chunk precedes the first forward-compute of that chunk;
//  - tail: last compute (by end) -> gc -> layernorm-grads-all-reduce -> embedding-grads-all-reduce ->
//    grads-reduce-scatter (in order; only those that start after the last compute ended, the others wait
//    for the last backward-compute of their chunk and precede the next tail op) ->
//    optimizer-clip-main-grad -> optimizer; op types a stage did not record are left out of its chain.
// Groups of communication ops that complete together (end = latest start in the group + own transfer):
//  - the k-th real forward-send of stage s with the k-th real forward-recv of stage (s+1) mod P, the k-th
//    real backward-send of s with the k-th real backward-recv of (s-1) mod P, same dp rank;
//  - each params-all-gather / grads-reduce-scatter across all dp ranks of its stage (dp_sync);
//  - the k-th embedding-grads-all-reduce of stage 0 with the k-th of stage P-1, same dp rank;
//  - the k-th optimizer-clip-main-grad of every stage, across all dp ranks (dp_sync);
//  - layernorm-grads-all-reduce, no-op p2p ops and unpaired ops: groups of their own.
// Invariants: every communication node is in exactly one group and every compute node in none; a node's
// dependencies are distinct and on the same worker; dependencies and groups form no cycle (BuildOpGraph
// fails otherwise); EventOrder() lists every start, end and group event once, each after its inputs.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/diagnosis/thresholds.h"
#include "core/status.h"

namespace strata::whatif {

/// Op types of op tables. Compute types first, then communication types.
enum class OpType : uint8_t {
  kForwardCompute = 0,
  kBackwardCompute,
  kOptimizer,
  kGc,
  kForwardSend,
  kForwardRecv,
  kBackwardSend,
  kBackwardRecv,
  kParamsAllGather,
  kGradsReduceScatter,
  kLayernormGradsAllReduce,
  kEmbeddingGradsAllReduce,
  kOptimizerClipMainGrad,
};
inline constexpr int kNumOpTypes = 13;

/// The op table's name of `type`, e.g. "forward-compute".
std::string_view OpTypeName(OpType type);
/// The type named `name`, or nullopt for an op type the model does not know.
std::optional<OpType> OpTypeFromName(std::string_view name);
/// Every op type the what-if knows, "forward-compute, backward-compute, ...", for messages.
std::string KnownOpTypeNames();
/// Adds an op-map entry (an op table's op type `from` read as the what-if's `to`, --op-map FROM=TO and the
/// Python module's op_map) to `out`; an error when either name is empty or `to` is not a type the what-if
/// knows (its message names no entry: the caller prefixes its own spelling of it).
Status AddOpMapEntry(std::string_view from, std::string_view to, std::map<std::string, std::string, std::less<>>* out);
/// True for the communication types (p2p, dp collectives, all-reduces, optimizer-clip-main-grad).
bool IsCommunication(OpType type);
/// The artifact's coarser grouping used for attribution: p2p sends and recvs merge into
/// "forward-pp-comm" / "backward-pp-comm"; every other type is its own name.
std::string_view OpGroupName(OpType type);

inline constexpr uint32_t kNoGroup = UINT32_MAX;
inline constexpr uint32_t kNoNode = UINT32_MAX;

/// One recorded op of the template (one step of one dp rank): the input of BuildOpGraph.
struct TemplateOp {
  int32_t stage = 0;
  OpType type = OpType::kForwardCompute;
  int32_t seq = 0;     // position among ops of this type on this stage (0, 1, ... in start order)
  int32_t chunk = -1;  // model chunk within the stage (virtual pipeline); -1 when not recorded
  int64_t start_ns = 0;
  int64_t end_ns = 0;
};

/// A node of the graph: one op position of the per-step schedule of one dp rank.
struct OpNode {
  int32_t stage = 0;
  OpType type = OpType::kForwardCompute;
  int32_t seq = 0;
  int32_t chunk = -1;
  uint32_t group = kNoGroup;  // index into OpGraph::groups for communication nodes
  bool no_op = false;         // a p2p op that carried nothing (a group of its own)
};

/// Communication ops that complete together: each ends at the latest start among the members (of the
/// same step; of the same dp rank unless dp_sync, then over all dp ranks) plus its own transfer time.
struct CommGroup {
  std::vector<uint32_t> members;  // node ids, ascending
  bool dp_sync = false;
};

/// A replay event: the start or end of a node, or the moment all members of a group have started.
struct Event {
  enum Kind : uint8_t { kStart, kEnd, kGroup } kind;
  uint32_t id;  // node id (kStart, kEnd) or group id (kGroup)
};

/// Tunables of the model.
struct OpGraphOptions {
  // tolerance of the p2p no-op tests (clock jitter): thresholds::kP2pNoopToleranceNs, 50 us
  int64_t noop_epsilon_ns = diagnosis::thresholds::kP2pNoopToleranceNs;
};

/// The model itself: immutable once built (only BuildOpGraph makes one); see the file comment for the rules
/// and invariants.
class OpGraph {
 public:
  const std::vector<OpNode>& nodes() const { return nodes_; }
  const std::vector<CommGroup>& groups() const { return groups_; }
  std::span<const uint32_t> deps(uint32_t node) const {
    return {deps_.data() + dep_offsets_[node], deps_.data() + dep_offsets_[node + 1]};
  }
  int32_t num_stages() const { return num_stages_; }
  int32_t num_chunks() const { return num_chunks_; }
  /// The node at (stage, type, seq), or kNoNode.
  uint32_t Find(int32_t stage, OpType type, int32_t seq) const;
  /// Number of nodes of (stage, type).
  int32_t Count(int32_t stage, OpType type) const;
  /// Start, end and group events in an order where each comes after every event it waits for.
  const std::vector<Event>& event_order() const { return event_order_; }
  /// "forward-compute#3@stage1": a node's name for messages and tests.
  std::string NodeName(uint32_t node) const;

 private:
  friend Expected<OpGraph> BuildOpGraph(const std::vector<TemplateOp>& ops, const OpGraphOptions& options);
  // The steps of BuildOpGraph.
  Status IndexNodes(const std::vector<TemplateOp>& ops, int32_t max_stage, int32_t max_chunk);
  void AddDependencies(const std::vector<TemplateOp>& ops, const OpGraphOptions& options);
  void AddGroups();
  Status OrderEvents();

  std::vector<OpNode> nodes_;
  std::vector<uint32_t> dep_offsets_;  // CSR: deps of node n are deps_[dep_offsets_[n] .. dep_offsets_[n+1])
  std::vector<uint32_t> deps_;
  std::vector<CommGroup> groups_;
  std::vector<std::vector<uint32_t>> by_stage_type_;  // [stage * kNumOpTypes + type] -> node ids by seq
  std::vector<Event> event_order_;
  int32_t num_stages_ = 0;
  int32_t num_chunks_ = 1;
};

/// Builds the model from the ops of one step of one dp rank (all stages). Nodes keep the input order.
/// Errors: a stage missing, (stage, type) seqs not 0..n-1, or a cycle (naming some ops on it).
Expected<OpGraph> BuildOpGraph(const std::vector<TemplateOp>& ops, const OpGraphOptions& options = {});

}  // namespace strata::whatif
