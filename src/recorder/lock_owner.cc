// The owner of the lock a thread waits on (see lock_owner.h).
#include "recorder/lock_owner.h"

#include <fmt/format.h>
#include <linux/futex.h>
#include <sys/syscall.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "recorder/process_memory.h"

namespace strata::recorder {
namespace {

constexpr uint64_t kMutexOwnerOffset = 8;  // pthread_mutex_t: int __lock, unsigned __count, int __owner
constexpr uint32_t kFutexOpLockPi2 = 13;   // FUTEX_LOCK_PI2 (Linux 5.14+; older headers lack the name)

struct FutexWait {
  uint64_t address = 0;
  uint32_t op = 0;
};

// The futex a thread waits in, from /proc/PID/task/TID/syscall ("202 0xADDR 0xOP ..."); nullopt otherwise.
std::optional<FutexWait> FutexOf(const std::string& syscall_file) {
  std::ifstream in(syscall_file);
  std::string line;
  if (!std::getline(in, line)) return std::nullopt;
  std::istringstream fields(line);
  long number = -1;
  std::string address, op;
  if (!(fields >> number >> address >> op) || number != SYS_futex) return std::nullopt;
  try {
    return FutexWait{std::stoull(address, nullptr, 16), static_cast<uint32_t>(std::stoul(op, nullptr, 16))};
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

// The owner a lock's words name, by the layouts of lock_owner.h; 0 when none.
long OwnerOfLock(int pid, const FutexWait& wait) {
  uint32_t word = 0;
  if (!ReadProcessMemory(pid, wait.address, &word, sizeof word)) return 0;
  const uint32_t command = wait.op & FUTEX_CMD_MASK;
  if (command == FUTEX_LOCK_PI || command == kFutexOpLockPi2) return static_cast<long>(word & FUTEX_TID_MASK);
  if (command != FUTEX_WAIT && command != FUTEX_WAIT_BITSET) return 0;
  if (word != 1 && word != 2) return 0;  // not a glibc mutex's locked states
  int32_t owner = 0;
  if (!ReadProcessMemory(pid, wait.address + kMutexOwnerOffset, &owner, sizeof owner)) return 0;
  return owner;
}

}  // namespace

std::optional<long> LockOwnerOf(int pid, long tid, const std::string& proc_root) {
  const std::string task = fmt::format("{}/{}/task/", proc_root, pid);
  const auto wait = FutexOf(fmt::format("{}{}/syscall", task, tid));
  if (!wait) return std::nullopt;
  const long owner = OwnerOfLock(pid, *wait);
  std::error_code ec;
  if (owner <= 0 || owner == tid || !std::filesystem::exists(fmt::format("{}{}", task, owner), ec)) return std::nullopt;
  return owner;
}

}  // namespace strata::recorder
