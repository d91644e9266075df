// Making bytes from inputs safe to show: trace names, paths and messages are bytes other people wrote.
//  - JsonSafe: valid UTF-8 unchanged; each byte of an invalid sequence becomes the text \xNN (JSON output
//    must be UTF-8, and a path is bytes: the escape keeps them recoverable).
//  - TerminalSafe: also escapes control characters that a terminal would act on -- C0 controls (ESC, CR,
//    LF, BS ...), DEL and the C1 controls U+0080-U+009F -- as \xNN / \u00NN, so a crafted op name cannot
//    move the cursor, repaint a line or fake a "verdict:" line of its own.
// Invariant: the result of either is valid UTF-8; TerminalSafe's contains no byte below 0x20 and no DEL.
#pragma once

#include <string>
#include <string_view>

namespace strata {

std::string JsonSafe(std::string_view bytes);
std::string TerminalSafe(std::string_view bytes);

}  // namespace strata
