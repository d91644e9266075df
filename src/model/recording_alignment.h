// Puts a recording (CLOCK_MONOTONIC of the recording host) on a rank's trace clock by matching the
// collectives both saw: the recorder's probed collective calls of the rank's processes and the rank's
// collective slices in its profiler trace. The trace holds a contiguous run of the recorded calls (the
// profiler's active steps), so the shift k with the most consistent offsets wins; the offset is the
// median of (trace time − recorded time) over the matched pairs, compared on completions for blocking
// collectives (gloo) and on starts for enqueue-only calls (NCCL API).
// Invariant: an alignment is returned only when at least kAlignmentMinAgreeShare (75 %) of the matched
// offsets lie within kMaxAlignmentSpreadNs of their median and no other shift fits about as well (a
// perfectly regular loop matches itself shifted by whole steps), so a wrong or ambiguous match is refused
// rather than used. The thresholds are in model/model_thresholds.h.
// AlignRecordedRanks aligns every recorded rank of a recording at once: the diagnosis does it once and its
// result carries the offsets (DiagnosisResult::recording_offsets_ns) to whatever places recorded events.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <utility>
#include <vector>

#include "store/recorded_layers.h"

namespace strata::model {

struct RecordingAlignment {
  int64_t trace_minus_recorded_ns = 0;  // trace time = recorded time + this
  int64_t spread_ns = 0;                // median absolute deviation of the matched offsets
  size_t matched = 0;
};

// `recorded`: the rank's recorded collective calls (RecordedLayers); `trace_collectives`: its collective
// (start, end) times on its trace clock, in start order.
std::optional<RecordingAlignment> AlignRecording(const RecordedCollectiveTimes& recorded,
                                                 const std::vector<std::pair<int64_t, int64_t>>& trace_collectives);

/// Per (segment index, rank number) of `layers`: trace time − recorded time, by AlignRecording of the rank's
/// recorded calls against `trace_collectives` (per rank number, as above); a rank with no trace collectives,
/// or whose alignment is refused, is absent.
std::map<std::pair<size_t, int32_t>, int64_t> AlignRecordedRanks(
    const RecordedLayers& layers, const std::map<int32_t, std::vector<std::pair<int64_t, int64_t>>>& trace_collectives);

}  // namespace strata::model
