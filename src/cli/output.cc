// Atomic output writing (see output.h).
#include "cli/output.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace strata {

Status WriteOutput(const std::string& path, const std::string& content) {
  if (path.empty() || path == "-") {
    std::fwrite(content.data(), 1, content.size(), stdout);
    std::fflush(stdout);
    return Status::Ok();
  }
  const std::string tmp = fmt::format("{}.tmp.{}", path, ::getpid());
  FILE* f = std::fopen(tmp.c_str(), "wb");
  if (!f) return Status::Error(fmt::format("-o {}: cannot write: {}", path, std::strerror(errno)));
  const bool ok = std::fwrite(content.data(), 1, content.size(), f) == content.size() && std::fflush(f) == 0;
  const int err = errno;
  std::fclose(f);
  if (!ok || std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    return Status::Error(fmt::format("-o {}: cannot write: {}", path, std::strerror(ok ? errno : err)));
  }
  return Status::Ok();
}

}  // namespace strata
