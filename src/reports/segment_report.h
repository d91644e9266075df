// What a `strata record` segment holds, for people and tests (`strata inspect FILE.sseg`): processes and
// their ranks, rows per table, calls per probe, GC pauses, off-CPU time by state, counter series, the
// recorder's statistics and notes, and the cross-layer metrics per rank that `strata diagnose` compares.
#pragma once

#include <nlohmann/json.hpp>

#include <string>

#include "reports/text_format.h"
#include "store/recorded_run.h"

namespace strata {

nlohmann::ordered_json SegmentToJson(const RecordedSegment& segment);
std::string SegmentToText(const RecordedSegment& segment, size_t width = kDefaultTextWidth);

}  // namespace strata
