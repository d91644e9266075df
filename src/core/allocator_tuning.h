// Process-wide malloc settings for loading many files: keep freed large buffers in the heap instead of
// returning them to the kernel, so per-file read windows and parser buffers are reused rather than
// faulted in and zeroed again for every file.
#pragma once

namespace strata {

void TuneAllocatorForLoading();

}  // namespace strata
