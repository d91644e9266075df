// ByteSource: reads a file's content as a stream of bytes, inflating gzip (single or multi-member)
// on the fly so that importers never hold a whole decompressed file in memory.
// Invariants: read() returns bytes in order exactly once; a corrupt or truncated compressed stream is
// an error naming the file and the offsets (compressed and decompressed) where it was detected.
#pragma once

#include <zlib.h>

#include <cstdint>
#include <cstdio>
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

  /// Opens `path`; gzip is detected from its magic bytes, not its name.
  static Expected<std::unique_ptr<ByteSource>> Open(const std::string& path);

  /// Reads up to `capacity` bytes into `out`. Returns the count, 0 at the end of the content.
  Expected<size_t> Read(char* out, size_t capacity);

  /// Returns up to `n` bytes from the start of the content without consuming them
  /// (only valid before the first Read).
  Expected<std::string> Peek(size_t n);

  const std::string& path() const { return path_; }
  bool compressed() const { return gzip_; }
  uint64_t compressed_bytes_read() const { return compressed_read_; }
  uint64_t bytes_produced() const { return produced_; }
  uint64_t file_size() const { return file_size_; }

 private:
  ByteSource() = default;
  Expected<size_t> ReadRaw(char* out, size_t capacity);
  Expected<size_t> ReadInflated(char* out, size_t capacity);

  std::string path_;
  FILE* file_ = nullptr;
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
};

}  // namespace strata
