// Allocator tuning (see allocator_tuning.h). glibc's allocator only; a no-op elsewhere, including under
// AddressSanitizer, whose allocator replaces glibc's and answers mallopt with 0 (nothing applied).
#include "core/allocator_tuning.h"

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define STRATA_OWN_ALLOCATOR 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define STRATA_OWN_ALLOCATOR 1
#endif
#if defined(__GLIBC__) && !defined(STRATA_OWN_ALLOCATOR)
#define STRATA_GLIBC_ALLOCATOR 1
#include <malloc.h>
#endif

namespace strata {

bool TuneAllocatorForLoading() {
#if defined(STRATA_GLIBC_ALLOCATOR)
  const bool mmap_ok = mallopt(M_MMAP_THRESHOLD, static_cast<int>(kMallocMmapThresholdBytes)) == 1;
  const bool trim_ok = mallopt(M_TRIM_THRESHOLD, static_cast<int>(kMallocTrimThresholdBytes)) == 1;
  return mmap_ok && trim_ok;
#else
  return true;
#endif
}

}  // namespace strata
