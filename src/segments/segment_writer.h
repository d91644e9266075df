// Writes one segment file (segment_format.h): rows are buffered per table and written as a zstd block
// when a table's buffer is full or on Flush(). Thread-safe (the recorder appends from its event and
// counter threads). Invariant: after Flush() returns, everything appended so far is in complete blocks
// handed to the kernel, so a killed recorder leaves a readable file — or, when the file system is full,
// held in memory: blocks that cannot be written (ENOSPC, EDQUOT) wait in order, up to `max_pending_bytes`
// (the oldest table blocks beyond it are dropped and counted; meta blocks are never dropped), and are
// written at the next Flush() that succeeds, followed by a "gap" meta record when any were dropped. The
// file never holds a torn block: a short write is truncated back to the last complete block.
#pragma once

#include <cstdio>
#include <deque>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/status.h"
#include "segments/segment_tables.h"

namespace strata::segments {

class SegmentWriter {
 public:
  SegmentWriter() = default;
  ~SegmentWriter();
  SegmentWriter(const SegmentWriter&) = delete;
  SegmentWriter& operator=(const SegmentWriter&) = delete;

  // Creates `path` (a new file) and writes the file header.
  Status Open(const std::string& path, const FileHeader& header, size_t rows_per_block = 65536,
              size_t max_pending_bytes = 64u << 20);

  void Append(const OffCpuRow& row);
  void Append(const SampleRow& row);
  void Append(const CallRow& row);
  void Append(const GcRow& row);
  void Append(const CounterRow& row);
  void Append(const PySampleRow& row);
  void Append(const CallEnterRow& row);
  void AppendMeta(const nlohmann::json& record);

  // Writes every buffered row as blocks (and blocks waiting for disk space). Returns the first write error
  // other than a full disk, if any.
  Status Flush();
  // Flush(), then an error when blocks are still waiting for disk space (they are lost) or were dropped.
  Status Close();

  // The disk is full now (blocks wait in memory).
  bool disk_full() const;
  // Rows dropped so far (pending bytes over the bound), by table name.
  std::map<std::string, uint64_t> dropped_rows() const;

  const std::string& path() const { return path_; }
  size_t bytes_written() const { return bytes_written_; }

 private:
  template <typename Row, typename Members>
  void AppendRow(std::vector<Row>& buffer, const Row& row, Table table, const Members& members);
  template <typename Row, typename Members>
  void WriteTableLocked(std::vector<Row>& rows, Table table, const Members& members);
  void WriteBufferedLocked();
  void WriteMetaLocked();
  void WriteBlockLocked(Table table, uint32_t rows, const std::string& raw);
  // The block as stored (header + zstd payload); empty after a compression error (recorded in error_).
  std::string EncodeBlockLocked(Table table, uint32_t rows, const std::string& raw);
  // Writes `block` whole or not at all (a short write is truncated away). False when the disk is full.
  bool WriteWholeLocked(const std::string& block);
  void KeepLocked(std::string block, Table table, uint32_t rows);
  void DrainPendingLocked();

  struct Pending {
    std::string block;
    Table table;
    uint32_t rows;
  };
  mutable std::mutex mutex_;
  int fd_ = -1;
  std::string path_;
  size_t rows_per_block_ = 65536;
  size_t bytes_written_ = 0;
  Status error_;
  std::vector<OffCpuRow> off_cpu_;
  std::vector<SampleRow> samples_;
  std::vector<CallRow> calls_;
  std::vector<GcRow> gcs_;
  std::vector<CounterRow> counters_;
  std::vector<PySampleRow> py_samples_;
  std::vector<CallEnterRow> call_enters_;
  std::vector<std::string> meta_;
  size_t max_pending_bytes_ = 64u << 20;
  std::deque<Pending> pending_;
  size_t pending_bytes_ = 0;
  uint64_t full_since_ns_ = 0;         // CLOCK_MONOTONIC when the disk became full (0: not full)
  std::map<Table, uint64_t> dropped_;  // rows dropped since the disk became full
  std::map<std::string, uint64_t> dropped_total_;
};

}  // namespace strata::segments
