// libFuzzer target for the Kineto / Chrome-trace importer. The input is a file's content (plain or gzip).
// Never crashes; checks the store's invariants, runs the summary analysis over it, and checks that tiny
// batches parsed on a second thread (ImportOptions::pipeline) give exactly the same result as the default.
#include <cstdint>
#include <string>

#include "fuzz_common.h"
#include "importers/byte_source.h"
#include "importers/kineto_importer.h"

namespace {

using strata::Expected;
using strata::TraceStore;

Expected<TraceStore> Import(const std::string& path, size_t batch_bytes, bool pipeline) {
  auto src = strata::ByteSource::Open(path);
  FUZZ_CHECK(src.ok());  // a memfd always opens
  strata::ImportOptions options;
  options.batch_bytes = batch_bytes;
  options.pipeline = pipeline;
  return strata::ImportKineto(*src.value(), options);
}

void CheckSame(const TraceStore& a, const TraceStore& b) {
  FUZZ_CHECK(a.slices.size() == b.slices.size());
  FUZZ_CHECK(a.slices.ts_ns == b.slices.ts_ns);
  FUZZ_CHECK(a.slices.dur_ns == b.slices.dur_ns);
  FUZZ_CHECK(a.slices.track == b.slices.track);
  FUZZ_CHECK(a.slices.flags == b.slices.flags);
  for (size_t i = 0; i < a.slices.size(); ++i) {
    FUZZ_CHECK(a.strings.view(a.slices.name[i]) == b.strings.view(b.slices.name[i]));
  }
  FUZZ_CHECK(a.tracks.size() == b.tracks.size());
  FUZZ_CHECK(a.flows.size() == b.flows.size());
  FUZZ_CHECK(a.counters.size() == b.counters.size());
  FUZZ_CHECK(a.inputs[0].events == b.inputs[0].events);
  FUZZ_CHECK(a.inputs[0].skipped == b.inputs[0].skipped);
  FUZZ_CHECK(a.inputs[0].repaired == b.inputs[0].repaired);
  FUZZ_CHECK(a.ranks[0].rank == b.ranks[0].rank);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  strata::fuzz::MemFile file(data, size);
  auto big = Import(file.path(), strata::ImportOptions().batch_bytes, /*pipeline=*/false);
  auto tiny = Import(file.path(), 64, /*pipeline=*/true);  // tiny batches through the two-thread pipeline
  FUZZ_CHECK(big.ok() == tiny.ok());
  if (!big.ok()) {
    // Errors name the file, and do not depend on how events were batched.
    FUZZ_CHECK(big.error().find(file.path()) != std::string::npos);
    FUZZ_CHECK(big.error() == tiny.error());
    return 0;
  }
  const TraceStore& s = big.value();
  strata::fuzz::CheckStore(s);
  strata::fuzz::CheckStore(tiny.value());
  FUZZ_CHECK(s.ranks.size() == 1);
  CheckSame(s, tiny.value());
  strata::fuzz::CheckSummary(s);
  return 0;
}
