// Evidence of stragglers and findings as typed values (DESIGN.md "Output contract", evidence objects): one
// struct per kind of evidence, built by the analysis passes and rendered by reports (the JSON writer names
// the keys, orders them and rounds the numbers; the text and HTML reports read the structs).
// Invariants: numbers are kept as measured (unrounded) in the unit their name says (ms, share = 0..1,
// ratio); a list keeps the order the analysis put it in (the JSON lists it in that order); a straggler or
// finding carries at most one kind, plus the refinements later passes add (counters, cross-layer
// comparison) and the source of its lateness ("from").
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "analysis/diagnosis/contract_vocabulary.h"
#include "analysis/diagnosis/rank_state.h"

namespace strata::diagnosis {

// ---- Stragglers ----------------------------------------------------------------------------------------

// A straggler of the trace path (data-parallel phases): its time in collectives against its peers', its
// blame per step, and the KS test of its arrival lateness.
struct TraceStragglerEvidence {
  double collective_ms = 0, peer_collective_ms = 0;
  std::vector<std::pair<int64_t, double>> late_ms_by_step;  // (step, blame in ms), in step order
  double ks_score = 0, ks_robust_z = 0;
};

// A straggler of the grouped-trace path: its pipeline stage and, for a rank-level straggler, its excess
// outside collectives and in transfers over its stage peers (absent for the members of a slow stage).
struct GroupStragglerEvidence {
  int32_t stage = 0;
  std::optional<double> self_excess_ms, transfer_excess_ms;
};

// A straggling worker of the op-table path: its place in the layout and its what-if excess.
struct WorkerStragglerEvidence {
  int32_t dp_rank = 0, stage = 0;
  double what_if_ratio = 1, robust_z = 0;
};

// A straggler found from the recording alone: its link busy far longer than its peers' (from "recorder: link").
struct RecordedLinkEvidence {
  double link_busy_share = 0, peers_link_busy_share = 0;
};

// A straggler found from the recording alone: CPU wait behind other processes or cgroup throttling beyond its
// peers' (from "recorder: cpu").
struct RecordedCpuEvidence {
  double cpu_excess_share = 0, runq_other_process_share = 0, cgroup_throttled_share = 0;
};

struct StragglerEvidence {
  std::variant<std::monostate, TraceStragglerEvidence, GroupStragglerEvidence, WorkerStragglerEvidence,
               RecordedLinkEvidence, RecordedCpuEvidence>
      kind;
  EvidenceSource from = EvidenceSource::kNone;  // which source its lateness came from (until a pass marks it: none)
};

// ---- Findings ------------------------------------------------------------------------------------------

// How the late arrival came about (KAIR-style backward blame).
enum class BlameKind { kDependencyEdge, kHostGap, kUnexplained, kSlowOp };

struct OpExcess {
  std::string op;
  double excess_ms = 0;  // per step, over the peers' median
};

// One op identity of the straggler that stands out against its peers and its own other steps.
struct OpOutlierEvidence {
  std::string op;
  uint32_t occurrence = 0;
  double duration_ms = 0, peer_ms = 0, excess_ms = 0;
  std::optional<double> z_across_ranks, z_across_steps, start_offset_z_across_ranks;
};

// A late rank of the trace path against its peers over its late steps (per late step unless said).
struct TraceRankEvidence {
  double late_ms_per_step = 0, late_ms_per_late_step = 0, explained_share = 0;
  std::vector<int64_t> late_steps;
  double window_ms = 0, peer_window_ms = 0;
  struct Excess {
    double compute = 0, data_loading = 0, host_gap = 0, device_busy = 0, device_idle = 0;
  } excess_ms;
  std::vector<OpExcess> op_excess_per_step;  // largest first, at most 5
  std::vector<OpOutlierEvidence> op_outliers;
  BlameKind blame_kind = BlameKind::kSlowOp;
  double step_start_delay_ms = 0;
  std::string blame;  // the blame chain in words
  double collective_ms = 0, peer_collective_ms = 0;
};

// A late rank of the grouped-trace path against the peers of its pipeline stage. The excess by class and
// the ops are those of a rank slow outside collectives (absent when its transfers are the cause).
struct GroupRankEvidence {
  struct Excess {
    double data_loading = 0, host_gap = 0, host_compute = 0, device_busy = 0, device_idle = 0;
  };
  std::optional<Excess> excess_ms;
  double peer_device_busy_ms = 0;            // with excess_ms: the stage peers' median device busy per step
  std::vector<OpExcess> op_excess_per_step;  // with excess_ms only
  BlameKind blame_kind = BlameKind::kSlowOp;
  double late_ms_per_step = 0, late_ms_per_late_step = 0, explained_share = 0;
  std::vector<int64_t> late_steps;
  int32_t stage = 0;
  size_t peers = 0;
  double self_excess_ms = 0, transfer_excess_ms = 0;
};

// A pipeline stage of the grouped-trace path doing more work per step than the other stages.
struct StageExcessEvidence {
  double stage_excess_ms = 0;
  std::vector<int64_t> late_steps;
  std::vector<OpExcess> op_excess_per_step;
};

// A pipeline stage of the op-table path slower than the others on every dp rank (what-if ratios).
struct StageRatioEvidence {
  double stage_ratio = 1;
  std::vector<std::pair<int32_t, double>> by_stage;  // (stage, ratio)
};

// A straggling worker of the op-table path: its straggler evidence and its compute against its stage peers.
struct WorkerEvidence {
  WorkerStragglerEvidence worker;
  double compute_ratio_vs_stage_peers = 1, excess_ms_per_step = 0, compute_excess_ms_per_step = 0;
  double explained_share = 0;
};

// Data imbalance of the op-table path: the slowest dp rank changes from step to step.
struct DpImbalanceEvidence {
  std::vector<std::pair<int32_t, double>> by_dp_rank;  // (dp rank, what-if ratio)
  std::vector<int32_t> dp_ranks_slowest_in_some_step;
};

// Data imbalance of the trace paths: ranks late in turn whose ops ran slower across the board.
struct LoadImbalanceEvidence {
  size_t late_pairs = 0, broad_late_pairs = 0;
  double op_scaling_median = 1;
  std::optional<double> slowdown;  // the phase replay's (data-parallel trace path only)
};

// A live detection of `strata agent` from the step summaries: its lateness by the deciding score, and the
// largest class's excess over its reference (the peers' median, or the rank's own past when the self score
// decided: the evidence for its cause) with the share of the lateness it covers, both per late step of the run
// that opened it; both scores in the detecting step (analysis/online, online_detector.h), the onset and the
// persistence.
struct DetectionEvidence {
  int64_t first_step = 0;
  double late_ms = 0, group_step_ms = 0;
  bool mixture_corroborates = false;
  double excess_ms = 0, explained_share = 0;
  DecidingScore score = DecidingScore::kPeers;  // which score decided
  int32_t peers = 0;                            // ranks compared with (0: alone, no peer score)
  double peer_late_ms = 0, peer_z = 0;
  int32_t self_history = 0;  // learned steps of the self baseline (0 .. kOnlineSelfWindow)
  bool self_ready = false;   // the self score counts (kOnlineSelfMinHistory steps)
  double self_late_ms = 0, self_z = 0, self_baseline_ms = 0;
  int64_t onset_step = -1;
  double onset_unix = 0;                   // 0: unknown
  std::optional<Persistence> persistence;  // none: not rendered
};

// Where a rank missing from a stalled collective was (stall.h): its state (rank_state.h: a kind and its
// particulars, worded "blocked on a lock (futex)", "on CPU (spinning)", "exited with code 1", ...), since when, the
// frame it was in (Python first: "Python fn (file:line)", else the native culprit), its Python stack (innermost first)
// and kernel function, and the last collective it completed (seq -1: none recorded).
struct StalledRankState {
  int32_t rank = -1;
  RankState state;
  std::string frame;
  std::string native_frame;
  std::vector<std::string> python_stack;
  std::string kernel_wait;  // the kernel function it slept in (wchan), "" unknown
  double since_unix_s = 0;  // in that state since (0 unknown)
  int64_t last_completed_seq = -1;
  std::string last_completed_op;
  // When it entered the stalled collective after its peers had given up on it (timed out and left): it was
  // missing for their whole wait and came back (Unix s; 0: it never entered while the recording lasted).
  double came_back_unix_s = 0;
  Observer observed_by = Observer::kNone;
  bool data_loading = false;    // its Python stack runs PyTorch's data loading (not rendered: sets the layer)
  uint32_t lock_owner_tid = 0;  // the thread holding the lock it waits on, when the lock names it (0 unknown)
  // The rank's other threads the recorder found off CPU during the stall (thread_state records), those not
  // idle in a lock, condition or event wait first (a thread holding the lock the main thread waits for).
  struct OtherThread {
    uint32_t tid = 0;
    std::string name;
    RankState state;
    double since_unix_s = 0;
    bool idle = false;                      // waits in futex, poll, epoll or select: what an idle pool thread does
    std::string frame;                      // its innermost Python frame, "Python fn (file:line)"; "" none recorded
    std::vector<std::string> python_stack;  // innermost first
  };
  std::vector<OtherThread> other_threads;
};
// A job that stopped (cause hang) or ranks that disagree on a collective (cause collective_mismatch): the
// communicator and sequence number, who waits in it and who is missing, since when (Unix seconds) and how
// long, each missing rank's whereabouts, and the wavefront (a missing rank waiting in another communicator,
// followed to the rank that holds that one up). For a mismatch, which ranks called which op, count and bytes.
struct StallEvidence {
  std::string communicator;
  int64_t seq = 0;
  std::string op;
  std::vector<int32_t> waiting_ranks, missing_ranks;
  double stalled_since_unix = 0, stalled_for_s = 0, threshold_s = 0;
  bool ongoing = false;  // still stalled at the end of what was recorded (live: now)
  std::vector<StalledRankState> missing;
  std::vector<std::string> wavefront;
  struct Call {
    std::string op;
    uint64_t count = 0;  // elements (the NCCL API); 0 unread
    uint64_t bytes = 0;  // bytes of gloo's buffers; 0 unread
    std::vector<int32_t> ranks;
    std::string sizes;   // the input tensors' shapes, "[[1024], [8]]" (Flight Recorder dumps); "" unread
    std::string dtypes;  // their dtypes, "Float" (Flight Recorder dumps); "" unread
  };
  std::vector<Call> calls;  // mismatch: one entry per distinct (op, count, bytes)
};
// A host counter of the finding's rank against its peers' median over its late steps.
struct CounterComparison {
  std::string counter;  // "sm_clock", "pcie_bytes", "nic_bytes"
  double rank = 0, peers = 0;
  std::string source;  // where the rank's series came from: "recording" (strata record's NVML series) or "trace"
};

// Per-rank layer metrics of a recording (cross_layer.h); declared here so that findings can hold them.
struct RankLayerMetrics {
  double window_s = 0;
  double runq_share = 0;          // runnable, waiting for a CPU
  double runq_foreign_share = 0;  // ... while a process outside the job's ranks held that CPU
  double runq_idle_share = 0;     // ... while the CPU was idle (bandwidth throttling, migration)
  double throttled_share = 0;     // cgroup cpu.stat throttled time
  double gc_share = 0;            // Python GC pauses
  double dstate_share = 0;        // uninterruptible sleep (page faults, reclaim, I/O)
  double sys_share = 0;           // on-CPU in the kernel for the process (fault handling, direct reclaim)
  double majflt_per_s = 0;        // major page faults
  double memcg_fail_per_s = 0;    // memory-cgroup limit hits (failcnt) or high/max events
  double net_bytes_per_s = -1;    // NIC traffic (rx + tx, all but loopback) of the rank's own network
                                  // namespace; -1 when ranks share a namespace (no per-rank traffic)
  double link_busy_share = -1;    // time its busiest link was transferring: the busier direction's bytes
                                  // over the link's capacity (ethtool speed or shaping rate); -1 unknown
  double link_capacity_bps = 0;   // that link's capacity
  // Runnable, waiting for a CPU on waking from an uninterruptible sleep: part of that sleep's cost (overlaps
  // runq_foreign_share and runq_idle_share, which say who held the CPU).
  double runq_after_dstate_share = 0;
  uint64_t gc_count = 0;
  std::string top_foreign;  // comm of the process that most often held the CPU instead
};

// The recording's layers of the finding's rank against its peers' (cross_layer.h). The lateness it
// explains is set when the recording refined a finding of the traces.
struct CrossLayerComparison {
  bool over_late_steps = false;  // measured over the late steps, else over the training window
  RankLayerMetrics straggler;
  std::vector<std::pair<int32_t, RankLayerMetrics>> peers;  // by rank number
  struct Explained {
    double late_share = 0;   // the rank's lateness, share of the time
    double best_excess = 0;  // the largest layer excess, share of the time
  };
  std::optional<Explained> explained;
};

struct FindingEvidence {
  std::variant<std::monostate, TraceRankEvidence, GroupRankEvidence, StageExcessEvidence, StageRatioEvidence,
               WorkerEvidence, DpImbalanceEvidence, LoadImbalanceEvidence, DetectionEvidence, StallEvidence>
      kind;
  std::vector<CounterComparison> counters;     // empty without counters on the rank and its peers
  std::optional<Cause> cause_before_counters;  // when the counters changed the cause
  std::optional<CrossLayerComparison> cross_layer;
  EvidenceSource from = EvidenceSource::kNone;  // which source its lateness came from (until a pass marks it: none)
};

// The blame kind as the output contract names it.
inline const char* BlameKindName(BlameKind k) {
  switch (k) {
    case BlameKind::kDependencyEdge:
      return "dependency_edge";
    case BlameKind::kHostGap:
      return "host_gap";
    case BlameKind::kUnexplained:
      return "unexplained";
    case BlameKind::kSlowOp:
      break;
  }
  return "slow_op";
}

// The late steps the finding's evidence lists (nullptr when its kind has none).
inline const std::vector<int64_t>* LateSteps(const FindingEvidence& e) {
  if (const auto* t = std::get_if<TraceRankEvidence>(&e.kind)) return &t->late_steps;
  if (const auto* g = std::get_if<GroupRankEvidence>(&e.kind)) return &g->late_steps;
  if (const auto* s = std::get_if<StageExcessEvidence>(&e.kind)) return &s->late_steps;
  return nullptr;
}

}  // namespace strata::diagnosis
