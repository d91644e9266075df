// NcclLaunchLinks: gives each kernel an NCCL call of an Nsight Systems export launched the call's CollectiveArgs,
// so that NCCL's kernels, the collectives strata matches when a trace has them, carry the call's communicator and
// sequence number (NCCL's NVTX payload, nsys_nccl_payload.h). A kernel was launched by the call whose NVTX range, on
// the thread of the CUDA API call with the kernel's correlation id, holds that API call in time (NCCL launches a
// lone collective's kernel inside its API call; a grouped one's kernel is launched by ncclGroupEnd, outside every
// call's range, and stays without). Kernels are not told apart by name: what an NCCL call launches is NCCL's.
// Invariants: a kernel takes the args of at most one call (the first applied); a kernel that already has args keeps
// them; the importer adds kernels before launches and launches before calls (its reading order).
#pragma once

#include <cstdint>
#include <map>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

#include "store/trace_store.h"

namespace strata::nsys {

class NcclLaunchLinks {
 public:
  /// A kernel of `process` (a globalPid) with `correlation`, stored as `slice`.
  void AddKernel(int64_t process, int64_t correlation, SliceId slice);
  /// A CUDA API call on `thread` (a globalTid of `process`) at `ts` with `correlation`; kept only when it launched
  /// a kernel AddKernel was given.
  void AddLaunch(int64_t thread, int64_t process, int64_t ts, int64_t correlation);
  /// An NCCL call's NVTX range on `thread` over [start, end] whose args are collective_args[`args`].
  void AddCall(int64_t thread, int64_t start, int64_t end, uint32_t args);
  /// Gives each kernel launched inside a call's range the call's args; returns how many kernels took them.
  size_t Apply(SliceTable* slices);

 private:
  std::map<std::pair<int64_t, int64_t>, SliceId> kernels_;  // (process, correlation) -> kernel slice
  std::unordered_map<int64_t, std::vector<std::pair<int64_t, SliceId>>> launches_;  // thread -> (ts, kernel)
  std::vector<std::tuple<int64_t, int64_t, int64_t, uint32_t>> calls_;              // (thread, start, end, args)
};

}  // namespace strata::nsys
