// Escaping of untrusted bytes for JSON and terminals (see text_escape.h).
#include "core/text_escape.h"

#include <fmt/format.h>

namespace strata {

namespace {

/// Length of the valid UTF-8 sequence at s[i] (1-4), or 0 when the bytes there are not one.
size_t Utf8Length(std::string_view s, size_t i) {
  const auto b = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char c = b(i);
  if (c < 0x80) return 1;
  size_t n;
  uint32_t cp;
  if ((c & 0xE0) == 0xC0)
    n = 2, cp = c & 0x1F;
  else if ((c & 0xF0) == 0xE0)
    n = 3, cp = c & 0x0F;
  else if ((c & 0xF8) == 0xF0)
    n = 4, cp = c & 0x07;
  else
    return 0;
  if (i + n > s.size()) return 0;
  for (size_t k = 1; k < n; ++k) {
    if ((b(i + k) & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (b(i + k) & 0x3F);
  }
  // No overlong forms, no surrogates, nothing above U+10FFFF.
  if ((n == 2 && cp < 0x80) || (n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000)) return 0;
  if ((cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF) return 0;
  return n;
}

std::string Escape(std::string_view in, bool terminal) {
  std::string out;
  out.reserve(in.size());
  for (size_t i = 0; i < in.size();) {
    const size_t n = Utf8Length(in, i);
    if (n == 0) {
      out += fmt::format("\\x{:02x}", static_cast<unsigned char>(in[i]));
      ++i;
      continue;
    }
    const auto c = static_cast<unsigned char>(in[i]);
    if (terminal && n == 1 && (c < 0x20 || c == 0x7F)) {
      out += fmt::format("\\x{:02x}", c);
    } else if (terminal && n == 2 && c == 0xC2 && static_cast<unsigned char>(in[i + 1]) < 0xA0) {
      out += fmt::format("\\u{:04x}", static_cast<unsigned char>(in[i + 1]) & 0xFF);  // C1: U+0080-U+009F
    } else {
      out.append(in.substr(i, n));
    }
    i += n;
  }
  return out;
}

}  // namespace

std::string JsonSafe(std::string_view bytes) { return Escape(bytes, false); }
std::string TerminalSafe(std::string_view bytes) { return Escape(bytes, true); }

}  // namespace strata
