// Linking NCCL kernels to the NCCL calls that launched them (see nsys_nccl_launches.h).
#include "importers/nsys_nccl_launches.h"

#include <algorithm>

namespace strata::nsys {

void NcclLaunchLinks::AddKernel(int64_t process, int64_t correlation, SliceId slice) {
  if (correlation >= 0) kernels_.emplace(std::make_pair(process, correlation), slice);
}

void NcclLaunchLinks::AddLaunch(int64_t thread, int64_t process, int64_t ts, int64_t correlation) {
  if (auto it = kernels_.find({process, correlation}); it != kernels_.end())
    launches_[thread].emplace_back(ts, it->second);
}

void NcclLaunchLinks::AddCall(int64_t thread, int64_t start, int64_t end, uint32_t args) {
  if (launches_.count(thread)) calls_.emplace_back(thread, start, end, args);
}

size_t NcclLaunchLinks::Apply(SliceTable* slices) {
  for (auto& [thread, launches] : launches_) std::sort(launches.begin(), launches.end());
  size_t linked = 0;
  for (const auto& [thread, start, end, args] : calls_) {
    const auto& launches = launches_[thread];
    auto it = std::lower_bound(launches.begin(), launches.end(), std::make_pair(start, SliceId(0)));
    for (; it != launches.end() && it->first <= end; ++it) {
      const uint32_t kernel = it->second.value;
      if (slices->flags[kernel] & kSliceCollectiveArgs) continue;
      slices->args[kernel] = args;
      slices->flags[kernel] |= kSliceCollectiveArgs;
      ++linked;
    }
  }
  return linked;
}

}  // namespace strata::nsys
