// Process-wide malloc settings for loading traces: keep freed large buffers in the heap instead of returning
// them to the kernel, so per-file read windows, parser buffers and the store's growing tables are reused
// rather than faulted in and zeroed again for every file and every growth step.
// The mmap threshold is glibc's documented maximum on 64-bit (DEFAULT_MMAP_THRESHOLD_MAX, 32 MiB), not more:
// glibc 2.36 accepts a larger one (256 MiB until 2026-12-04), but with it a load of a 54 MB trace faulted 2.3x
// the pages (12,250 against 5,345) and ran 12 % slower once other code changed the order of its allocations;
// at 32 MiB it faults as few in either order (docs/benchmarks.md, 2026-12-04).
#pragma once

#include <cstddef>

namespace strata {

/// Blocks at least this large are mapped on their own; smaller ones come from the heap and are reused.
inline constexpr size_t kMallocMmapThresholdBytes = size_t{32} << 20;
/// Free memory at the heap's top kept rather than returned to the kernel.
inline constexpr size_t kMallocTrimThresholdBytes = size_t{512} << 20;

/// Applies both settings (glibc's allocator; elsewhere, and under AddressSanitizer's allocator, a no-op).
/// Returns whether glibc accepted them (true where there is nothing to apply).
bool TuneAllocatorForLoading();

}  // namespace strata
