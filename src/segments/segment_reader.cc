// Segment reader: validates each block (magic, table, sizes, crc32), decompresses it and decodes its
// columns; stops at the first damaged block and says where.
#include "segments/segment_reader.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <sstream>

#include "segments/column_codec.h"

namespace strata::segments {
namespace {

template <typename T>
T Get(std::string_view bytes, size_t offset) {
  T value;
  std::memcpy(&value, bytes.data() + offset, sizeof(T));
  return value;
}

// JSON nesting deeper than this in a meta record is refused: the recorder writes depth 3 at most, and
// copying or printing a deeper document recurses (a 27 KB record nested 200,000 deep crashed the reader).
constexpr size_t kMaxMetaDepth = 64;

/// Whether `text` (JSON) nests no deeper than `max` ([ and { outside strings).
bool NestingAtMost(std::string_view text, size_t max) {
  size_t depth = 0;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\')
        ++i;
      else if (c == '"')
        in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > max) return false;
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return true;
}

// Decodes one block's raw bytes into `out`; returns an empty string or what is wrong with it.
std::string DecodeBlock(Table table, uint32_t rows, const std::string& raw, SegmentData* out) {
  if (table == Table::kMeta) {
    size_t offset = 0;
    for (uint32_t i = 0; i < rows; ++i) {
      if (raw.size() - offset < 4) return "meta record length past the block's end";
      const uint32_t length = Get<uint32_t>(raw, offset);
      offset += 4;
      if (raw.size() - offset < length) return "meta record past the block's end";
      if (!NestingAtMost(std::string_view(raw).substr(offset, length), kMaxMetaDepth))
        return fmt::format("meta record nests deeper than {} levels", kMaxMetaDepth);
      auto record = nlohmann::json::parse(raw.data() + offset, raw.data() + offset + length, nullptr, false);
      if (record.is_discarded() || !record.is_object()) return "meta record is not a JSON object";
      out->meta.push_back(std::move(record));
      offset += length;
    }
    return offset == raw.size() ? "" : "bytes left after the meta records";
  }
  const size_t width = RowWidth(table);
  if (width == 0 || raw.size() != static_cast<size_t>(rows) * width)
    return fmt::format("{} rows of {} bytes do not fill {} bytes", rows, width, raw.size());
  switch (table) {
    case Table::kOffCpu:
      DecodeColumns(raw.data(), rows, kOffCpuMembers, &out->off_cpu);
      break;
    case Table::kSample:
      DecodeColumns(raw.data(), rows, kSampleMembers, &out->samples);
      break;
    case Table::kCall:
      DecodeColumns(raw.data(), rows, kCallMembers, &out->calls);
      break;
    case Table::kGc:
      DecodeColumns(raw.data(), rows, kGcMembers, &out->gcs);
      break;
    case Table::kCounter:
      DecodeColumns(raw.data(), rows, kCounterMembers, &out->counters);
      break;
    case Table::kPySample:
      DecodeColumns(raw.data(), rows, kPySampleMembers, &out->py_samples);
      break;
    case Table::kCallEnter:
      DecodeColumns(raw.data(), rows, kCallEnterMembers, &out->call_enters);
      break;
    case Table::kMeta:
      break;
  }
  return "";
}

bool KnownTable(uint16_t table) { return table >= 1 && table <= static_cast<uint16_t>(Table::kCallEnter); }

}  // namespace

bool LooksLikeSegment(std::string_view head) { return head.substr(0, kFileMagic.size()) == kFileMagic; }

Expected<uint32_t> ParseSegmentHeader(std::string_view bytes, const std::string& name, SegmentData* data) {
  if (bytes.size() < kFileHeaderSize || !LooksLikeSegment(bytes))
    return Status::NotATrace(name + ": not a strata segment file (no STRATSEG header)", ErrorPlace{name});
  data->path = name;
  data->header.version = Get<uint32_t>(bytes, 8);
  const uint32_t header_size = Get<uint32_t>(bytes, 12);
  if (data->header.version == 0 || data->header.version > kFormatVersion)
    return Status::Unsupported(
        fmt::format("{}: segment format version {} is not supported (this strata reads up to {})", name,
                    data->header.version, kFormatVersion));
  if (header_size < kFileHeaderSize || header_size > bytes.size())
    return Status::BadInput(fmt::format("{}: bad segment header size {}", name, header_size),
                            ErrorPlace::AtOffset(name, 12));  // the header's size field
  data->header.created_unix_ns = Get<int64_t>(bytes, 16);
  data->header.realtime_minus_monotonic_ns = Get<int64_t>(bytes, 24);
  return header_size;
}

BlockScan ParseSegmentBlocks(std::string_view bytes, uint64_t at, uint64_t file_size, uint64_t* decoded,
                             SegmentData* data) {
  BlockScan scan;
  std::string raw;
  size_t offset = 0;
  // Decoded bytes are bounded by what the file can justify: columnar rows compress 5-50x with zstd.
  const uint64_t max_decoded = std::max<uint64_t>(kMinDecodedBudget, kMaxDecodeRatio * file_size);
  auto stop = [&](const std::string& why, bool incomplete) {
    scan.end = offset;
    scan.incomplete = incomplete;
    scan.problem = fmt::format("block at byte {}: {}; {} blocks before it were read", at + offset, why, data->blocks);
    return scan;
  };
  while (offset < bytes.size()) {
    if (bytes.size() - offset < kBlockHeaderSize)
      return stop("truncated block header (the recorder was stopped while writing)", true);
    const uint32_t magic = Get<uint32_t>(bytes, offset);
    const uint16_t table = Get<uint16_t>(bytes, offset + 4);
    const uint32_t rows = Get<uint32_t>(bytes, offset + 8);
    const uint32_t raw_size = Get<uint32_t>(bytes, offset + 12);
    const uint32_t compressed_size = Get<uint32_t>(bytes, offset + 16);
    const uint32_t crc = Get<uint32_t>(bytes, offset + 20);
    if (magic != kBlockMagic) return stop("no block marker", false);
    if (!KnownTable(table)) return stop(fmt::format("unknown table {}", table), false);
    if (raw_size > kMaxBlockRawSize)
      return stop(fmt::format("block of {} bytes is larger than the format allows", raw_size), false);
    if (*decoded + raw_size > max_decoded)
      return stop(fmt::format("blocks decode to more than {} bytes from a {}-byte file: refusing a decompression bomb",
                              max_decoded, file_size),
                  false);
    if (bytes.size() - offset - kBlockHeaderSize < compressed_size)
      return stop("truncated block (the recorder was stopped while writing)", true);
    const char* payload = bytes.data() + offset + kBlockHeaderSize;
    if (crc32(0, reinterpret_cast<const Bytef*>(payload), compressed_size) != crc)
      return stop("checksum mismatch", false);
    raw.assign(raw_size, '\0');
    const size_t got = ZSTD_decompress(raw.data(), raw.size(), payload, compressed_size);
    if (ZSTD_isError(got) || got != raw_size) return stop("cannot decompress", false);
    if (std::string why = DecodeBlock(static_cast<Table>(table), rows, raw, data); !why.empty())
      return stop(why, false);
    *decoded += raw_size;
    ++data->blocks;
    offset += kBlockHeaderSize + compressed_size;
  }
  scan.end = offset;
  return scan;
}

Expected<SegmentData> ParseSegment(std::string_view bytes, const std::string& name) {
  SegmentData data;
  auto header_size = ParseSegmentHeader(bytes, name, &data);
  if (!header_size.ok()) return header_size.status();
  uint64_t decoded = 0;
  const BlockScan scan =
      ParseSegmentBlocks(bytes.substr(header_size.value()), header_size.value(), bytes.size(), &decoded, &data);
  if (!scan.problem.empty()) data.problems.push_back(scan.problem);
  return data;
}

namespace {

// Reads up to `n` more bytes of `fd` onto `out`; 0 added = end of file.
Expected<size_t> AppendFromFd(int fd, size_t n, const std::string& name, std::string* out) {
  const size_t old = out->size();
  out->resize(old + n);
  for (;;) {
    const ssize_t got = ::read(fd, out->data() + old, n);
    if (got >= 0) {
      out->resize(old + static_cast<size_t>(got));
      return static_cast<size_t>(got);
    }
    if (errno != EINTR) {
      out->resize(old);
      return Status::Resource(fmt::format("{}: read error at byte {}: {}", name, old, std::strerror(errno)));
    }
  }
}

// Reads a whole segment from `fd` (not closed), front to back.
Expected<SegmentData> ReadSegmentFrom(int fd, const std::string& name) {
  // The header first: anything else (a device such as /dev/zero, a pipe of something else) is refused
  // before more of it is read.
  std::string content;
  while (content.size() < kFileHeaderSize) {
    auto got = AppendFromFd(fd, kFileHeaderSize - content.size(), name, &content);
    if (!got.ok()) return got.status();
    if (got.value() == 0) break;
  }
  if (content.size() < kFileHeaderSize || !LooksLikeSegment(content))
    return Status::NotATrace(name + ": not a strata segment file (no STRATSEG header)", ErrorPlace{name});
  for (;;) {
    auto got = AppendFromFd(fd, 1 << 20, name, &content);
    if (!got.ok()) return got.status();
    if (got.value() == 0) break;
    if (content.size() > kMaxSegmentBytes)
      return Status::BadInput(
          fmt::format("{}: larger than {} bytes: not a segment strata record writes", name, kMaxSegmentBytes));
  }
  content.shrink_to_fit();
  return ParseSegment(content, name);
}

}  // namespace

Expected<SegmentData> ReadSegment(const std::string& path) {
  if (path == "-") return ReadSegmentFrom(STDIN_FILENO, "<stdin>");
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Status::Resource(fmt::format("{}: cannot open: {}", path, std::strerror(errno)));
  struct stat st {};
  if (::fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
    ::close(fd);
    return Status::Resource(path + ": is a directory, not a segment file");
  }
  auto data = ReadSegmentFrom(fd, path);
  ::close(fd);
  return data;
}

}  // namespace strata::segments
