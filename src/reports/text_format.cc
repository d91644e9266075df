// Text formatting helpers (see text_format.h).
#include "reports/text_format.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace strata::text {

std::string Sig3(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  if (v == 0) return "0";
  const double a = std::abs(v);
  // Decimals so that three significant digits show; recomputed after rounding (9.996 -> "10.0").
  auto decimals = [](double x) { return std::max(0, 2 - static_cast<int>(std::floor(std::log10(x)))); };
  int d = decimals(a);
  const double rounded = std::round(a * std::pow(10.0, d)) / std::pow(10.0, d);
  if (rounded > 0) d = decimals(rounded);
  return fmt::format("{:.{}f}", v, d);
}

std::string Duration(double ms) {
  if (std::isnan(ms) || std::isinf(ms)) return Sig3(ms) + " ms";
  // Each unit is kept while the value as printed stays below 1000, so 999.95 ms shows "1.00 s".
  const auto below_1000 = [](double x) { return std::abs(std::stod(Sig3(x))) < 1000.0; };
  if (std::abs(ms) < 1.0 && ms != 0 && below_1000(ms * 1e3)) return Sig3(ms * 1e3) + " µs";
  if (below_1000(ms)) return Sig3(ms) + " ms";
  return Sig3(ms / 1e3) + " s";
}

std::string Percent(double pct) { return Sig3(pct) + "%"; }

std::string Count(uint64_t n, const std::string& noun, const std::string& plural) {
  return fmt::format("{} {}", n, n == 1 ? noun : plural.empty() ? noun + "s" : plural);
}

size_t Columns(const std::string& s) {
  size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

std::string Clip(const std::string& s, size_t width) {
  if (Columns(s) <= width) return s;
  const size_t keep = width > 3 ? width - 3 : 0;
  size_t cols = 0, i = 0;
  for (; i < s.size(); ++i) {
    if ((static_cast<unsigned char>(s[i]) & 0xC0) != 0x80) {
      if (cols == keep) break;
      ++cols;
    }
  }
  return s.substr(0, i) + std::string("...").substr(0, width - keep);
}

namespace {

/// The byte offset of code point `n` of `s` (s.size() past its end).
size_t CodePointOffset(const std::string& s, size_t n) {
  size_t cols = 0;
  for (size_t i = 0; i < s.size(); ++i)
    if ((static_cast<unsigned char>(s[i]) & 0xC0) != 0x80 && cols++ == n) return i;
  return s.size();
}

}  // namespace

std::string ShortenMiddle(const std::string& s, size_t width) {
  const size_t columns = Columns(s);
  if (columns <= width) return s;
  if (width < 2) return Clip(s, width);
  const size_t head = width / 2, tail = width - 1 - head;
  return s.substr(0, CodePointOffset(s, head)) + "…" + s.substr(CodePointOffset(s, columns - tail));
}

std::string ClipAtWord(const std::string& s, size_t width) {
  if (Columns(s) <= width) return s;
  for (size_t space = s.rfind(' '); space != std::string::npos && space > 0; space = s.rfind(' ', space - 1)) {
    const std::string head = s.substr(0, space);
    if (head.find_first_not_of(' ') != std::string::npos && Columns(head) + 4 <= width) return head + " ...";
  }
  return Clip(s, width);
}

std::string Wrap(const std::string& s, size_t width, const std::string& indent, size_t hang) {
  std::vector<std::string> words;
  for (size_t i = 0; i < s.size();) {
    const size_t j = s.find(' ', i);
    const size_t end = j == std::string::npos ? s.size() : j;
    if (end > i) words.push_back(s.substr(i, end - i));
    i = end + 1;
  }
  const std::string cont = indent + std::string(hang, ' ');
  std::string out, line = indent;
  bool empty = true;
  for (const auto& w : words) {
    if (!empty && Columns(line) + 1 + Columns(w) > width) {
      out += line + "\n";
      line = cont;
      empty = true;
    }
    if (!empty) line += " ";
    line += w;
    empty = false;
    if (Columns(line) > width) {
      const size_t before = Columns(line) - Columns(w);
      line = line.substr(0, line.size() - w.size()) + ShortenMiddle(w, width > before ? width - before : 1);
    }
  }
  return out + line + "\n";
}

std::string IntRanges(const std::vector<int64_t>& v, size_t max_items) {
  if (v.empty()) return "none";
  std::vector<std::string> parts;
  size_t i = 0;
  while (i < v.size()) {
    size_t j = i;
    while (j + 1 < v.size() && v[j + 1] == v[j] + 1) ++j;
    parts.push_back(j == i ? fmt::format("{}", v[i]) : fmt::format("{}-{}", v[i], v[j]));
    i = j + 1;
  }
  std::string out;
  for (size_t k = 0; k < parts.size() && k < max_items; ++k) out += (k ? "," : "") + parts[k];
  if (parts.size() > max_items) out += fmt::format(",... ({} in all)", v.size());
  return out;
}

Table::Table(std::vector<std::string> headers) {
  for (auto& h : headers) {
    const bool right = !h.empty() && h[0] == '>';
    right_.push_back(right);
    headers_.push_back(right ? h.substr(1) : h);
  }
}

void Table::Add(std::vector<std::string> row) {
  row.resize(headers_.size());
  rows_.push_back(std::move(row));
}

std::string Table::Render(const std::string& indent) const {
  std::vector<size_t> width(headers_.size(), 0);
  for (size_t c = 0; c < headers_.size(); ++c) width[c] = Columns(headers_[c]);
  for (const auto& row : rows_)
    for (size_t c = 0; c < row.size(); ++c) width[c] = std::max(width[c], Columns(row[c]));
  auto line = [&](const std::vector<std::string>& cells) {
    std::string out = indent;
    for (size_t c = 0; c < cells.size(); ++c) {
      const std::string pad(width[c] - Columns(cells[c]), ' ');
      const bool last = c + 1 == cells.size();
      if (c) out += "  ";
      out += right_[c] ? pad + cells[c] : cells[c] + (last ? "" : pad);
    }
    while (!out.empty() && out.back() == ' ') out.pop_back();
    return out + "\n";
  };
  std::string out = line(headers_);
  for (const auto& row : rows_) out += line(row);
  return out;
}

}  // namespace strata::text
