// SegmentTail: incremental reads of a growing segment (see segment_tail.h).
#include "segments/segment_tail.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "segments/segment_format.h"
#include "segments/segment_reader.h"

namespace strata::segments {
namespace {

// Reads bytes [from, size) of `fd`; an error names the file.
Expected<std::string> ReadRange(int fd, uint64_t from, uint64_t size, const std::string& path) {
  std::string out(size - from, '\0');
  size_t done = 0;
  while (done < out.size()) {
    const ssize_t got = ::pread(fd, out.data() + done, out.size() - done, static_cast<off_t>(from + done));
    if (got < 0 && errno == EINTR) continue;
    if (got < 0)
      return Status::Resource(fmt::format("{}: read error at byte {}: {}", path, from + done, std::strerror(errno)));
    if (got == 0) break;
    done += static_cast<size_t>(got);
  }
  out.resize(done);
  return out;
}

}  // namespace

Status SegmentTail::Poll() {
  if (stopped_) return Status::Ok();
  const int fd = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Status::Resource(fmt::format("{}: cannot open: {}", path_, std::strerror(errno)));
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return Status::Resource(path_ + ": not a regular file");
  }
  const auto size = static_cast<uint64_t>(st.st_size);
  if (size > kMaxSegmentBytes) {
    ::close(fd);
    stopped_ = true;
    return Status::BadInput(
        fmt::format("{}: larger than {} bytes: not a segment strata record writes", path_, kMaxSegmentBytes));
  }
  if (size <= consumed_ || (consumed_ == 0 && size < kFileHeaderSize)) {
    ::close(fd);
    return Status::Ok();
  }
  auto bytes = ReadRange(fd, consumed_, size, path_);
  ::close(fd);
  if (!bytes.ok()) return bytes.status();
  std::string_view view = bytes.value();
  if (consumed_ == 0) {
    auto header = ParseSegmentHeader(view, path_, &data_);
    if (!header.ok()) {
      stopped_ = true;
      return header.status();
    }
    consumed_ = header.value();
    view.remove_prefix(header.value());
  }
  const BlockScan scan = ParseSegmentBlocks(view, consumed_, size, &decoded_, &data_);
  consumed_ += scan.end;
  if (!scan.problem.empty() && !scan.incomplete) {
    data_.problems.push_back(scan.problem);
    stopped_ = true;
  }
  return Status::Ok();
}

}  // namespace strata::segments
