// The whole content of a read segment file: its rows (segment_rows.h) and its JSON meta records in file order
// (processes, probes, series, stacks, the recorder's stats; docs/segment-format.md). The recording's index
// (store/recorded_run.h) reads the meta records once and keeps the rows.
#pragma once

#include <nlohmann/json.hpp>

#include <vector>

#include "segments/segment_rows.h"

namespace strata::segments {

struct SegmentData : SegmentRows {
  std::vector<nlohmann::json> meta;
};

}  // namespace strata::segments
