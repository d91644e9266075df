// Memory limit: the bound `--max-memory` puts on what one strata command may allocate, so that an input
// larger than the machine ends in an error naming it instead of the kernel's OOM killer or an abort.
// The limit is the process's address-space limit (RLIMIT_AS): allocations past it fail, and the callers
// that import a file turn that failure into an error naming the file (job_loader). Under a sanitizer,
// whose shadow memory needs terabytes of address space, the rlimit is not set and only the loader's own
// accounting (the events kept, TraceStore::memory_bytes) applies.
// Invariant: the limit in effect never exceeds one set before strata started (a lower ulimit wins).
#pragma once

#include <cstdint>
#include <string>

#include "core/status.h"

namespace strata {

/// The machine's physical memory in bytes (the default limit), 0 when unknown.
uint64_t PhysicalMemoryBytes();

/// Sets the limit to `bytes` (or keeps a lower one already in effect); returns the limit in effect.
Expected<uint64_t> ApplyMemoryLimit(uint64_t bytes);

/// The limit last applied (0 = none), for messages.
uint64_t MemoryLimitInEffect();

/// "the memory limit (--max-memory 4.0 GiB)" or, without one, "the machine's memory".
std::string DescribeMemoryLimit();

}  // namespace strata
