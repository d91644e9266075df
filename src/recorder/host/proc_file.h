// Small helpers for the host-counter readers: read a /proc or /sys file whole into a reused buffer, and
// split and parse its text without allocating. Invariants: a read never throws and tells a vanished
// file (ENOENT/ESRCH: the process or thread exited, the device went away) from an unreadable one;
// parsers return std::nullopt / false on anything malformed instead of guessing a value.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace strata::recorder {

enum class ReadResult {
  kOk,
  kMissing,  // ENOENT, ESRCH, ENOTDIR: gone (process exit) or never there (optional source)
  kError,    // anything else (EACCES, EIO, ...): see FileReader::error()
};

/// Reads small pseudo-files whole with open/read/close into a buffer kept across calls.
class FileReader {
 public:
  ReadResult Read(const std::string& path);
  /// Path relative to an open directory (cheaper lookups for many files under one /proc/PID/task).
  ReadResult ReadAt(int dir_fd, const char* relative_path);
  /// Reads an already open file again from its start (a /proc file kept open gives fresh values).
  ReadResult Reread(int fd);

  std::string_view text() const { return std::string_view(buffer_.data(), size_); }
  int error() const { return errno_; }  // errno of the last failed read

 private:
  ReadResult ReadFd(int fd);
  std::string buffer_;
  size_t size_ = 0;
  int errno_ = 0;
};

/// Owns a file descriptor: closed on destruction, movable.
class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : fd_(fd) {}
  UniqueFd(UniqueFd&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  UniqueFd& operator=(UniqueFd&& other) noexcept;
  ~UniqueFd();
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  int get() const { return fd_; }
  void Reset();

 private:
  int fd_ = -1;
};

/// Calls fn(line) for each line of text (without the '\n'); empty lines are skipped.
template <typename Fn>
void ForEachLine(std::string_view text, Fn&& fn) {
  while (!text.empty()) {
    const size_t end = text.find('\n');
    const std::string_view line = text.substr(0, end);
    if (!line.empty()) fn(line);
    if (end == std::string_view::npos) break;
    text.remove_prefix(end + 1);
  }
}

/// Splits on spaces and tabs into `fields` (cleared first); returns the count.
size_t SplitFields(std::string_view line, std::vector<std::string_view>* fields);

std::string_view Trim(std::string_view s);
std::optional<uint64_t> ParseU64(std::string_view s);
std::optional<int64_t> ParseI64(std::string_view s);
std::optional<double> ParseDouble(std::string_view s);

/// For "key value" lines (cpu.stat, memory.stat, memory.events): the value of `key`, if present and numeric.
std::optional<uint64_t> FindKeyValue(std::string_view text, std::string_view key);

/// For "Key:\tvalue [kB]" lines (/proc/PID/status): the number after `key:`, if present.
std::optional<uint64_t> FindStatusValue(std::string_view text, std::string_view key);

/// Lists the entries of a directory (without "." and ".."); empty when it cannot be opened.
std::vector<std::string> ListDirectory(const std::string& path);

bool IsAllDigits(std::string_view s);

}  // namespace strata::recorder
