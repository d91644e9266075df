// ByteSource implementation: buffered file reads and streaming zlib inflation.
#include "importers/byte_source.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

namespace strata {

namespace {
constexpr size_t kInputChunk = 256 << 10;
constexpr size_t kPrefixChunk = 4096;
}  // namespace

ByteSource::~ByteSource() {
  if (zs_init_) inflateEnd(&zs_);
  if (fd_ > 2) ::close(fd_);
}

Expected<std::unique_ptr<ByteSource>> ByteSource::Open(const std::string& path) {
  const bool stdin_input = path == kStdinPath;
  const std::string name = stdin_input ? kStdinName : path;
  // One open, then fstat on what was opened: no window between checking a path and reading it.
  const int fd = stdin_input ? STDIN_FILENO : ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Status::Resource(fmt::format("{}: cannot open: {}", name, std::strerror(errno)));
  std::unique_ptr<ByteSource> src(new ByteSource());
  src->path_ = name;
  src->fd_ = fd;
  struct stat st {};
  if (::fstat(fd, &st) != 0) return Status::Resource(fmt::format("{}: cannot open: {}", name, std::strerror(errno)));
  if (S_ISDIR(st.st_mode)) return Status::Resource(fmt::format("{}: is a directory, not a trace file", name));
  src->regular_ = S_ISREG(st.st_mode);
  if (src->regular_) src->file_size_ = static_cast<uint64_t>(st.st_size);
  if (Status s = src->FillRawPrefix(2); !s.ok()) return s;
  const std::string& magic = src->raw_prefix_;
  if (magic.size() >= 2 && static_cast<unsigned char>(magic[0]) == 0x1f &&
      static_cast<unsigned char>(magic[1]) == 0x8b) {
    src->gzip_ = true;
    if (inflateInit2(&src->zs_, 15 + 16) != Z_OK) {
      return Status::Resource(fmt::format("{}: cannot initialise gzip decoder", name));
    }
    src->zs_init_ = true;
    src->in_buf_.resize(kInputChunk);  // only a compressed file reads through it
  }
  return src;
}

Expected<size_t> ByteSource::ReadFd(char* out, size_t capacity) {
  for (;;) {
    const ssize_t n = ::read(fd_, out, capacity);
    if (n >= 0) return static_cast<size_t>(n);
    if (errno == EINTR) continue;
    return Status::Resource(
        fmt::format("{}: read error at byte {}: {}", path_, compressed_read_, std::strerror(errno)));
  }
}

Status ByteSource::FillRawPrefix(size_t n) {
  // Only before anything past the prefix was consumed: the prefix is the file's first bytes.
  // One read of up to kPrefixChunk however few bytes are asked for: the format sniffing that follows needs
  // them anyway, and a small file is a syscall per read.
  while (raw_prefix_.size() < n && compressed_read_ == 0) {
    char chunk[kPrefixChunk];
    auto got = ReadFd(chunk, sizeof chunk);
    if (!got.ok()) return got.status();
    if (got.value() == 0) break;
    raw_prefix_.append(chunk, got.value());
  }
  return Status::Ok();
}

Expected<std::string> ByteSource::PeekRaw(size_t n) {
  if (compressed_read_ != 0) return Status::Internal(fmt::format("{}: internal: PeekRaw after reading", path_));
  if (Status s = FillRawPrefix(std::min<size_t>(n, 64 << 10)); !s.ok()) return s;
  return raw_prefix_.substr(0, n);
}

Expected<size_t> ByteSource::ReadRaw(char* out, size_t capacity) {
  // The sniffed prefix first, then the file, filling `out` as far as the file gives (pipes read short).
  size_t n = 0;
  if (raw_prefix_pos_ < raw_prefix_.size()) {
    n = std::min(capacity, raw_prefix_.size() - raw_prefix_pos_);
    std::memcpy(out, raw_prefix_.data() + raw_prefix_pos_, n);
    raw_prefix_pos_ += n;
  }
  while (n < capacity) {
    auto got = ReadFd(out + n, capacity - n);
    if (!got.ok()) return got.status();
    if (got.value() == 0) break;
    n += got.value();
  }
  compressed_read_ += n;
  return n;
}

Expected<size_t> ByteSource::ReadInflated(char* out, size_t capacity) {
  zs_.next_out = reinterpret_cast<Bytef*>(out);
  zs_.avail_out = static_cast<uInt>(capacity);
  while (zs_.avail_out > 0) {
    if (zs_.avail_in == 0) {
      if (eof_) break;
      auto n = ReadRaw(in_buf_.data(), in_buf_.size());
      if (!n.ok()) return n.status();
      if (n.value() == 0) {
        eof_ = true;
        break;
      }
      zs_.next_in = reinterpret_cast<Bytef*>(in_buf_.data());
      zs_.avail_in = static_cast<uInt>(n.value());
    }
    if (stream_ended_) {
      // Another gzip member follows (concatenated gzip files form one stream).
      if (inflateReset(&zs_) != Z_OK) return Status::Internal(fmt::format("{}: gzip reset failed", path_));
      stream_ended_ = false;
    }
    const int rc = inflate(&zs_, Z_NO_FLUSH);
    if (rc == Z_STREAM_END) {
      stream_ended_ = true;
      continue;
    }
    if (rc != Z_OK && rc != Z_BUF_ERROR) {
      const uint64_t at = compressed_read_ - zs_.avail_in;
      return Status::BadInput(
          fmt::format("{}: corrupt gzip data at compressed byte {} (after {} decompressed bytes): {}", path_, at,
                      produced_ + (capacity - zs_.avail_out), zs_.msg ? zs_.msg : "inflate error"),
          ErrorPlace::AtOffset(path_, at));
    }
  }
  const size_t n = capacity - zs_.avail_out;
  produced_ += n;
  // A gzip bomb: real traces inflate 5-50x; past kBombFloorBytes, more than kMaxInflateRatio times the
  // compressed bytes read so far is refused before it fills memory.
  const uint64_t consumed = compressed_read_ - zs_.avail_in;
  if (produced_ > kBombFloorBytes && produced_ > kMaxInflateRatio * std::max<uint64_t>(consumed, 1))
    return Status::Resource(
        fmt::format("{}: {} compressed bytes inflate to more than {} bytes ({}x): refusing a "
                    "decompression bomb (real traces inflate 5-50x)",
                    path_, consumed, produced_, produced_ / std::max<uint64_t>(consumed, 1)));
  if (n == 0 && eof_ && !stream_ended_) {
    return Status::BadInput(fmt::format("{}: truncated gzip file: the compressed stream ends at byte {} before its "
                                        "end marker (after {} decompressed bytes)",
                                        path_, compressed_read_, produced_),
                            ErrorPlace::AtOffset(path_, compressed_read_));
  }
  return n;
}

Expected<size_t> ByteSource::Read(char* out, size_t capacity) {
  if (peek_pos_ < peeked_.size()) {
    const size_t n = std::min(capacity, peeked_.size() - peek_pos_);
    std::memcpy(out, peeked_.data() + peek_pos_, n);
    peek_pos_ += n;
    return n;
  }
  if (gzip_) return ReadInflated(out, capacity);
  auto n = ReadRaw(out, capacity);
  if (n.ok()) produced_ += n.value();
  return n;
}

Expected<std::string> ByteSource::Peek(size_t n) {
  std::string buf(n, '\0');
  size_t filled = 0;
  while (filled < n) {
    auto got = gzip_ ? ReadInflated(buf.data() + filled, n - filled) : ReadRaw(buf.data() + filled, n - filled);
    if (!got.ok()) {
      if (filled > 0) break;  // report the error on the real read; sniffing works on what we have
      return got.status();
    }
    if (got.value() == 0) break;
    filled += got.value();
  }
  if (!gzip_) produced_ += filled;
  buf.resize(filled);
  peeked_ = std::move(buf);
  peek_pos_ = 0;
  return peeked_;
}

}  // namespace strata
