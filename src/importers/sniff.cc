// Format sniffing rules: SQLite starts with its 16-byte header string; a Flight Recorder dump is a pickle (0x80,
// protocol 2 to 5) or a JSON object whose first key is a dump's; other JSON starts with '{' or '['; an op table
// starts with a header line of identifiers separated by ',', ';' or tabs (after an optional UTF-8 byte-order mark).
#include "importers/sniff.h"

#include <cctype>

#include "importers/flight_recorder_decoder.h"

namespace strata {

SniffedFormat SniffFormat(std::string_view head) {
  if (head.starts_with(kSqliteMagic)) return SniffedFormat::kSqlite;
  if (LooksLikeFlightRecorderPickle(head) || LooksLikeFlightRecorderJson(head))
    return SniffedFormat::kFlightRecorderDump;
  if (head.substr(0, 3) == "\xEF\xBB\xBF") head.remove_prefix(3);
  size_t i = 0;
  while (i < head.size() && std::isspace(static_cast<unsigned char>(head[i]))) ++i;
  if (i == head.size()) return SniffedFormat::kUnknown;
  if (head[i] == '{' || head[i] == '[') return SniffedFormat::kChromeJson;
  // CSV header: identifiers separated by ',', ';' or tabs on the first line, at least two columns.
  const size_t eol = head.find('\n', i);
  const std::string_view line = head.substr(i, eol == std::string_view::npos ? std::string_view::npos : eol - i);
  int separators = 0;
  for (char c : line) {
    if (c == ',' || c == ';' || c == '\t') {
      ++separators;
    } else if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == ' ' || c == '"' ||
                 c == '.' || c == '\r' || c == '/' || c == '(' || c == ')')) {
      return SniffedFormat::kUnknown;
    }
  }
  return separators >= 1 ? SniffedFormat::kOpTableCsv : SniffedFormat::kUnknown;
}

const char* FormatName(SniffedFormat f) {
  switch (f) {
    case SniffedFormat::kChromeJson:
      return "chrome-json";
    case SniffedFormat::kOpTableCsv:
      return "op-table-csv";
    case SniffedFormat::kSqlite:
      return "sqlite";
    case SniffedFormat::kFlightRecorderDump:
      return "flight-recorder";
    case SniffedFormat::kUnknown:
      break;
  }
  return "unknown";
}

}  // namespace strata
