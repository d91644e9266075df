// The communication path of a run (issue 25, item 3): per communicator and collective op, how long its calls
// took, how much of that was the transfer and how much was waiting for a late peer, the bytes each call moved
// and the bus bandwidth by NCCL's formulas (nccl-tests' PERFORMANCE.md: algbw = bytes / transfer time, busbw =
// algbw × 2(n−1)/n for all_reduce, × (n−1)/n for all_gather, reduce_scatter and all_to_all, × 1 for broadcast,
// reduce and point-to-point). Built from the job model's matched collectives, complete instances of two or
// more members only.
//
// The split: when the calls' ends are a common instant (a blocking collective: every member returns when the
// data has moved), the member that arrived last spent only the transfer inside, so an instance's transfer is
// its fastest member's time in it and the rest of each member's time is waiting for that peer. No clock
// alignment is needed (durations are on each rank's own clock). For CPU-side NCCL calls, which return at launch
// (CollectiveModel::ends_synchronize false), the split is not made: transfer, wait and bandwidth are unknown.
// The bytes of a call are nccl-tests' "size": the larger of its input and output element counts times the
// element size of its dtype (Kineto's "In msg nelems" / "Out msg nelems" / "dtype" args), unknown without them.
//
// Means, not medians, so that the figures add up: time_ms = transfer_ms + wait_ms, and calls × time_ms is a
// member's whole time in the op.
// Cost: O(members) per matched instance, summed as it is read (no instance is kept); O(ranks) memory per row.
// Invariants: ops are ordered by their time per member (calls × time_ms) descending; 0 <= transfer_ms <=
// time_ms and transfer_ms + wait_ms = time_ms when split; bytes, algbw and busbw are -1 when unknown; last_arrivals
// counts instances whose last member arrived at least thresholds::kCommLastArrivalLeadNs after the one before it.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "model/job_model.h"
#include "store/trace_store.h"

namespace strata {

/// One collective op on one communicator, over the run's complete instances of it.
struct CommunicationOp {
  std::string group;        // the communicator as the trace names it (process group name or ranks); "" none
  std::string op;           // all_reduce, all_gather, reduce_scatter, broadcast, ... (OpOfCollective)
  std::string name;         // the calls' name in the trace (kernel or CPU op), the most frequent one
  std::string algorithm;    // NCCL's algorithm and protocol from a kernel's name ("ring LL"), "" unknown
  int32_t members = 0;      // ranks in each instance
  size_t calls = 0;         // complete instances
  double bytes = -1;        // mean bytes per call (nccl-tests' size) over the calls that say, -1 unknown
  double time_ms = 0;       // mean over calls of the members' mean time in the call
  bool split = false;       // transfer and wait were told apart (the calls' ends synchronize)
  double transfer_ms = -1;  // mean over calls of the fastest member's time in it
  double wait_ms = -1;      // mean over calls of the members' mean wait for the last to arrive
  double algbw_gbps = -1, busbw_gbps = -1;    // mean bytes / mean transfer (all bytes over all transfer time), GB/s
  std::map<int32_t, size_t> last_arrivals;    // rank number -> instances it arrived last in (by the lead)
  std::map<int32_t, double> wait_ms_by_rank;  // rank number -> its mean wait per call
};

struct CommunicationTable {
  std::vector<CommunicationOp> ops;
};

/// The communication table of a run (empty when no collective was matched).
CommunicationTable ComputeCommunication(const TraceStore& store, const model::JobModel& job);

/// The collective op a call or kernel name stands for (all_reduce, all_gather, reduce_scatter, all_to_all,
/// broadcast, reduce, barrier, send_recv, send, recv, gather, scatter), from an op's name ("gloo:all_reduce",
/// "nccl:_allgather_base", "c10d::allreduce_") or a kernel's ("ncclDevKernel_AllGather_RING_LL"); the name
/// itself, lower-cased, when none fits.
std::string OpOfCollective(std::string_view name);
/// NCCL's algorithm and protocol named in a kernel's name ("ring LL", "tree LL128", "nvls simple"), or "".
std::string AlgorithmOfKernel(std::string_view name);
/// Bytes per element of a dtype as PyTorch names it (Float, BFloat16, Half, Long, c10::Half, ...), 0 unknown.
int ElementBytes(std::string_view dtype);
/// The bus bandwidth factor of an op over n members (nccl-tests), 0 when it has none.
double BusBandwidthFactor(std::string_view op, int32_t members);

}  // namespace strata
