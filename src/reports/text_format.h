// Shared formatting for the text reports (diagnose, summary, inspect): numbers to three significant
// digits, durations scaled to µs / ms / s, and left/right-aligned tables. Every function is pure; the
// tables measure width in code points so "µs" takes one column.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace strata {

/// The text reports' width when none is given (and when the output is not a terminal): 100 columns.
inline constexpr size_t kDefaultTextWidth = 100;
/// Narrower than this, a report's lines would be mostly indentation: a smaller width is raised to it.
inline constexpr size_t kMinTextWidth = 60;

}  // namespace strata

namespace strata::text {

/// `v` with three significant digits, no exponent: 23.0, 0.657, 1.23, 412, 12346 (integers of more than
/// three digits keep all of them). NaN prints "nan", infinities "inf" / "-inf".
std::string Sig3(double v);

/// A duration given in milliseconds, scaled to the unit that keeps 1 <= value < 1000 where possible
/// (ns below 1 µs is shown in µs): "412 µs", "1.50 ms", "23.0 s". Negative durations keep the sign.
std::string Duration(double ms);

/// A percentage with three significant digits: "51.4%", "0.500%".
std::string Percent(double pct);

/// `n` and the noun, singular for one: Count(1, "rank") is "1 rank", Count(3, "step") "3 steps". `plural`
/// when the noun does not take an s.
std::string Count(uint64_t n, const std::string& noun, const std::string& plural = "");

/// Number of terminal columns `s` takes (UTF-8 code points).
size_t Columns(const std::string& s);

/// `s` cut to at most `width` columns, ending in "..." when cut.
std::string Clip(const std::string& s, size_t width);

/// `s` shortened in the middle to at most `width` columns: its start and its end kept, "…" between them, so two
/// names that differ at either end stay different ("ampere_bf16_s1688gemm_…_128x64_nn"); as is when it fits.
std::string ShortenMiddle(const std::string& s, size_t width);

/// `s` cut at its last space that leaves room for " ..." within `width` columns, so no word or number is cut
/// in half; Clip when no space leaves room.
std::string ClipAtWord(const std::string& s, size_t width);

/// `s` word-wrapped to `width` columns: every line starts with `indent`, continuation lines with `hang`
/// more spaces; a word longer than a line is shortened in the middle (ShortenMiddle), never cut at its end. Ends with a
/// newline.
std::string Wrap(const std::string& s, size_t width, const std::string& indent, size_t hang);

/// Sorted integers as ranges: "1-5", "4,6,9-12"; past `max_items` ranges, "... (N in all)".
std::string IntRanges(const std::vector<int64_t>& v, size_t max_items = 6);

/// A table of text cells. Columns whose header starts with '>' are right-aligned (the '>' is not printed).
/// Render() pads every cell to its column's widest cell, joins columns with two spaces and indents each line.
class Table {
 public:
  explicit Table(std::vector<std::string> headers);
  void Add(std::vector<std::string> row);  // missing cells print empty, extra cells are dropped
  std::string Render(const std::string& indent = "") const;
  size_t rows() const { return rows_.size(); }

 private:
  std::vector<std::string> headers_;
  std::vector<bool> right_;
  std::vector<std::vector<std::string>> rows_;
};

}  // namespace strata::text
