// Format sniffing: decides how to read a file from its first decompressed bytes, not its name.
#pragma once

#include <string_view>

namespace strata {

enum class SniffedFormat { kChromeJson, kOpTableCsv, kFlightRecorderDump, kUnknown };

/// Looks at the first bytes of a file's (decompressed) content: a Flight Recorder dump (a pickle, or a JSON
/// object whose first key is a dump's: importers/flight_recorder_decoder.h) before JSON traces.
SniffedFormat SniffFormat(std::string_view head);

const char* FormatName(SniffedFormat f);

}  // namespace strata
