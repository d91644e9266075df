// The whole content of a read segment file: its rows (the store's RecordedRows, store/recorded_rows.h) and its
// JSON meta records in file order (processes, probes, series, stacks, the recorder's stats;
// docs/segment-format.md). importers/segment_index reads the meta records once into the store's RecordedSegment
// (store/recorded_run.h), which keeps the rows.
#pragma once

#include <nlohmann/json.hpp>

#include <vector>

#include "segments/segment_format.h"
#include "store/recorded_rows.h"

namespace strata::segments {

struct SegmentData : RecordedRows {
  std::vector<nlohmann::json> meta;
};

}  // namespace strata::segments
