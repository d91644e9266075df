// Format sniffing: decides how to read a file from its first decompressed bytes, not its name.
#pragma once

#include <string_view>

namespace strata {

enum class InputFormat { kChromeJson, kOpTableCsv, kUnknown };

/// Looks at the first bytes of a file's (decompressed) content.
InputFormat SniffFormat(std::string_view head);

const char* FormatName(InputFormat f);

}  // namespace strata
