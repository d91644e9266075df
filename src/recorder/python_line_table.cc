// CPython 3.11's location table decoder (see python_line_table.h).
#include "recorder/python_line_table.h"

#include <optional>

namespace strata::recorder {
namespace {

// The entry codes (CPython's Include/cpython/code.h, _PyCodeLocationInfoKind).
constexpr int kNone = 15, kLong = 14, kNoColumns = 13, kOneLine0 = 10, kOneLine2 = 12;

// A reader of one table that never reads past its end.
class Cursor {
 public:
  explicit Cursor(std::span<const uint8_t> table) : table_(table) {}

  bool AtEnd() const { return pos_ >= table_.size(); }

  std::optional<uint8_t> Byte() {
    if (AtEnd()) return std::nullopt;
    return table_[pos_++];
  }

  // 6-bit chunks, least significant first, bit 6 set on every chunk but the last (CPython's read_varint). A
  // value that would not fit an int (more than 5 chunks) is garbage: nullopt.
  std::optional<uint32_t> Varint() {
    uint32_t value = 0;
    for (int shift = 0; shift <= 24; shift += 6) {
      const auto b = Byte();
      if (!b) return std::nullopt;
      value |= static_cast<uint32_t>(*b & 63) << shift;
      if (!(*b & 64)) return value;
    }
    return std::nullopt;
  }

  // An unsigned varint whose bit 0 is the sign (CPython's read_signed_varint).
  std::optional<int> SignedVarint() {
    const auto v = Varint();
    if (!v) return std::nullopt;
    const int magnitude = static_cast<int>(*v >> 1);
    return (*v & 1) ? -magnitude : magnitude;
  }

 private:
  std::span<const uint8_t> table_;
  size_t pos_ = 0;
};

// The entry at the cursor, lines from *line (advanced by its delta); nullopt when it does not decode.
std::optional<PythonLocationRange> NextEntry(Cursor& in, int start, int* line) {
  const auto first = in.Byte();
  if (!first || !(*first & 128)) return std::nullopt;
  const int code = (*first >> 3) & 15;
  PythonLocationRange r;
  r.start = start;
  r.end = start + (*first & 7) + 1;
  PythonPosition& p = r.position;
  if (code == kNone) return r;  // no location; the running line is unchanged
  if (code == kLong || code == kNoColumns) {
    const auto delta = in.SignedVarint();
    if (!delta) return std::nullopt;
    *line += *delta;
    p.line = p.end_line = *line;
    if (code == kNoColumns) return r;
    const auto end_delta = in.Varint(), column = in.Varint(), end_column = in.Varint();
    if (!end_delta || !column || !end_column) return std::nullopt;
    p.end_line = *line + static_cast<int>(*end_delta);
    p.column = static_cast<int>(*column) - 1;
    p.end_column = static_cast<int>(*end_column) - 1;
    return r;
  }
  if (code >= kOneLine0 && code <= kOneLine2) {
    *line += code - kOneLine0;
    const auto column = in.Byte(), end_column = in.Byte();
    if (!column || !end_column) return std::nullopt;
    p.line = p.end_line = *line;
    p.column = *column;
    p.end_column = *end_column;
    return r;
  }
  const auto second = in.Byte();  // short form: the same line
  if (!second || (*second & 128)) return std::nullopt;
  p.line = p.end_line = *line;
  p.column = code << 3 | (*second >> 4);
  p.end_column = p.column + (*second & 15);
  return r;
}

}  // namespace

std::vector<PythonLocationRange> DecodePythonLocations(std::span<const uint8_t> table, int first_line, bool* complete) {
  std::vector<PythonLocationRange> out;
  Cursor in(table);
  int line = first_line, start = 0;
  while (!in.AtEnd()) {
    const auto entry = NextEntry(in, start, &line);
    if (!entry) {
      if (complete) *complete = false;
      return out;
    }
    start = entry->end;
    out.push_back(*entry);
  }
  if (complete) *complete = true;
  return out;
}

int PythonLineOfCodeUnit(std::span<const uint8_t> table, int first_line, int64_t unit) {
  if (unit < 0) return first_line;
  Cursor in(table);
  int line = first_line, start = 0;
  while (!in.AtEnd()) {
    const auto entry = NextEntry(in, start, &line);
    if (!entry) return -1;
    if (unit < entry->end) return entry->position.line;
    start = entry->end;
  }
  return -1;
}

}  // namespace strata::recorder
