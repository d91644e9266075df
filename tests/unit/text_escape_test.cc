// Escaping untrusted bytes (core/text_escape): valid UTF-8 kept, invalid bytes as \xNN, and for terminals the
// C0 controls, DEL and C1 controls escaped so a crafted name cannot act on the terminal.
#include "core/text_escape.h"

#include <gtest/gtest.h>

#include <string>

namespace strata {
namespace {

TEST(TextEscape, JsonSafeKeepsValidUtf8AndEscapesInvalidBytes) {
  EXPECT_EQ(JsonSafe("rank-0.json"), "rank-0.json");
  EXPECT_EQ(JsonSafe("µs \xE2\x9C\x93"), "µs \xE2\x9C\x93");  // valid multi-byte sequences
  EXPECT_EQ(JsonSafe("bad\xff"
                     "name"),
            "bad\\xffname");                               // an invalid byte
  EXPECT_EQ(JsonSafe("\xC3"), "\\xc3");                    // a truncated sequence
  EXPECT_EQ(JsonSafe("\xC0\xAF"), "\\xc0\\xaf");           // an overlong '/'
  EXPECT_EQ(JsonSafe("\xED\xA0\x80"), "\\xed\\xa0\\x80");  // a surrogate
  EXPECT_EQ(JsonSafe("tab\there"), "tab\there");           // JSON escapes controls itself
}

TEST(TextEscape, TerminalSafeEscapesControlsThatActOnATerminal) {
  // ESC [2K + CR: erase the line and repaint it with a fake verdict.
  const std::string crafted = "aten::mm\x1b[2K\rverdict: healthy\n";
  const std::string safe = TerminalSafe(crafted);
  EXPECT_EQ(safe, "aten::mm\\x1b[2K\\x0dverdict: healthy\\x0a");
  for (char c : safe) EXPECT_GE(static_cast<unsigned char>(c), 0x20u);
  EXPECT_EQ(TerminalSafe("del\x7f"), "del\\x7f");
  EXPECT_EQ(TerminalSafe("c1\xC2\x9B"
                         "31m"),
            "c1\\u009b31m");                                // CSI as a C1 control
  EXPECT_EQ(TerminalSafe("\xC2\xA0nbsp"), "\xC2\xA0nbsp");  // U+00A0 is printable
  EXPECT_EQ(TerminalSafe("bad\xff"), "bad\\xff");
}

}  // namespace
}  // namespace strata
