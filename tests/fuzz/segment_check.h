// What the segment fuzzers check on one segment's bytes: never a crash; a refused file is named; an accepted
// one keeps at most one problem (reading stops at the first damaged block), and indexing, cross-layer
// metrics, the stall analysis and the inspect report run over whatever was read.
#pragma once

#include <string>
#include <string_view>

#include "analysis/diagnosis/cross_layer.h"
#include "analysis/diagnosis/stall.h"
#include "fuzz_common.h"
#include "importers/recorded_calls.h"
#include "importers/recorded_layers.h"
#include "importers/recorded_threads.h"
#include "importers/segment_index.h"
#include "reports/segment_report.h"
#include "segments/segment_reader.h"
#include "store/recorded_run.h"

namespace strata::fuzz {

inline void CheckSegmentBytes(std::string_view bytes) {
  auto read = segments::ParseSegment(bytes, "fuzz.sseg");
  if (!read.ok()) {
    FUZZ_CHECK(read.error().find("fuzz.sseg") != std::string::npos);
    return;
  }
  FUZZ_CHECK(read.value().problems.size() <= 1);
  RecordedRun run;
  run.segments.push_back(IndexSegment(std::move(read).value()));
  (void)diagnosis::MeasureRankLayers(DecodeRecordedLayers(run));
  diagnosis::DiagnosisResult result;
  // collective progress, stall rule, whereabouts
  diagnosis::ApplyStallAnalysis({DecodeRecordedCalls(run), DecodeRecordedThreads(run)}, &result);
  (void)SegmentToJson(run.segments[0]).dump();
}

}  // namespace strata::fuzz
