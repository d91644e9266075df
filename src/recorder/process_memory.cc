// Reading another process's memory (see process_memory.h).
#include "recorder/process_memory.h"

#include <sys/uio.h>

namespace strata::recorder {

bool ReadProcessMemory(pid_t pid, uint64_t address, void* out, size_t size) {
  if (address == 0 || size == 0) return false;
  iovec local{out, size};
  iovec remote{reinterpret_cast<void*>(address), size};
  return process_vm_readv(pid, &local, 1, &remote, 1, 0) == static_cast<ssize_t>(size);
}

uint64_t ReadProcessPointer(pid_t pid, uint64_t address) {
  uint64_t v = 0;
  return ReadProcessMemory(pid, address, &v, sizeof v) ? v : 0;
}

}  // namespace strata::recorder
