// Timeline model of the synthetic generator: simulates one data-parallel replica (all pp x tp ranks of one
// model copy) through one training step and emits each rank's events, in that rank's program order, to
// a sink (or to none, for the timing pass).
//
// The model, per rank: a host thread runs the training loop (ProfilerStep#N annotation, data loading,
// cpu_ops that launch kernels through cudaLaunchKernel, NCCL ops, optimizer, loss.item() with a
// cudaStreamSynchronize at the end of the step); the GPU runs kernels in launch order, each starting at
// max(device free, launch + launch latency). Collectives and point-to-point transfers follow NCCL's
// blocking semantics: every member's kernel starts when that member arrives and ends at
// (latest arrival in the group + transfer time), so a late member makes the others wait and itself
// records the shortest kernel. Schedule: GPipe-style pipeline (all forward microbatches, then all
// backward ones), a TP all-reduce after the attention and the MLP of every layer (forward and backward),
// send/recv between neighbouring stages per microbatch (the recv completes only after the send started),
// and one DP gradient all-reduce per step, whose completion couples the replicas (the caller computes it
// from every replica's arrival: RunToDataParallel, then FinishStep).
//
// Invariants: every duration is a pure function of (seed, rank or group, step, op index) — no state is
// carried between replicas — so the timing pass and the writing pass compute identical times; times are
// true-clock nanoseconds from the job start (the writer adds per-rank clock offsets).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "synth/faults.h"
#include "synth/layout.h"

namespace strata::synth {

struct JobConfig {
  Layout layout;
  int64_t steps = 6;
  int64_t first_step = 1;  // ProfilerStep number of the first step
  int64_t layers = 8;
  int64_t microbatches = 1;
  uint64_t seed = 1;
  FaultPlan fault;
  bool counters = false;
};

/// NCCL arguments of a communication kernel, as Kineto writes them.
struct CollArgs {
  const char* collective = "";  // "allreduce", "send", "recv"
  int64_t nelems = 0;
  int64_t group_id = 0;
  int64_t group_size = 0;
  const char* group_desc = "";
  std::string ranks;  // "[0, 1]"; empty for large groups (Kineto's list would dwarf the event)
};

struct SynthEvent {
  enum class Kind : uint8_t { kCpuOp, kUserAnnotation, kRuntime, kKernel, kMemcpy, kMemset, kCounter };
  Kind kind = Kind::kCpuOp;
  std::string_view name;
  int64_t ts_ns = 0, dur_ns = 0;
  int64_t correlation = -1;  // runtime / device events
  int64_t stream = -1;       // device events
  bool flow = false;         // runtime event that launched a device event (ac2g flow start)
  const CollArgs* coll = nullptr;
  double value = 0;  // counters
};

class RankSink {
 public:
  virtual ~RankSink() = default;
  virtual void Emit(const SynthEvent& e) = 0;
  /// Completes the output.
  virtual Status Finish() { return Status::Ok(); }
};

/// How strongly the fault acts, derived once per job from a clean calibration step.
struct FaultEffect {
  double clean_step_ns = 0;
  double kernel_factor = 1;    // slow_compute (GEMMs only), thermal_throttling, stage_imbalance (all)
  double transfer_factor = 1;  // slow_communication, network_contention
  double memcpy_factor = 1;    // pcie_pressure
  int64_t host_extra_ns = 0;   // launch_overhead: added to each compute op's host time
  int64_t stall_ns = 0;        // dataloader_stall, gc_pause
  double imbalance_ns = 0;     // data_imbalance: largest extra compute of a replica in a step
};

class ReplicaSim {
 public:
  /// `sinks`: one per local rank (stage * tp + tp rank), or empty for timing only.
  ReplicaSim(const JobConfig& cfg, const FaultEffect& effect, int64_t replica, std::vector<RankSink*> sinks);

  /// Starts step `index` (0-based) with each local rank's host starting at `start[i]`.
  void BeginStep(int64_t index, const int64_t* start);
  /// Runs the step up to each rank's arrival at the DP gradient all-reduce.
  void RunToDataParallel();
  int64_t DpArrival(size_t local) const { return ranks_[local].dp_arrival; }
  /// DP all-reduce transfer time of the DP group of local rank `local` in step `index`.
  int64_t DpTransfer(size_t local, int64_t index) const;
  /// Finishes the step given each local rank's DP all-reduce completion; NextStart() is then the next
  /// step's start.
  void FinishStep(const int64_t* dp_end);
  int64_t NextStart(size_t local) const { return ranks_[local].host; }

  /// Quantities of one clean step of stage `stage` (per rank), for scaling faults.
  struct StageCost {
    double kernel_ns = 0, gemm_ns = 0, memcpy_ns = 0, transfer_ns = 0;
    int64_t compute_ops = 0;
  };
  StageCost Cost(int64_t stage) const;

 private:
  struct Rank {
    int64_t rank = 0;
    Coord c;
    int64_t host = 0, gpu = 0;
    int64_t step_start = 0;
    int64_t k = 0;  // op index within the step (correlation ids and draws)
    int64_t dp_arrival = 0, dp_launch = 0, dp_corr = 0;
    bool hit = false;  // the fault acts on this rank in this step
    RankSink* sink = nullptr;
  };
  struct Launch {
    int64_t ts = 0;
    int64_t corr = 0;
  };

  void Emit(Rank& r, const SynthEvent& e) {
    if (r.sink) r.sink->Emit(e);
  }
  Launch HostOp(Rank& r, std::string_view op, int64_t cost_ns, std::string_view runtime = "cudaLaunchKernel",
                SynthEvent::Kind op_kind = SynthEvent::Kind::kCpuOp);
  void Compute(Rank& r, std::string_view op, std::string_view kernel, double base_us, bool gemm);
  void Memcpy(Rank& r, std::string_view op, std::string_view kernel, double base_us, bool memset);
  void TensorAllReduce(int64_t stage, int64_t occurrence);
  void PointToPoint(int64_t from_stage, int64_t to_stage, int64_t mb, int64_t dir);
  void Forward(int64_t stage, int64_t mb);
  void Backward(int64_t stage, int64_t mb);
  void Counters(Rank& r, int64_t end);
  int64_t LayersOf(int64_t stage) const;
  Rank& At(int64_t stage, int64_t t) { return ranks_[static_cast<size_t>(stage * cfg_.layout.tp() + t)]; }
  bool CommSlow(const std::vector<int64_t>& members) const;

  const JobConfig& cfg_;
  FaultEffect effect_;
  int64_t replica_ = 0;
  int64_t index_ = 0, step_ = 0;
  std::vector<Rank> ranks_;
  std::vector<double> imbalance_by_stage_;  // data_imbalance: this replica's kernel factor per stage, this step
};

/// Runs one clean calibration step of replica 0 and derives the fault's strength from it.
FaultEffect CalibrateFault(const JobConfig& cfg);

}  // namespace strata::synth
