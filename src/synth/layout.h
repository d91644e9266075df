// Layout: the DP x PP x TP decomposition of a synthetic job and its process groups.
// Global rank order is Megatron-like with tensor parallelism fastest: rank = (dp * pp + stage) * tp + tp_rank,
// so one data-parallel replica (all stages and tensor ranks of one model copy) is a contiguous block of
// pp * tp ranks. Process groups: one TP group per (replica, stage); one DP group per (stage, tp rank);
// one point-to-point pair group per (replica, stage boundary, tp rank). Each group has a stable numeric
// name (as PyTorch names process groups) and a members list.
// Invariants: dp, pp, tp >= 1 and dp * pp * tp == world size; group ids are unique across kinds.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/status.h"

namespace strata::synth {

struct Coord {
  int64_t dp = 0, stage = 0, tp = 0;
};

enum class GroupKind { kTensor, kData, kPipePair };

class Layout {
 public:
  Layout() = default;
  Layout(int64_t dp, int64_t pp, int64_t tp) : dp_(dp), pp_(pp), tp_(tp) {}

  int64_t dp() const { return dp_; }
  int64_t pp() const { return pp_; }
  int64_t tp() const { return tp_; }
  int64_t world() const { return dp_ * pp_ * tp_; }
  int64_t replica_size() const { return pp_ * tp_; }

  int64_t RankOf(const Coord& c) const { return (c.dp * pp_ + c.stage) * tp_ + c.tp; }
  Coord CoordOf(int64_t rank) const {
    Coord c;
    c.tp = rank % tp_;
    c.stage = (rank / tp_) % pp_;
    c.dp = rank / (tp_ * pp_);
    return c;
  }

  /// Process-group id (its "Process Group Name") of a rank's group of the given kind. For kPipePair,
  /// the pair between `stage` and `stage + 1` of the rank's replica and tensor rank.
  int64_t GroupId(GroupKind kind, const Coord& c) const;
  /// Members of the group, in rank order. Pair groups: {stage, stage + 1}.
  std::vector<int64_t> Members(GroupKind kind, const Coord& c) const;
  int64_t GroupSize(GroupKind kind) const {
    return kind == GroupKind::kTensor ? tp_ : kind == GroupKind::kData ? dp_ : 2;
  }

 private:
  int64_t dp_ = 1, pp_ = 1, tp_ = 1;
};

/// Checks a requested layout against the world size. Any of dp/pp/tp may be 0 (= derive: tp and pp
/// default to 1, dp takes the rest). An error names the offending argument.
Status ResolveLayout(int64_t ranks, int64_t dp, int64_t pp, int64_t tp, Layout* out);

}  // namespace strata::synth
