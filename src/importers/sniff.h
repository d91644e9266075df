// Format sniffing: decides how to read a file from its first decompressed bytes, not its name.
#pragma once

#include <string_view>

namespace strata {

enum class SniffedFormat { kChromeJson, kOpTableCsv, kUnknown };

/// Looks at the first bytes of a file's (decompressed) content.
SniffedFormat SniffFormat(std::string_view head);

const char* FormatName(SniffedFormat f);

}  // namespace strata
