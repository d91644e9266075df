// Allocator tuning (see allocator_tuning.h). glibc only; a no-op elsewhere.
#include "core/allocator_tuning.h"

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace strata {

void TuneAllocatorForLoading() {
#if defined(__GLIBC__)
  mallopt(M_MMAP_THRESHOLD, 256 << 20);
  mallopt(M_TRIM_THRESHOLD, 512 << 20);
#endif
}

}  // namespace strata
