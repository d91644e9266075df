// Segment writer: columnar encoding, zstd compression and crc32 of each block (see segment_writer.h).
#include "segments/segment_writer.h"

#include <fcntl.h>
#include <unistd.h>

#include <zlib.h>
#include <zstd.h>

#include <fmt/format.h>
#include <time.h>

#include <cerrno>
#include <cstring>

#include "segments/column_codec.h"

namespace strata::segments {
namespace {

template <typename T>
void Put(std::string* out, T value) {
  out->append(reinterpret_cast<const char*>(&value), sizeof(value));
}

uint64_t MonotonicNs() {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1'000'000'000u + static_cast<uint64_t>(ts.tv_nsec);
}

bool DiskFull(int err) { return err == ENOSPC || err == EDQUOT; }

}  // namespace

SegmentWriter::~SegmentWriter() { (void)Close(); }

Status SegmentWriter::Open(const std::string& path, const FileHeader& header, size_t rows_per_block,
                           size_t max_pending_bytes) {
  std::lock_guard lock(mutex_);
  // A new file only: O_EXCL|O_NOFOLLOW never follows or reuses what another user planted under that name.
  fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd_ < 0) return Status::Resource("cannot create " + path + ": " + std::strerror(errno));
  path_ = path;
  rows_per_block_ = rows_per_block ? rows_per_block : 1;
  max_pending_bytes_ = max_pending_bytes;
  std::string bytes(kFileMagic);
  Put<uint32_t>(&bytes, header.version);
  Put<uint32_t>(&bytes, kFileHeaderSize);
  Put<int64_t>(&bytes, header.created_unix_ns);
  Put<int64_t>(&bytes, header.realtime_minus_monotonic_ns);
  if (!WriteWholeLocked(bytes)) {
    if (error_.ok()) error_ = Status::Resource("cannot write " + path + ": " + std::strerror(ENOSPC));
    return error_;
  }
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
  if (rows.empty() || fd_ < 0) return;
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
void SegmentWriter::Append(const PySampleRow& row) { AppendRow(py_samples_, row, Table::kPySample, kPySampleMembers); }
void SegmentWriter::Append(const CallEnterRow& row) {
  AppendRow(call_enters_, row, Table::kCallEnter, kCallEnterMembers);
}

void SegmentWriter::AppendMeta(const nlohmann::json& record) {
  std::lock_guard lock(mutex_);
  meta_.push_back(record.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
  if (meta_.size() >= rows_per_block_) WriteMetaLocked();
}

void SegmentWriter::WriteBufferedLocked() {
  if (fd_ < 0) return;
  WriteTableLocked(off_cpu_, Table::kOffCpu, kOffCpuMembers);
  WriteTableLocked(samples_, Table::kSample, kSampleMembers);
  WriteTableLocked(calls_, Table::kCall, kCallMembers);
  WriteTableLocked(gcs_, Table::kGc, kGcMembers);
  WriteTableLocked(counters_, Table::kCounter, kCounterMembers);
  WriteTableLocked(py_samples_, Table::kPySample, kPySampleMembers);
  WriteTableLocked(call_enters_, Table::kCallEnter, kCallEnterMembers);
  WriteMetaLocked();
}

void SegmentWriter::WriteMetaLocked() {
  if (meta_.empty() || fd_ < 0) return;
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
  std::string block = EncodeBlockLocked(table, rows, raw);
  if (block.empty()) return;
  if (!pending_.empty() || full_since_ns_ != 0 || !WriteWholeLocked(block)) KeepLocked(std::move(block), table, rows);
}

std::string SegmentWriter::EncodeBlockLocked(Table table, uint32_t rows, const std::string& raw) {
  std::string compressed(ZSTD_compressBound(raw.size()), '\0');
  const size_t size = ZSTD_compress(compressed.data(), compressed.size(), raw.data(), raw.size(), 3);
  if (ZSTD_isError(size)) {
    error_ = Status::Resource(std::string("zstd: ") + ZSTD_getErrorName(size));
    return {};
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
  header += compressed;
  return header;
}

bool SegmentWriter::WriteWholeLocked(const std::string& block) {
  if (!error_.ok() || fd_ < 0) return true;  // nothing more is written after a hard error
  size_t done = 0;
  while (done < block.size()) {
    const ssize_t n = ::write(fd_, block.data() + done, block.size() - done);
    if (n > 0) {
      done += static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    const int err = n < 0 ? errno : ENOSPC;
    // A torn block would end the readable file here: cut it off, so that later blocks can follow.
    if (done > 0 && (::ftruncate(fd_, static_cast<off_t>(bytes_written_)) != 0 ||
                     ::lseek(fd_, static_cast<off_t>(bytes_written_), SEEK_SET) < 0))
      error_ = Status::Resource("cannot write " + path_ + ": " + std::strerror(errno));
    else if (!DiskFull(err))
      error_ = Status::Resource("cannot write " + path_ + ": " + std::strerror(err));
    return !error_.ok();  // a hard error is recorded, not kept for later
  }
  bytes_written_ += block.size();
  return true;
}

void SegmentWriter::KeepLocked(std::string block, Table table, uint32_t rows) {
  if (!error_.ok()) return;
  if (full_since_ns_ == 0) full_since_ns_ = MonotonicNs();
  pending_bytes_ += block.size();
  pending_.push_back({std::move(block), table, rows});
  // Over the bound: drop the oldest table blocks (meta blocks define ids that later rows refer to).
  for (auto it = pending_.begin(); pending_bytes_ > max_pending_bytes_ && it != pending_.end();) {
    if (it->table == Table::kMeta) {
      ++it;
      continue;
    }
    pending_bytes_ -= it->block.size();
    dropped_[it->table] += it->rows;
    dropped_total_[std::string(TableName(it->table))] += it->rows;
    it = pending_.erase(it);
  }
}

void SegmentWriter::DrainPendingLocked() {
  if (full_since_ns_ == 0) return;
  while (!pending_.empty()) {
    if (!WriteWholeLocked(pending_.front().block) || !error_.ok()) return;
    pending_bytes_ -= pending_.front().block.size();
    pending_.pop_front();
  }
  if (!dropped_.empty()) {  // say what the file lacks, and when; retried until it is written
    nlohmann::json rows = nlohmann::json::object();
    for (const auto& [table, n] : dropped_) rows[std::string(TableName(table))] = n;
    const std::string record = nlohmann::json{
        {"type", "gap"},
        {"reason", "disk full"},
        {"from_ns", full_since_ns_},
        {"to_ns", MonotonicNs()},
        {"dropped_rows", rows}}.dump();
    std::string raw;
    Put<uint32_t>(&raw, static_cast<uint32_t>(record.size()));
    raw += record;
    const std::string block = EncodeBlockLocked(Table::kMeta, 1, raw);
    if (block.empty() || !WriteWholeLocked(block) || !error_.ok()) return;
    dropped_.clear();
  }
  full_since_ns_ = 0;
}

Status SegmentWriter::Flush() {
  std::lock_guard lock(mutex_);
  DrainPendingLocked();
  WriteBufferedLocked();
  return error_;
}

Status SegmentWriter::Close() {
  Status st = Flush();
  std::lock_guard lock(mutex_);
  if (st.ok() && (!pending_.empty() || !dropped_total_.empty())) {
    uint64_t waiting = 0;
    for (const Pending& p : pending_) waiting += p.table == Table::kMeta ? 0 : p.rows;
    uint64_t dropped = 0;
    for (const auto& [table, n] : dropped_total_) dropped += n;
    st = Status::Resource(fmt::format(
        "{}: the disk was full: {} rows were not written ({} dropped while waiting, {} "
        "still waiting at the end){}",
        path_, dropped + waiting, dropped, waiting,
        pending_.empty() ? "; the file says where (gap records)" : "; the recording ends at its last written block"));
  }
  if (fd_ >= 0) {
    if (::close(fd_) != 0 && st.ok()) st = Status::Resource("cannot close " + path_ + ": " + std::strerror(errno));
    fd_ = -1;
  }
  return st;
}

bool SegmentWriter::disk_full() const {
  std::lock_guard lock(mutex_);
  return full_since_ns_ != 0;
}

std::map<std::string, uint64_t> SegmentWriter::dropped_rows() const {
  std::lock_guard lock(mutex_);
  return dropped_total_;
}

}  // namespace strata::segments
