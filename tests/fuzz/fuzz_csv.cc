// libFuzzer target for the RFC 4180 record reader (importers/csv_reader). The input is a file's content.
// Never crashes; every error names the file; and what it reads round-trips: the records written back with
// every field quoted ("" for a quote) and ',' between fields read again as the same header and records.
// Reads with a small chunk so that records, quotes and CRLFs straddle chunk boundaries.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_common.h"
#include "importers/byte_source.h"
#include "importers/csv_reader.h"

namespace {

struct Table {
  bool ok = false;
  std::string error;
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> records;
};

Table ReadTable(const std::string& path, size_t chunk) {
  Table t;
  auto src = strata::ByteSource::Open(path);
  FUZZ_CHECK(src.ok());
  strata::CsvReader csv(*src.value(), 1 << 16, chunk);
  if (strata::Status st = csv.ReadHeader({"rank", "step"}, &t.header); !st.ok()) {
    t.error = st.message();
    return t;
  }
  std::vector<std::string_view> fields;
  while (true) {
    auto more = csv.Next(&fields);
    if (!more.ok()) {
      t.error = more.error();
      return t;
    }
    if (!more.value()) break;
    FUZZ_CHECK(!fields.empty());
    t.records.emplace_back(fields.begin(), fields.end());
  }
  t.ok = true;
  return t;
}

std::string Quote(const std::vector<std::string>& fields) {
  std::string out;
  for (size_t i = 0; i < fields.size(); ++i) {
    out += i ? ",\"" : "\"";
    for (char c : fields[i]) out += c == '"' ? std::string("\"\"") : std::string(1, c);
    out += '"';
  }
  return out + "\n";
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  strata::fuzz::MemFile file(data, size);
  const Table t = ReadTable(file.path(), 16);
  if (!t.ok) {
    FUZZ_CHECK(t.error.find(file.path()) != std::string::npos);
    return 0;
  }
  // The same content read with one big chunk gives the same table.
  const Table big = ReadTable(file.path(), 1 << 20);
  FUZZ_CHECK(big.ok && big.header == t.header && big.records == t.records);
  std::string text = Quote(t.header);
  for (const auto& r : t.records) text += Quote(r);
  strata::fuzz::MemFile again(reinterpret_cast<const uint8_t*>(text.data()), text.size());
  const Table u = ReadTable(again.path(), 16);
  FUZZ_CHECK(u.ok);
  FUZZ_CHECK(u.header == t.header);
  FUZZ_CHECK(u.records == t.records);
  return 0;
}
