// libFuzzer target for the op-table CSV importer. The input is a file's content (plain or gzip).
// Never crashes; checks the store's invariants, that every data row is stored or counted (rows without quotes
// or CRs; fuzz_csv checks quoted records), and runs the
// summary analysis over the result.
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz_common.h"
#include "importers/byte_source.h"
#include "importers/op_table_importer.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  strata::fuzz::MemFile file(data, size);
  auto src = strata::ByteSource::Open(file.path());
  FUZZ_CHECK(src.ok());
  const bool gzip = size >= 2 && data[0] == 0x1f && data[1] == 0x8b;
  auto result = strata::ImportOpTable(*src.value(), strata::ImportOptions());
  if (!result.ok()) {
    FUZZ_CHECK(result.error().find(file.path()) != std::string::npos);
    return 0;
  }
  const strata::TraceStore& s = result.value();
  strata::fuzz::CheckStore(s);
  for (size_t i = 1; i < s.ranks.size(); ++i) FUZZ_CHECK(s.ranks[i - 1].rank < s.ranks[i].rank);
  for (const auto& r : s.ranks) FUZZ_CHECK(r.rank >= 0);
  for (size_t i = 0; i < s.slices.size(); ++i) FUZZ_CHECK(s.slices.flags[i] & strata::kSliceOpLayout);
  const std::string_view content(reinterpret_cast<const char*>(data), size);
  if (!gzip && content.find('"') == std::string_view::npos && content.find('\r') == std::string_view::npos) {
    // Without quotes or CRs every non-empty line after the header is one row: stored or skipped with a
    // reason (fuzz_csv checks records with quotes). A leading UTF-8 BOM is not text: the importer drops it, so
    // a BOM alone on the first line leaves it blank, and the header is the next non-empty line.
    std::string_view text(reinterpret_cast<const char*>(data), size);
    if (text.substr(0, 3) == "\xEF\xBB\xBF") text.remove_prefix(3);
    uint64_t lines = 0;
    size_t start = 0;
    while (start <= text.size()) {
      size_t nl = text.find('\n', start);
      if (nl == std::string_view::npos) nl = text.size();
      std::string_view line = text.substr(start, nl - start);
      if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
      if (!line.empty()) ++lines;
      start = nl + 1;
    }
    const uint64_t skipped = s.inputs[0].skipped.Total();
    FUZZ_CHECK(lines >= 1);
    FUZZ_CHECK(s.inputs[0].events + skipped == lines - 1);
  }
  strata::fuzz::CheckSummary(s);
  return 0;
}
