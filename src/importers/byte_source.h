// ByteSource: reads a file's content as a stream of bytes, inflating gzip (single or multi-member)
// on the fly so that importers never hold a whole decompressed file in memory.
// Invariants: the file is opened and read exactly once, front to back, never seeked or reopened, so pipes,
// FIFOs, process substitutions and standard input ("-") work like files; format sniffing works on a
// buffered prefix. Read() returns bytes in order exactly once; a corrupt or truncated compressed stream is
// an error naming the file and the offsets (compressed and decompressed) where it was detected.
#pragma once

#include <zlib.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/raw_buffer.h"
#include "core/status.h"

namespace strata {

class ByteSource {
 public:
  /// Inflating more than this ratio of output to compressed input, past kBombFloorBytes, is an error.
  static constexpr uint64_t kMaxInflateRatio = 400;
  static constexpr uint64_t kBombFloorBytes = 256ull << 20;

  ~ByteSource();
  ByteSource(const ByteSource&) = delete;
  ByteSource& operator=(const ByteSource&) = delete;

  /// The path that names standard input, and the name it is given in messages.
  static constexpr const char* kStdinPath = "-";
  static constexpr const char* kStdinName = "<stdin>";

  /// Opens `path` ("-" = standard input); gzip is detected from its magic bytes, not its name.
  static Expected<std::unique_ptr<ByteSource>> Open(const std::string& path);

  /// The first bytes of the file as stored (before any inflation), at most `n` (n <= 64 KiB).
  Expected<std::string> PeekRaw(size_t n);

  /// Reads up to `capacity` bytes into `out`. Returns the count, 0 at the end of the content.
  Expected<size_t> Read(char* out, size_t capacity);

  /// Returns up to `n` bytes from the start of the content without consuming them
  /// (only valid before the first Read).
  Expected<std::string> Peek(size_t n);

  const std::string& path() const { return path_; }
  bool compressed() const { return gzip_; }
  uint64_t compressed_bytes_read() const { return compressed_read_; }
  uint64_t bytes_produced() const { return produced_; }
  uint64_t file_size() const { return file_size_; }  // 0 unless a regular file
  bool regular_file() const { return regular_; }

 private:
  ByteSource() = default;
  Expected<size_t> ReadRaw(char* out, size_t capacity);
  Expected<size_t> ReadFd(char* out, size_t capacity);
  Status FillRawPrefix(size_t n);
  Expected<size_t> ReadInflated(char* out, size_t capacity);

  std::string path_;
  int fd_ = -1;
  std::string raw_prefix_;  // bytes read to sniff the format, served first by ReadRaw
  size_t raw_prefix_pos_ = 0;
  bool gzip_ = false;
  bool stream_ended_ = false;  // current gzip member finished
  bool eof_ = false;
  z_stream zs_{};
  bool zs_init_ = false;
  RawBuffer in_buf_;
  std::string peeked_;  // bytes returned by Peek, served first by Read
  size_t peek_pos_ = 0;
  uint64_t compressed_read_ = 0;
  uint64_t produced_ = 0;
  uint64_t file_size_ = 0;
  bool regular_ = false;
};

}  // namespace strata
