// Segment writer: columnar encoding, zstd compression and crc32 of each block (see segment_writer.h).
#include "segments/segment_writer.h"

#include <fcntl.h>
#include <unistd.h>

#include <zlib.h>
#include <zstd.h>

#include <cerrno>
#include <cstring>

#include "segments/column_codec.h"

namespace strata::segments {
namespace {

template <typename T>
void Put(std::string* out, T value) {
  out->append(reinterpret_cast<const char*>(&value), sizeof(value));
}

}  // namespace

SegmentWriter::~SegmentWriter() { (void)Close(); }

Status SegmentWriter::Open(const std::string& path, const FileHeader& header, size_t rows_per_block) {
  std::lock_guard lock(mutex_);
  // A new file only: O_EXCL|O_NOFOLLOW never follows or reuses what another user planted under that name.
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd >= 0) file_ = ::fdopen(fd, "wb");
  if (!file_) {
    const int err = errno;
    if (fd >= 0) ::close(fd);
    return Status::Error("cannot create " + path + ": " + std::strerror(err));
  }
  path_ = path;
  rows_per_block_ = rows_per_block ? rows_per_block : 1;
  std::string bytes(kFileMagic);
  Put<uint32_t>(&bytes, header.version);
  Put<uint32_t>(&bytes, kFileHeaderSize);
  Put<int64_t>(&bytes, header.created_unix_ns);
  Put<int64_t>(&bytes, header.realtime_minus_monotonic_ns);
  if (std::fwrite(bytes.data(), 1, bytes.size(), file_) != bytes.size() || std::fflush(file_) != 0) {
    error_ = Status::Error("cannot write " + path + ": " + std::strerror(errno));
    return error_;
  }
  bytes_written_ = bytes.size();
  return Status::Ok();
}

template <typename Row, typename Members>
void SegmentWriter::AppendRow(std::vector<Row>& buffer, const Row& row, Table table, const Members& members) {
  std::lock_guard lock(mutex_);
  buffer.push_back(row);
  if (buffer.size() >= rows_per_block_) WriteTableLocked(buffer, table, members);
}

template <typename Row, typename Members>
void SegmentWriter::WriteTableLocked(std::vector<Row>& rows, Table table, const Members& members) {
  if (rows.empty() || !file_) return;
  std::string raw;
  raw.reserve(rows.size() * RowWidth(table));
  EncodeColumns(rows, members, &raw);
  WriteBlockLocked(table, static_cast<uint32_t>(rows.size()), raw);
  rows.clear();
}

void SegmentWriter::Append(const OffCpuRow& row) { AppendRow(off_cpu_, row, Table::kOffCpu, kOffCpuMembers); }
void SegmentWriter::Append(const SampleRow& row) { AppendRow(samples_, row, Table::kSample, kSampleMembers); }
void SegmentWriter::Append(const CallRow& row) { AppendRow(calls_, row, Table::kCall, kCallMembers); }
void SegmentWriter::Append(const GcRow& row) { AppendRow(gcs_, row, Table::kGc, kGcMembers); }
void SegmentWriter::Append(const CounterRow& row) { AppendRow(counters_, row, Table::kCounter, kCounterMembers); }

void SegmentWriter::AppendMeta(const nlohmann::json& record) {
  std::lock_guard lock(mutex_);
  meta_.push_back(record.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
  if (meta_.size() >= rows_per_block_) WriteMetaLocked();
}

void SegmentWriter::WriteBufferedLocked() {
  if (!file_) return;
  WriteTableLocked(off_cpu_, Table::kOffCpu, kOffCpuMembers);
  WriteTableLocked(samples_, Table::kSample, kSampleMembers);
  WriteTableLocked(calls_, Table::kCall, kCallMembers);
  WriteTableLocked(gcs_, Table::kGc, kGcMembers);
  WriteTableLocked(counters_, Table::kCounter, kCounterMembers);
  WriteMetaLocked();
}

void SegmentWriter::WriteMetaLocked() {
  if (meta_.empty() || !file_) return;
  std::string raw;
  for (const std::string& record : meta_) {
    Put<uint32_t>(&raw, static_cast<uint32_t>(record.size()));
    raw += record;
  }
  WriteBlockLocked(Table::kMeta, static_cast<uint32_t>(meta_.size()), raw);
  meta_.clear();
}

void SegmentWriter::WriteBlockLocked(Table table, uint32_t rows, const std::string& raw) {
  if (!error_.ok()) return;
  std::string compressed(ZSTD_compressBound(raw.size()), '\0');
  const size_t size = ZSTD_compress(compressed.data(), compressed.size(), raw.data(), raw.size(), 3);
  if (ZSTD_isError(size)) {
    error_ = Status::Error(std::string("zstd: ") + ZSTD_getErrorName(size));
    return;
  }
  compressed.resize(size);
  std::string header;
  Put<uint32_t>(&header, kBlockMagic);
  Put<uint16_t>(&header, static_cast<uint16_t>(table));
  Put<uint16_t>(&header, 0);
  Put<uint32_t>(&header, rows);
  Put<uint32_t>(&header, static_cast<uint32_t>(raw.size()));
  Put<uint32_t>(&header, static_cast<uint32_t>(compressed.size()));
  Put<uint32_t>(&header,
                static_cast<uint32_t>(crc32(0, reinterpret_cast<const Bytef*>(compressed.data()), compressed.size())));
  // One write per block keeps a torn block at the end only, never in the middle.
  header += compressed;
  if (std::fwrite(header.data(), 1, header.size(), file_) != header.size()) {
    error_ = Status::Error("cannot write " + path_ + ": " + std::strerror(errno));
    return;
  }
  bytes_written_ += header.size();
}

Status SegmentWriter::Flush() {
  std::lock_guard lock(mutex_);
  WriteBufferedLocked();
  if (file_ && std::fflush(file_) != 0 && error_.ok())
    error_ = Status::Error("cannot write " + path_ + ": " + std::strerror(errno));
  return error_;
}

Status SegmentWriter::Close() {
  Status st = Flush();
  std::lock_guard lock(mutex_);
  if (file_) {
    if (std::fclose(file_) != 0 && st.ok()) st = Status::Error("cannot close " + path_ + ": " + std::strerror(errno));
    file_ = nullptr;
  }
  return st;
}

}  // namespace strata::segments
