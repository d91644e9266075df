// CsvReader: RFC 4180 records from a ByteSource, streamed in chunks, as pandas, Excel and Spark write them:
// an optional UTF-8 byte-order mark; fields separated by ',', ';' or a tab (the header decides which);
// quoted fields ("...") that may hold the delimiter, CR/LF and doubled quotes ("" = one quote); records
// ended by LF or CRLF (a lone CR inside a quoted field is data). Blank lines are skipped.
// The delimiter is the candidate that splits the header into the most of the expected column names, else
// the one that occurs most often outside quotes in the header (ties: ',', then ';', then tab).
// Invariants: memory is bounded by the largest record (at most max_record_bytes, else an error naming the
// line); fields of the current record stay valid until the next call to Next(); an unterminated quote is an
// error naming the file and the line where the record began.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "importers/byte_source.h"

namespace strata {

class CsvReader {
 public:
  explicit CsvReader(ByteSource& src, size_t max_record_bytes = 1 << 20, size_t chunk_bytes = 1 << 20);

  /// Reads the header record and picks the delimiter (see above). Error: no header, or a malformed one.
  Status ReadHeader(const std::vector<std::string>& expected_names, std::vector<std::string>* names);

  /// The next record's fields; false at the end of input. Errors: unterminated quote, oversized record,
  /// read errors.
  Expected<bool> Next(std::vector<std::string_view>* fields);

  /// 1-based line on which the last record read began.
  uint64_t line() const { return record_line_; }
  char delimiter() const { return delimiter_; }

 private:
  enum class Parse { kRecord, kNeedMore, kUnterminated };
  /// Parses one record starting at pos_ into fields_ (views into buf_ or scratch_).
  Parse ParseRecord(bool at_end, size_t* record_end);
  /// Reads more input into buf_ (dropping what was consumed); false at end of input.
  Expected<bool> Fill();

  ByteSource& src_;
  size_t max_record_bytes_, chunk_bytes_;
  std::string buf_;
  size_t pos_ = 0;
  bool eof_ = false;
  bool bom_checked_ = false;
  char delimiter_ = ',';
  uint64_t line_ = 1;                             // line at pos_
  uint64_t record_line_ = 0;                      // line where the last record began
  std::string scratch_;                           // unescaped quoted fields of the current record
  std::vector<std::pair<size_t, size_t>> spans_;  // per field: (offset, length) in buf_ or scratch_
  std::vector<bool> in_scratch_;
};

}  // namespace strata
