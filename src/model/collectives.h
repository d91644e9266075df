// Collectives across ranks: finds each rank's collective calls and matches the k-th call of the same
// collective in the same step and process group on every rank of that group (DESIGN.md, Diagnosis 2). Sources:
// NCCL/RCCL kernels on GPU streams when any rank has them ("gpu-kernels"), else CPU-side collective ops such as
// gloo:all_reduce or nccl:all_reduce ("cpu-ops"; a `family:op` name is a CPU op, never a kernel, even though
// HTA's kernel classification would call `nccl:...` communication). A kernel belongs to the step of the CPU
// call that launched it (matched by correlation id): kernels launched late in step k often run after the CPU
// side of step k has ended, and must not be counted in step k+1 or dropped. When the trace has no steps, the period of
// the collective sequence defines them (prefix function over the call keys; "detected-period"). Process groups: a
// call's group is its "Process Group Name" (else its "Process Group Ranks" text) when the trace records NCCL args;
// calls without them share one group. When every call carries a group and a sequence number on it (NCCL's NVTX
// payloads in an Nsight Systems export), calls are matched by (group, sequence number, key) instead of by order,
// which a rank whose trace begins a call late cannot mislead. An instance is complete when all of its group's members
// have it (the "Group size" arg, else every rank). Invariants: a matched instance holds at most one call per rank;
// calls keep store order within a rank.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "model/step_windows.h"
#include "store/trace_store.h"

namespace strata::model {

struct CollectiveCall {
  SliceId slice;                     // its row in the store's slices
  StringId key;                      // the collective's name (kernel or op name)
  int64_t start_ns = 0, end_ns = 0;  // rank clock
  int64_t launch_ns = -1;            // GPU kernels: start of the CPU call that launched it (same correlation), or -1
  int64_t step = -1;                 // the step of its launch (kernels) or of its start (CPU ops)
  uint32_t ordinal = 0;              // index among calls with the same key and group in the same step on this rank
  StringId group;                    // process group (0 = none recorded)
  int32_t group_size = -1;
  int64_t seq = -1;  // its sequence number on its group (CollectiveArgs::seq), -1 when not recorded
};

struct MatchedCollective {
  StringId key;
  int64_t step = -1;
  uint32_t ordinal = 0;
  StringId group;
  int64_t seq = -1;           // the calls' sequence number when matched by it, else -1
  std::vector<int32_t> call;  // per rank index: index into calls[rank], or -1 when that rank lacks it
  size_t present = 0;         // ranks that have it
  size_t expected = 0;        // members of its group (the world when no group size is recorded)
  bool complete() const { return present == expected; }
};

/// How calls were matched across ranks: by their order (the k-th call of a key, group and step on every rank), or
/// by (group, sequence number), used when every call carries both (an nsys export with NCCL's NVTX payloads).
enum class CollectiveMatching { kOrder, kSequenceNumber };
/// "order", "sequence-number".
std::string_view CollectiveMatchingName(CollectiveMatching matching);

/// Where the collective calls came from: the GPU's collective kernels, the CPU's collective ops, the op
/// table's collective rows, or nowhere.
enum class CollectiveSource { kNone, kGpuKernels, kCpuOps, kOpTable };
/// "none", "gpu-kernels", "cpu-ops", "op-table": the contract's names.
std::string_view CollectiveSourceName(CollectiveSource source);

/// A CPU-side collective op: `gloo:`, `nccl:`, `mpi:` or `ucc:` followed by the op (a CPU op, never a kernel).
bool IsCpuCollective(std::string_view name);

struct CollectiveModel {
  CollectiveSource source = CollectiveSource::kNone;
  std::vector<std::vector<CollectiveCall>> calls;  // per rank index, in start order
  std::vector<MatchedCollective> matched;          // ordered by (step, first start)
  size_t unmatched_calls = 0;                      // calls whose instance is missing on some member
  bool subgroups = false;                          // some complete instance spans fewer ranks than the world
  // The calls' ends are a common instant of their ranks: false for CPU-side NCCL calls (nccl:*), which
  // return once the kernel is enqueued; their ends only say when each rank launched.
  bool ends_synchronize = true;
  CollectiveMatching matching = CollectiveMatching::kOrder;
};

/// Extracts and matches collectives. When `steps.source` is kNone, `steps` is rewritten with windows
/// from the detected period or, when there is none, with one window per rank spanning its whole trace
/// (step 0; the source stays kNone).
CollectiveModel MatchCollectives(const TraceStore& store, const std::vector<SliceRows>& rows_by_rank, StepModel* steps);

/// Each step's transfer time (ms): over the step's complete instances, the time the last member to arrive spent
/// in the call (the shortest member's call: its ends are a common instant, so it only transferred), summed.
/// Clock-free (durations only). Empty when the calls' ends do not synchronize (CPU-side NCCL calls) or nothing
/// matched. A link slowed in some steps only shows here in those steps, whatever the rank arrivals.
std::map<int64_t, double> TransferMsByStep(const CollectiveModel& model);

/// Smallest p such that `keys` is (a prefix of) a repetition of its first p elements, or 0 when no
/// period repeats at least twice. Exact repeats only (prefix function).
size_t DetectPeriod(const std::vector<StringId>& keys);

}  // namespace strata::model
