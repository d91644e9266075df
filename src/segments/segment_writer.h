// Writes one segment file (segment_format.h): rows are buffered per table and written as a zstd block
// when a table's buffer is full or on Flush(). Thread-safe (the recorder appends from its event and
// counter threads). Invariant: after Flush() returns, everything appended so far is in complete blocks
// handed to the kernel, so a killed recorder leaves a readable file.
#pragma once

#include <cstdio>
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

  // Creates (truncates) `path` and writes the file header.
  Status Open(const std::string& path, const FileHeader& header, size_t rows_per_block = 65536);

  void Append(const OffCpuRow& row);
  void Append(const SampleRow& row);
  void Append(const CallRow& row);
  void Append(const GcRow& row);
  void Append(const CounterRow& row);
  void AppendMeta(const nlohmann::json& record);

  // Writes every buffered row as blocks and flushes the file. Returns the first write error, if any.
  Status Flush();
  Status Close();

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

  std::mutex mutex_;
  FILE* file_ = nullptr;
  std::string path_;
  size_t rows_per_block_ = 65536;
  size_t bytes_written_ = 0;
  Status error_;
  std::vector<OffCpuRow> off_cpu_;
  std::vector<SampleRow> samples_;
  std::vector<CallRow> calls_;
  std::vector<GcRow> gcs_;
  std::vector<CounterRow> counters_;
  std::vector<std::string> meta_;
};

}  // namespace strata::segments
