// libFuzzer target for the Nsight Systems SQLite importer (importers/nsys_importer): the input is an export's
// bytes (the seed: ../shared/datasets/nsys/mock.sqlite with its unread tables dropped and 512-byte pages).
// libsqlite3 parses the file; strata's part is what it does with what SQLite returns from a damaged file:
// tables and columns missing or of another type, ids that name nothing, times out of order. Never crashes,
// hangs or leaks; every error names the file; a store that loads keeps the invariants every importer's store
// holds (fuzz_common.h) and every rank it has is a (process, GPU) of the file, numbered from 0.
#include <cstdint>
#include <string>

#include "fuzz_common.h"
#include "importers/nsys_importer.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  strata::fuzz::MemFile file(data, size);
  auto result = strata::ImportNsysSqlite(file.path(), strata::ImportOptions());
  if (!result.ok()) {
    FUZZ_CHECK(result.error().find(file.path()) != std::string::npos);
    return 0;
  }
  const strata::TraceStore& s = result.value();
  strata::fuzz::CheckStore(s);
  for (size_t i = 0; i < s.ranks.size(); ++i) FUZZ_CHECK(s.ranks[i].rank >= 0);
  return 0;
}
