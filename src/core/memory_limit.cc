// Memory limit: RLIMIT_AS set once per command, read back for messages.
#include "core/memory_limit.h"

#include <fmt/format.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>

namespace strata {

namespace {

std::atomic<uint64_t> g_limit{0};

constexpr bool UnderSanitizer() {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  return true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || __has_feature(memory_sanitizer)
  return true;
#else
  return false;
#endif
#else
  return false;
#endif
}

}  // namespace

uint64_t PhysicalMemoryBytes() {
  const long pages = ::sysconf(_SC_PHYS_PAGES);
  const long page = ::sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page <= 0) return 0;
  return static_cast<uint64_t>(pages) * static_cast<uint64_t>(page);
}

Expected<uint64_t> ApplyMemoryLimit(uint64_t bytes) {
  if (bytes == 0) return Status::Usage("--max-memory must be more than 0");
  if (UnderSanitizer()) {
    g_limit = bytes;
    return bytes;
  }
  struct rlimit lim {};
  if (::getrlimit(RLIMIT_AS, &lim) != 0)
    return Status::Resource(fmt::format("cannot read the address-space limit: {}", std::strerror(errno)));
  const uint64_t hard = lim.rlim_max == RLIM_INFINITY ? UINT64_MAX : static_cast<uint64_t>(lim.rlim_max);
  const uint64_t soft = lim.rlim_cur == RLIM_INFINITY ? UINT64_MAX : static_cast<uint64_t>(lim.rlim_cur);
  const uint64_t want = std::min({bytes, hard, soft});
  lim.rlim_cur = static_cast<rlim_t>(want);
  if (::setrlimit(RLIMIT_AS, &lim) != 0)
    return Status::Resource(fmt::format("cannot set the memory limit to {} bytes: {}", want, std::strerror(errno)));
  g_limit = want;
  return want;
}

uint64_t MemoryLimitInEffect() { return g_limit; }

std::string DescribeMemoryLimit() {
  const uint64_t limit = g_limit;
  if (limit == 0) return "the machine's memory";
  if (limit >= (1ull << 30))
    return fmt::format("the memory limit (--max-memory {:.1f} GiB)", static_cast<double>(limit) / (1ull << 30));
  return fmt::format("the memory limit (--max-memory {} MiB)", limit >> 20);
}

}  // namespace strata
