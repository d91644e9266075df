// RFC 4180 record reader (see csv_reader.h).
#include "importers/csv_reader.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>

namespace strata {

namespace {

constexpr std::string_view kBom = "\xEF\xBB\xBF";
constexpr std::array<char, 3> kDelimiters = {',', ';', '\t'};

/// Splits a header line (no record end inside) on `delim` outside quotes; quotes are removed, "" kept as ".
std::vector<std::string> SplitHeader(std::string_view line, char delim) {
  std::vector<std::string> out(1);
  bool quoted = false;
  for (size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        out.back() += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        out.back() += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == delim) {
      out.emplace_back();
    } else if (c != '\r') {
      out.back() += c;
    }
  }
  return out;
}

}  // namespace

CsvReader::CsvReader(ByteSource& src, size_t max_record_bytes, size_t chunk_bytes)
    : src_(src), max_record_bytes_(max_record_bytes), chunk_bytes_(std::max<size_t>(chunk_bytes, 16)) {}

Expected<bool> CsvReader::Fill() {
  if (eof_) return false;
  buf_.erase(0, pos_);
  pos_ = 0;
  const size_t old = buf_.size();
  buf_.resize(old + chunk_bytes_);
  auto got = src_.Read(buf_.data() + old, chunk_bytes_);
  if (!got.ok()) return got.status();
  buf_.resize(old + got.value());
  if (got.value() == 0) eof_ = true;
  if (!bom_checked_ && (buf_.size() >= kBom.size() || eof_)) {
    bom_checked_ = true;
    if (std::string_view(buf_).substr(0, kBom.size()) == kBom) buf_.erase(0, kBom.size());
  }
  return got.value() > 0;
}

CsvReader::Parse CsvReader::ParseRecord(bool at_end, size_t* record_end) {
  spans_.clear();
  in_scratch_.clear();
  scratch_.clear();
  size_t i = pos_;
  const size_t n = buf_.size();
  while (true) {  // one field per iteration
    if (i < n && buf_[i] == '"') {
      const size_t begin = scratch_.size();
      ++i;
      while (true) {
        if (i >= n) return at_end ? Parse::kUnterminated : Parse::kNeedMore;
        const char c = buf_[i];
        if (c == '"') {
          if (i + 1 >= n && !at_end) return Parse::kNeedMore;  // "" may straddle the chunk boundary
          if (i + 1 < n && buf_[i + 1] == '"') {
            scratch_ += '"';
            i += 2;
            continue;
          }
          ++i;
          break;
        }
        scratch_ += c;
        ++i;
      }
      // Characters after the closing quote up to the delimiter are kept (lenient, as pandas is).
      while (i < n && buf_[i] != delimiter_ && buf_[i] != '\n' && buf_[i] != '\r') scratch_ += buf_[i++];
      spans_.emplace_back(begin, scratch_.size() - begin);
      in_scratch_.push_back(true);
    } else {
      const size_t begin = i;
      while (i < n && buf_[i] != delimiter_ && buf_[i] != '\n') ++i;
      size_t end = i;
      if (i < n && buf_[i] == '\n' && end > begin && buf_[end - 1] == '\r') --end;
      if (i >= n && !at_end) return Parse::kNeedMore;
      if (i >= n && end > begin && buf_[end - 1] == '\r') --end;
      spans_.emplace_back(begin, end - begin);
      in_scratch_.push_back(false);
    }
    if (i < n && buf_[i] == '\r' && i + 1 < n && buf_[i + 1] == '\n') ++i;  // CRLF after a quoted field
    if (i >= n) {
      if (!at_end) return Parse::kNeedMore;
      *record_end = n;
      return Parse::kRecord;
    }
    if (buf_[i] == '\n') {
      *record_end = i + 1;
      return Parse::kRecord;
    }
    if (buf_[i] == '\r') {  // a lone CR ends the record too
      *record_end = i + 1;
      return Parse::kRecord;
    }
    ++i;  // the delimiter
  }
}

Expected<bool> CsvReader::Next(std::vector<std::string_view>* fields) {
  fields->clear();
  while (true) {
    // Skip blank lines.
    while (pos_ < buf_.size() && (buf_[pos_] == '\n' || buf_[pos_] == '\r')) {
      if (buf_[pos_] == '\n') ++line_;
      ++pos_;
    }
    if (pos_ >= buf_.size()) {
      auto more = Fill();
      if (!more.ok()) return more.status();
      if (!more.value()) return false;
      continue;
    }
    size_t end = 0;
    const Parse p = ParseRecord(eof_, &end);
    if (p == Parse::kNeedMore) {
      if (buf_.size() - pos_ > max_record_bytes_)
        return Status::BadInput(fmt::format("{}: line {}: a record longer than {} bytes (an unclosed quote?)",
                                            src_.path(), line_, max_record_bytes_),
                                ErrorPlace::AtLine(src_.path(), line_));
      auto more = Fill();
      if (!more.ok()) return more.status();
      continue;  // parse again with more data (eof_ now tells whether the record may end at the buffer end)
    }
    if (p == Parse::kUnterminated)
      return Status::BadInput(
          fmt::format("{}: line {}: a quoted field is not closed before the end of the file", src_.path(), line_),
          ErrorPlace::AtLine(src_.path(), line_));
    record_line_ = line_;
    line_ += static_cast<uint64_t>(std::count(buf_.begin() + static_cast<std::ptrdiff_t>(pos_),
                                              buf_.begin() + static_cast<std::ptrdiff_t>(end), '\n'));
    for (size_t k = 0; k < spans_.size(); ++k) {
      const auto [off, len] = spans_[k];
      fields->push_back(in_scratch_[k] ? std::string_view(scratch_).substr(off, len)
                                       : std::string_view(buf_).substr(off, len));
    }
    pos_ = end;
    return true;
  }
}

Status CsvReader::ReadHeader(const std::vector<std::string>& expected_names, std::vector<std::string>* names) {
  // The header line: fill until it is complete (a header never spans lines in practice; quotes are honoured).
  while (true) {
    while (pos_ < buf_.size() && (buf_[pos_] == '\n' || buf_[pos_] == '\r')) {
      if (buf_[pos_] == '\n') ++line_;
      ++pos_;
    }
    const size_t nl = buf_.find('\n', pos_);
    if (nl != std::string::npos || eof_) break;
    if (buf_.size() - pos_ > max_record_bytes_)
      return Status::BadInput(
          fmt::format("{}: the header line is longer than {} bytes", src_.path(), max_record_bytes_),
          ErrorPlace::AtLine(src_.path(), 1));
    auto more = Fill();
    if (!more.ok()) return more.status();
  }
  if (pos_ >= buf_.size())
    return Status::BadInput(fmt::format("{}: empty op table (no header line)", src_.path()), ErrorPlace{src_.path()});
  const size_t nl = buf_.find('\n', pos_);
  const std::string_view line =
      std::string_view(buf_).substr(pos_, nl == std::string::npos ? std::string::npos : nl - pos_);
  size_t best_known = 0, best_fields = 0;
  char best = ',';
  for (char d : kDelimiters) {
    const std::vector<std::string> split = SplitHeader(line, d);
    size_t known = 0;
    for (const std::string& name : split)
      known += std::find(expected_names.begin(), expected_names.end(), name) != expected_names.end();
    if (known > best_known || (known == best_known && split.size() > best_fields)) {
      best_known = known;
      best_fields = split.size();
      best = d;
    }
  }
  delimiter_ = best;
  std::vector<std::string_view> fields;
  auto got = Next(&fields);
  if (!got.ok()) return got.status();
  names->assign(fields.begin(), fields.end());
  return Status::Ok();
}

}  // namespace strata
