// libFuzzer target for the recorder's segment reader (and what diagnose derives from a segment). The input
// is a file's content. Never crashes; a refused file names it; an accepted one keeps at most one problem
// (reading stops at the first damaged block), and indexing, cross-layer metrics and the inspect report
// run over whatever was read.
#include <cstdint>
#include <string>
#include <string_view>

#include "segment_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  strata::fuzz::CheckSegmentBytes(std::string_view(reinterpret_cast<const char*>(data), size));
  return 0;
}
