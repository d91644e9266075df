// Reads a segment file (segment_format.h) written by `strata record`. A file that is not a segment, or
// of a newer format version, is an error naming the file; damage after the header (a torn last block of
// a killed recorder, a bad checksum) keeps every complete block before it and is described in
// SegmentData::problems with its byte offset. Memory is bounded (see the constants below), and meta records
// nest at most 64 levels deep.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "core/status.h"
#include "segments/segment_tables.h"

namespace strata::segments {

/// Bounds on what a segment may cost: the file itself (a recording of days at the default rates is a few
/// GiB), and the decoded blocks relative to the file (at least kMinDecodedBudget).
inline constexpr uint64_t kMaxSegmentBytes = 64ull << 30;
inline constexpr uint64_t kMaxDecodeRatio = 200;
inline constexpr uint64_t kMinDecodedBudget = 256ull << 20;

// True when `head` (the first bytes of a file) starts with the segment magic.
bool LooksLikeSegment(std::string_view head);

/// Reads the segment at `path` ("-" = standard input), opening it once and reading it front to back.
Expected<SegmentData> ReadSegment(const std::string& path);
// Same, from bytes in memory (`name` is used in messages); for tests and fuzzing.
Expected<SegmentData> ParseSegment(std::string_view bytes, const std::string& name);

// The two steps of ParseSegment, for readers of a segment still being written (segment_tail.h).
/// Fills data->path and data->header from the file header; returns the header's size (where blocks start).
Expected<uint32_t> ParseSegmentHeader(std::string_view bytes, const std::string& name, SegmentData* data);
/// Where a scan of blocks stopped: `end` is the bytes consumed (up to the end of the last complete, valid
/// block). `problem` says why it stopped before the end (empty when it did not); `incomplete` when the
/// reason is only a block not yet wholly written (a later read may complete it), not damage.
struct BlockScan {
  size_t end = 0;
  std::string problem;
  bool incomplete = false;
};
/// Decodes the blocks in `bytes` (which start at a block boundary, byte `at` of a file of `file_size`
/// bytes so far) into `data`, adding their raw size to `*decoded`, which is bounded by kMaxDecodeRatio x
/// file_size (at least kMinDecodedBudget).
BlockScan ParseSegmentBlocks(std::string_view bytes, uint64_t at, uint64_t file_size, uint64_t* decoded,
                             SegmentData* data);

}  // namespace strata::segments
