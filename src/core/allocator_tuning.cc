// Allocator tuning (see allocator_tuning.h). glibc only; a no-op elsewhere.
#include "core/allocator_tuning.h"

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace strata {

bool TuneAllocatorForLoading() {
#if defined(__GLIBC__)
  const bool mmap_ok = mallopt(M_MMAP_THRESHOLD, static_cast<int>(kMallocMmapThresholdBytes)) == 1;
  const bool trim_ok = mallopt(M_TRIM_THRESHOLD, static_cast<int>(kMallocTrimThresholdBytes)) == 1;
  return mmap_ok && trim_ok;
#else
  return true;
#endif
}

}  // namespace strata
