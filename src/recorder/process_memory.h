// Reading another process's memory (process_vm_readv): what the recorder's user-space readers of a live
// process (Python code names and frames, a lock's owner) share. The reader needs ptrace access to the process
// (root, or its parent under Yama's default); a read that fails or is short returns false and writes nothing
// useful: callers treat it as "unknown", never as a value.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>

namespace strata::recorder {

/// Reads `size` bytes at `address` of process `pid` into `out`; false when any part cannot be read.
bool ReadProcessMemory(pid_t pid, uint64_t address, void* out, size_t size);

/// The 8-byte pointer at `address` of `pid`; 0 when it cannot be read.
uint64_t ReadProcessPointer(pid_t pid, uint64_t address);

}  // namespace strata::recorder
