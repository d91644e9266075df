// Format sniffing: decides how to read a file from its first decompressed bytes, not its name.
// Invariant: a head that starts with kSqliteMagic is kSqlite, whatever follows.
#pragma once

#include <string_view>

namespace strata {

enum class SniffedFormat { kChromeJson, kOpTableCsv, kSqlite, kFlightRecorderDump, kUnknown };

/// The 16 bytes every SQLite database file starts with (its header string, NUL included). Whether an SQLite
/// file is an Nsight Systems export is told by its tables (importers/nsys_importer.h).
inline constexpr std::string_view kSqliteMagic{"SQLite format 3\0", 16};

/// Looks at the first bytes of a file's (decompressed) content: a Flight Recorder dump (a pickle, or a JSON
/// object whose first key is a dump's: importers/flight_recorder_decoder.h) before JSON traces.
SniffedFormat SniffFormat(std::string_view head);

const char* FormatName(SniffedFormat f);

}  // namespace strata
