// JsonEventSplitter: streams a Chrome-trace JSON document (an object with "traceEvents" or a bare array)
// and cuts its event array into batches of whole events, so a file of any size is parsed in bounded
// memory. It only tracks JSON structure (strings, nesting); parsing each event is the caller's job.
// Invariants: every element of the event array is delivered exactly once, in order, inside exactly one
// batch; top-level members other than "traceEvents" are delivered as raw JSON text; a document that ends
// early or is structurally broken is an error naming the file and the decompressed byte offset.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/raw_buffer.h"
#include "core/status.h"
#include "importers/byte_source.h"

namespace strata {

struct EventBatch {
  std::string_view body;                                // the bytes of the elements and the separators between them
  std::vector<std::pair<uint32_t, uint32_t>> elements;  // (offset in body, length) of each element
  uint64_t file_offset = 0;                             // decompressed offset of body[0]
};

class JsonEventSplitter {
 public:
  enum class Shape { kUnknown, kObject, kBareArray };
  using MemberFn = std::function<void(std::string_view key, std::string_view raw_value)>;
  using BatchFn = std::function<Status(const EventBatch&)>;

  /// `scalar`: skip values byte by byte even where the CPU has AVX2 (tests compare the two scanners).
  explicit JsonEventSplitter(size_t batch_bytes = 4 << 20, bool scalar = false)
      : batch_bytes_(batch_bytes), scalar_(scalar) {}

  /// Streams `src` to the end. Calls `on_member` for each top-level member except "traceEvents" and
  /// `on_batch` for each batch of events. Stops at the first error (its own or a callback's).
  Status Run(ByteSource& src, const MemberFn& on_member, const BatchFn& on_batch);

  /// The read window's buffer, to reuse for the next file (its bytes are not kept): Run then allocates only when
  /// the file needs more room than it has.
  void set_buffer(RawBuffer&& buffer) { buf_ = std::move(buffer); }
  RawBuffer take_buffer() { return std::move(buf_); }

  Shape shape() const { return shape_; }
  bool found_events() const { return found_events_; }

 private:
  bool Refill();  // appends more bytes; may move data; returns false at end of input
  Status Fail(std::string_view what) const;
  void SkipWs();
  bool SkipString();           // pos_ just after the opening quote; leaves pos_ after the closing quote
  Status SkipValue();          // skips one JSON value starting at pos_ (byte by byte)
  Status SkipContainer();      // skips the object/array at pos_ (64 bytes at a time where the CPU has AVX2)
  Status SkipContainerAvx2();  // the same with the 64-byte block scanner (x86-64 CPUs with AVX2 and PCLMUL)
  Status ReadEvents(const BatchFn& on_batch);
  Status FlushBatch(const BatchFn& on_batch, size_t end);

  ByteSource* src_ = nullptr;
  RawBuffer buf_;
  size_t pos_ = 0;
  size_t end_ = 0;
  size_t keep_ = 0;    // bytes before keep_ may be discarded on refill
  uint64_t base_ = 0;  // decompressed offset of buf_[0]
  bool eof_ = false;
  Status read_error_;
  size_t batch_bytes_;
  bool scalar_ = false;
  Shape shape_ = Shape::kUnknown;
  bool found_events_ = false;
  EventBatch batch_;
};

}  // namespace strata
