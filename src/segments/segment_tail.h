// SegmentTail: reads a segment that is still being written (the agent's live flight-recorder chunk), one
// poll at a time: each Poll reads only the bytes appended since the previous one and decodes the blocks
// they complete, appending their rows to data(). A block not yet wholly written waits for a later poll.
// The caller may erase old rows from data() between polls (a sliding window): the tail never re-reads
// what it consumed, so the cost of a poll is what was appended, not the file's size.
// Invariants: consumed() is always at a block boundary (or 0 before the header was read); after damage
// (a bad block, not merely an unfinished one) the tail stops for good and data().problems says where.
#pragma once

#include <cstdint>
#include <string>

#include "core/status.h"
#include "segments/segment_tables.h"

namespace strata::segments {

class SegmentTail {
 public:
  explicit SegmentTail(std::string path) : path_(std::move(path)) {}

  /// Reads what was appended since the last poll. An error only when the file cannot be read or is not a
  /// segment; a file shorter than its header is not an error yet (has_header() stays false).
  Status Poll();

  bool has_header() const { return consumed_ > 0; }
  bool stopped() const { return stopped_; }
  uint64_t consumed() const { return consumed_; }
  SegmentData& data() { return data_; }
  const SegmentData& data() const { return data_; }

 private:
  std::string path_;
  SegmentData data_;
  uint64_t consumed_ = 0;  // bytes of the file decoded (header and complete blocks)
  uint64_t decoded_ = 0;   // raw bytes of the blocks decoded (the decompression budget)
  bool stopped_ = false;
};

}  // namespace strata::segments
