// libFuzzer target for the recorder's segment reader (and what diagnose derives from a segment). The input
// is a file's content. Never crashes; a refused file names it; an accepted one keeps at most one problem
// (reading stops at the first damaged block), and indexing, cross-layer metrics and the inspect report
// run over whatever was read.
#include <cstdint>
#include <string>
#include <string_view>

#include "analysis/diagnosis/cross_layer.h"
#include "fuzz_common.h"
#include "reports/segment_report.h"
#include "segments/segment_reader.h"
#include "store/recorded_run.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  auto read = strata::segments::ParseSegment(bytes, "fuzz.sseg");
  if (!read.ok()) {
    FUZZ_CHECK(read.error().find("fuzz.sseg") != std::string::npos);
    return 0;
  }
  FUZZ_CHECK(read.value().problems.size() <= 1);
  strata::RecordedRun run;
  run.segments.push_back(strata::IndexSegment(std::move(read).value()));
  (void)strata::diagnosis::MeasureRankLayers(run);
  (void)strata::SegmentToJson(run.segments[0]).dump();
  return 0;
}
