// TuneAllocatorForLoading: the settings it asks for are ones glibc accepts and the mmap threshold stays within
// glibc's documented maximum (over it, the import faulted 2.3x the pages: allocator_tuning.h).
#include "core/allocator_tuning.h"

#include <gtest/gtest.h>

namespace strata {
namespace {

TEST(AllocatorTuning, TheSettingsAreAcceptedAndWithinGlibcsMaximum) {
  EXPECT_TRUE(TuneAllocatorForLoading());
  EXPECT_LE(kMallocMmapThresholdBytes, size_t{32} << 20);
  EXPECT_GE(kMallocTrimThresholdBytes, kMallocMmapThresholdBytes);
}

}  // namespace
}  // namespace strata
