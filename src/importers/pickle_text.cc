// Pickle argument decoders (see pickle_text.h), written from the descriptions of CPython's pickletools and
// codecs documentation.
#include "importers/pickle_text.h"

#include <charconv>

namespace strata::pickle_text {
namespace {

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

/// Length of the UTF-8 sequence led by `lead` and the smallest code point it may encode; 0 when no
/// sequence starts with it.
int SequenceLength(unsigned char lead, uint32_t* min_cp) {
  if (lead < 0x80) return 1;
  if (lead >= 0xC2 && lead <= 0xDF) return *min_cp = 0x80, 2;
  if (lead >= 0xE0 && lead <= 0xEF) return *min_cp = 0x800, 3;
  if (lead >= 0xF0 && lead <= 0xF4) return *min_cp = 0x10000, 4;
  return 0;
}

}  // namespace

size_t FindInvalidUtf8(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    const auto lead = static_cast<unsigned char>(s[i]);
    uint32_t min_cp = 0;
    const int len = SequenceLength(lead, &min_cp);
    if (len == 0 || s.size() - i < static_cast<size_t>(len)) return i;
    if (len == 1) {
      ++i;
      continue;
    }
    uint32_t cp = lead & (0x7F >> len);
    for (int k = 1; k < len; ++k) {
      const auto c = static_cast<unsigned char>(s[i + k]);
      if ((c & 0xC0) != 0x80) return i;
      cp = (cp << 6) | (c & 0x3F);
    }
    if (cp < min_cp || cp > 0x10FFFF) return i;
    i += len;
  }
  return std::string_view::npos;
}

void AppendUtf8(uint32_t cp, std::string* out) {
  if (cp < 0x80) {
    out->push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out->push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out->push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out->push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

bool DecodeRawUnicodeEscape(std::string_view in, std::string* utf8, std::string* why) {
  size_t i = 0;
  while (i < in.size()) {
    if (in[i] != '\\') {
      AppendUtf8(static_cast<unsigned char>(in[i++]), utf8);
      continue;
    }
    size_t end = i;
    while (end < in.size() && in[end] == '\\') ++end;
    const size_t run = end - i;
    const bool escape = run % 2 == 1 && end < in.size() && (in[end] == 'u' || in[end] == 'U');
    utf8->append(escape ? run - 1 : run, '\\');
    i = end;
    if (!escape) continue;
    const size_t digits = in[i] == 'u' ? 4 : 8;
    uint32_t cp = 0;
    for (size_t k = 1; k <= digits; ++k) {
      const int d = i + k < in.size() ? HexDigit(in[i + k]) : -1;
      if (d < 0) return *why = digits == 4 ? "truncated \\uXXXX escape" : "truncated \\UXXXXXXXX escape", false;
      cp = (cp << 4) | static_cast<uint32_t>(d);
    }
    if (cp > 0x10FFFF) return *why = "\\UXXXXXXXX escape out of range", false;
    AppendUtf8(cp, utf8);
    i += digits + 1;
  }
  return true;
}

bool ParseDecimal(std::string_view text, int64_t* value) {
  if (!text.empty() && text[0] == '+') text.remove_prefix(1);
  if (text.empty() || text[0] == '+') return false;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), *value);
  return ec == std::errc() && end == text.data() + text.size();
}

bool ParseFloatText(std::string_view text, double* value) {
  if (!text.empty() && text[0] == '+') text.remove_prefix(1);
  if (text.empty() || text[0] == '+') return false;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), *value);
  return ec == std::errc() && end == text.data() + text.size();
}

bool DecodeLittleEndianSigned(std::string_view bytes, int64_t* value) {
  const size_t n = bytes.size();
  if (n == 0) return *value = 0, true;
  const bool negative = (static_cast<unsigned char>(bytes[n - 1]) & 0x80) != 0;
  const unsigned char fill = negative ? 0xFF : 0x00;
  for (size_t i = 8; i < n; ++i) {
    if (static_cast<unsigned char>(bytes[i]) != fill) return false;
  }
  if (n > 8 && ((static_cast<unsigned char>(bytes[7]) & 0x80) != 0) != negative) return false;
  uint64_t u = 0;
  for (size_t i = 0; i < 8; ++i) {
    const uint64_t byte = i < n ? static_cast<unsigned char>(bytes[i]) : fill;
    u |= byte << (8 * i);
  }
  *value = static_cast<int64_t>(u);
  return true;
}

}  // namespace strata::pickle_text
