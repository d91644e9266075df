// Safe output writing (see output.h).
#include "cli/output.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <random>
#include <string_view>

namespace strata {

namespace {

/// Writes all of `content` to `fd`; false with errno set on failure.
bool WriteAll(int fd, std::string_view content) {
  size_t done = 0;
  while (done < content.size()) {
    const ssize_t n = ::write(fd, content.data() + done, content.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      if (n == 0) errno = EIO;
      return false;
    }
    done += static_cast<size_t>(n);
  }
  return true;
}

std::string DirOf(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

std::string BaseOf(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

}  // namespace

Status CheckHtmlTarget(const std::string& path) {
  if (path.empty())
    return Status::Usage("--format html writes a page: give the file to write with -o, e.g. -o report.html");
  if (path == "-" && ::isatty(STDOUT_FILENO))
    return Status::Usage("--format html -o -: standard output is a terminal; give a file, e.g. -o report.html");
  struct stat st {};
  if (path != "-" && ::stat(path.c_str(), &st) == 0 && S_ISCHR(st.st_mode)) {
    const int fd = ::open(path.c_str(), O_WRONLY | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
    const bool terminal = fd >= 0 && ::isatty(fd);
    if (fd >= 0) ::close(fd);
    if (terminal)
      return Status::Usage(
          fmt::format("--format html -o {}: that is a terminal; give a file, e.g. -o report.html", path));
  }
  return Status::Ok();
}

Expected<int> CreateExclusive(const std::string& path, unsigned mode) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
  if (fd < 0) return Status::Resource(fmt::format("{}: cannot create: {}", path, std::strerror(errno)));
  return fd;
}

struct OutputFile::Gzip {
  z_stream z{};
  Gzip() { deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY); }  // 16: gzip
  ~Gzip() { deflateEnd(&z); }
  Gzip(const Gzip&) = delete;
  Gzip& operator=(const Gzip&) = delete;
};

Status OutputFile::Open(const std::string& path, const std::vector<std::string>& inputs) {
  Discard();
  path_ = path;
  gz_name_ = path.size() > 3 && path.ends_with(".gz");
  decided_ = false;
  if (path.empty() || path == "-") {
    std::fflush(stdout);
    fd_ = STDOUT_FILENO, kind_ = Kind::kStdout;
    return Status::Ok();
  }
  struct stat target {};
  const bool exists = ::stat(path.c_str(), &target) == 0;
  if (exists) {
    for (const std::string& in : inputs) {
      struct stat st {};
      if (::stat(in.c_str(), &st) == 0 && st.st_dev == target.st_dev && st.st_ino == target.st_ino)
        return Status::Usage(
            fmt::format("-o {}: that is one of the inputs ({}); choose another output file", path, in));
    }
  }
  if (exists && !S_ISREG(target.st_mode)) {
    // A device (/dev/null, a terminal), a FIFO or a socket: written as it is, never replaced. Through a
    // symlink only when the link is root's or the caller's own (/dev/stdout is root's); another user's link
    // to a device in a shared directory is refused.
    struct stat link {};
    if (::lstat(path.c_str(), &link) == 0 && S_ISLNK(link.st_mode) && link.st_uid != 0 && link.st_uid != ::geteuid())
      return Status::Resource(
          fmt::format("-o {}: a symbolic link owned by another user (uid {}) to a device or FIFO; "
                      "refusing to write through it",
                      path, link.st_uid));
    fd_ = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd_ < 0) return Status::Resource(fmt::format("-o {}: cannot write: {}", path, std::strerror(errno)));
    kind_ = Kind::kDevice;
    return Status::Ok();
  }
  // A temporary beside the target, created exclusively (never a planted file or symlink), renamed at Commit.
  std::random_device entropy;
  for (int attempt = 0; attempt < 16 && fd_ < 0; ++attempt) {
    tmp_ = fmt::format("{}/.{}.strata-{:08x}", DirOf(path), BaseOf(path), entropy());
    fd_ = ::open(tmp_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd_ < 0 && errno != EEXIST)
      return Status::Resource(fmt::format("-o {}: cannot write in {}: {}", path, DirOf(path), std::strerror(errno)));
  }
  if (fd_ < 0) return Status::Resource(fmt::format("-o {}: cannot create a temporary file beside it", path));
  kind_ = Kind::kTemporary;
  mode_t mode;
  if (exists) {
    mode = target.st_mode & 07777;
  } else {
    const mode_t mask = ::umask(0);
    ::umask(mask);
    mode = 0666 & ~mask;
  }
  if (::fchmod(fd_, mode) != 0) return Fail(errno);
  return Status::Ok();
}

Status OutputFile::Write(std::string_view bytes) {
  if (fd_ < 0) return Status::Internal(fmt::format("-o {}: not open for writing", path_));
  if (gz_name_ && !decided_ && !bytes.empty()) {
    decided_ = true;
    if (!bytes.starts_with("\x1f\x8b")) gzip_ = std::make_unique<Gzip>();
  }
  return gzip_ ? Deflate(bytes, false) : WriteRaw(bytes);
}

Status OutputFile::Deflate(std::string_view bytes, bool finish) {
  z_stream& z = gzip_->z;
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(bytes.data()));
  z.avail_in = static_cast<uInt>(bytes.size());
  char buffer[1 << 16];
  int code = Z_OK;
  do {
    z.next_out = reinterpret_cast<Bytef*>(buffer);
    z.avail_out = sizeof buffer;
    code = deflate(&z, finish ? Z_FINISH : Z_NO_FLUSH);
    if (code == Z_STREAM_ERROR) return Status::Internal(fmt::format("-o {}: gzip compression failed", path_));
    if (Status st = WriteRaw({buffer, sizeof buffer - z.avail_out}); !st.ok()) return st;
  } while (z.avail_out == 0 || (finish && code != Z_STREAM_END));
  return Status::Ok();
}

Status OutputFile::WriteRaw(std::string_view bytes) {
  if (WriteAll(fd_, bytes)) return Status::Ok();
  if (kind_ == Kind::kStdout) {
    const int err = errno;
    fd_ = -1, kind_ = Kind::kNone;
    return Status::Resource(fmt::format("cannot write to standard output: {}", std::strerror(err)));
  }
  return Fail(errno);
}

Status OutputFile::Commit() {
  if (fd_ < 0) return Status::Internal(fmt::format("-o {}: not open for writing", path_));
  if (gz_name_ && !decided_) gzip_ = std::make_unique<Gzip>();  // nothing written: an empty gzip member
  if (gzip_) {
    if (Status st = Deflate({}, true); !st.ok()) return st;
    gzip_.reset();
  }
  const int fd = fd_;
  const Kind kind = kind_;
  fd_ = -1, kind_ = Kind::kNone;
  if (kind == Kind::kStdout) return Status::Ok();
  bool ok = kind == Kind::kDevice || ::fsync(fd) == 0;
  int err = errno;
  if (::close(fd) != 0 && ok) ok = false, err = errno;
  if (kind == Kind::kTemporary && ok && ::rename(tmp_.c_str(), path_.c_str()) != 0) ok = false, err = errno;
  if (!ok) {
    if (kind == Kind::kTemporary) ::unlink(tmp_.c_str());
    return Status::Resource(fmt::format("-o {}: cannot write: {}", path_, std::strerror(err)));
  }
  return Status::Ok();
}

Status OutputFile::Fail(int err) {
  Discard();
  return Status::Resource(fmt::format("-o {}: cannot write: {}", path_, std::strerror(err)));
}

void OutputFile::Discard() {
  gzip_.reset();
  if (fd_ >= 0 && kind_ != Kind::kStdout) ::close(fd_);
  if (kind_ == Kind::kTemporary) ::unlink(tmp_.c_str());
  fd_ = -1, kind_ = Kind::kNone;
}

OutputFile::OutputFile() = default;
OutputFile::~OutputFile() { Discard(); }

Status WriteOutput(const std::string& path, const std::string& content, const std::vector<std::string>& inputs) {
  OutputFile out;
  if (Status st = out.Open(path, inputs); !st.ok()) return st;
  if (Status st = out.Write(content); !st.ok()) return st;
  return out.Commit();
}

}  // namespace strata
