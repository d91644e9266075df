// Implementation of the pseudo-file reading and parsing helpers (see proc_file.h).
#include "recorder/host/proc_file.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include <charconv>

namespace strata::recorder {
namespace {

ReadResult ClassifyErrno(int err) {
  return (err == ENOENT || err == ESRCH || err == ENOTDIR) ? ReadResult::kMissing : ReadResult::kError;
}

}  // namespace

ReadResult FileReader::Read(const std::string& path) { return ReadAt(AT_FDCWD, path.c_str()); }

ReadResult FileReader::ReadAt(int dir_fd, const char* relative_path) {
  size_ = 0;
  const int fd = ::openat(dir_fd, relative_path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    errno_ = errno;
    return ClassifyErrno(errno_);
  }
  const ReadResult result = ReadFd(fd);
  ::close(fd);
  return result;
}

ReadResult FileReader::Reread(int fd) {
  size_ = 0;
  return ReadFd(fd);
}

ReadResult FileReader::ReadFd(int fd) {
  if (buffer_.size() < 4096) buffer_.resize(4096);
  for (;;) {
    if (size_ == buffer_.size()) buffer_.resize(buffer_.size() * 2);
    const ssize_t n = ::pread(fd, buffer_.data() + size_, buffer_.size() - size_, static_cast<off_t>(size_));
    if (n < 0) {
      if (errno == EINTR) continue;
      errno_ = errno;
      size_ = 0;
      return ClassifyErrno(errno_);
    }
    if (n == 0) return ReadResult::kOk;
    size_ += static_cast<size_t>(n);
  }
}

UniqueFd& UniqueFd::operator=(UniqueFd&& other) noexcept {
  if (this != &other) {
    Reset();
    fd_ = std::exchange(other.fd_, -1);
  }
  return *this;
}

UniqueFd::~UniqueFd() { Reset(); }

void UniqueFd::Reset() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

size_t SplitFields(std::string_view line, std::vector<std::string_view>* fields) {
  fields->clear();
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
    const size_t start = i;
    while (i < line.size() && line[i] != ' ' && line[i] != '\t') ++i;
    if (i > start) fields->push_back(line.substr(start, i - start));
  }
  return fields->size();
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\n')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\n')) s.remove_suffix(1);
  return s;
}

std::optional<uint64_t> ParseU64(std::string_view s) {
  uint64_t value = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (ec != std::errc() || end != s.data() + s.size() || s.empty()) return std::nullopt;
  return value;
}

std::optional<int64_t> ParseI64(std::string_view s) {
  int64_t value = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (ec != std::errc() || end != s.data() + s.size() || s.empty()) return std::nullopt;
  return value;
}

std::optional<double> ParseDouble(std::string_view s) {
  double value = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (ec != std::errc() || end != s.data() + s.size() || s.empty()) return std::nullopt;
  return value;
}

std::optional<uint64_t> FindKeyValue(std::string_view text, std::string_view key) {
  std::optional<uint64_t> found;
  ForEachLine(text, [&](std::string_view line) {
    if (found || line.size() <= key.size() || line.substr(0, key.size()) != key) return;
    if (line[key.size()] != ' ' && line[key.size()] != '\t') return;
    found = ParseU64(Trim(line.substr(key.size() + 1)));
  });
  return found;
}

std::optional<uint64_t> FindStatusValue(std::string_view text, std::string_view key) {
  std::optional<uint64_t> found;
  ForEachLine(text, [&](std::string_view line) {
    if (found || line.size() <= key.size() || line.substr(0, key.size()) != key || line[key.size()] != ':') return;
    std::string_view rest = Trim(line.substr(key.size() + 1));
    const size_t space = rest.find_first_of(" \t");
    if (space != std::string_view::npos) rest = rest.substr(0, space);
    found = ParseU64(rest);
  });
  return found;
}

std::vector<std::string> ListDirectory(const std::string& path) {
  std::vector<std::string> names;
  DIR* dir = ::opendir(path.c_str());
  if (dir == nullptr) return names;
  while (const dirent* entry = ::readdir(dir)) {
    const std::string_view name = entry->d_name;
    if (name == "." || name == "..") continue;
    names.emplace_back(name);
  }
  ::closedir(dir);
  return names;
}

bool IsAllDigits(std::string_view s) {
  if (s.empty()) return false;
  for (const char c : s) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

}  // namespace strata::recorder
