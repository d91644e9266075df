// The one table of reasons an input event is skipped (or kept after a repair), as Perfetto's stats table
// does for its importer: each reason has a stable key (what outputs print and tests match), a severity,
// a scope (what one count stands for) and a sentence saying what happened. Importers count reasons by
// SkipId in a SkipCounts (core/skip_counts.h), never by a free string, and every output renders the
// severity, scope and description from here.
// Invariants: kSkipReasons[i].id == SkipId(i) for every i and the table covers every SkipId (checked at
// compile time); keys are unique, lower snake case, and never change meaning once released. A reason with
// has_detail is written "<key>_<detail>" (e.g. unsupported_phase_P).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace strata {

/// How much a skipped event matters, as Perfetto's stat severities: kInfo is expected and harmless (an
/// event strata does not use), kDataLoss means the input lost events before strata read it (a profiler
/// stopped mid-slice), kError means the input is malformed (an event strata could not read).
enum class SkipSeverity : uint8_t { kInfo, kDataLoss, kError };

/// What one count of a reason stands for, as Perfetto's stat sources: kEvent is one event or row of an input
/// (a trace event, a table row, a recorded row: the counts a share of the input's events is taken from),
/// kInputMember is a part of an input file as a whole (counted once per file), kExportItem is an item the
/// Perfetto export did not draw (counted by the export, never by an importer).
enum class SkipScope : uint8_t { kEvent, kInputMember, kExportItem };

/// "event", "input_member" or "export_item": the scope as outputs write it.
std::string_view ScopeName(SkipScope s);

/// "info", "data_loss" or "error": the severity as outputs write it.
std::string_view SeverityName(SkipSeverity s);

/// Every reason, in table order. Add a reason here and in kSkipReasons at the same place.
enum class SkipId : uint16_t {
  // Kineto / Chrome JSON traces
  kInvalidJson,
  kNotAnObject,
  kMissingPhase,
  kInvalidPidOrTid,
  kMissingTimestamp,
  kMissingDuration,
  kFlowWithoutId,
  kUnsupportedPhase,
  kEndWithoutBegin,
  kBeginWithoutEnd,
  kTimestampOutOfRange,
  kDurationOutOfRange,
  // Kineto and op tables
  kInvalidTimestamp,
  kInvalidDuration,
  kNegativeDuration,
  kAbsurdDuration,
  // op tables (CSV)
  kWrongColumnCount,
  kInvalidRank,
  kInvalidStep,
  kIntegerOutOfRange,
  kDuplicateRow,
  // recorder segments
  kCallUnknownProbe,
  kCallEndBeforeStart,
  kCounterUnknownSeries,
  kRingBufferFull,
  // Nsight Systems exports (SQLite)
  kNsysProcessWithoutGpu,
  kNvtxRangeWithoutEnd,
  kNvtxNotARange,
  kUnknownStringId,
  kNsysSchemaUntested,
  // repairs: the event was kept (InputInfo::repaired)
  kInvalidUtf8Replaced,
  kUnreadableMember,
  // the Perfetto export: items not drawn (otherData.export_skipped)
  kExportFlowUnpaired,
  kExportFlowEndOutsideSlice,
  kExportBlameStepUnshared,
  kExportBlameEdgeCapped,
  kExportBlameNoWait,
  kExportRecorderUnplaced,
  kCount
};

/// One row of the table.
struct SkipReason {
  SkipId id;
  std::string_view key;  // as written in outputs (with "_<detail>" appended when has_detail)
  SkipSeverity severity;
  SkipScope scope;
  bool has_detail;  // the key carries a parameter: a phase letter, a member name
  std::string_view description;
};

inline constexpr std::array<SkipReason, static_cast<size_t>(SkipId::kCount)> kSkipReasons = {{
    {SkipId::kInvalidJson, "invalid_json", SkipSeverity::kError, SkipScope::kEvent, false,
     "an event that is not valid JSON (truncated or corrupted file)"},
    {SkipId::kNotAnObject, "not_an_object", SkipSeverity::kError, SkipScope::kEvent, false,
     "a traceEvents entry that is not a JSON object"},
    {SkipId::kMissingPhase, "missing_phase", SkipSeverity::kError, SkipScope::kEvent, false,
     "an event without \"ph\" (its phase)"},
    {SkipId::kInvalidPidOrTid, "invalid_pid_or_tid", SkipSeverity::kError, SkipScope::kEvent, false,
     "an event whose pid or tid is neither an integer nor a string"},
    {SkipId::kMissingTimestamp, "missing_timestamp", SkipSeverity::kError, SkipScope::kEvent, false,
     "an event without \"ts\""},
    {SkipId::kMissingDuration, "missing_duration", SkipSeverity::kError, SkipScope::kEvent, false,
     "a complete (X) event without \"dur\""},
    {SkipId::kFlowWithoutId, "flow_without_id", SkipSeverity::kError, SkipScope::kEvent, false,
     "a flow event (s, t, f) without a usable \"id\""},
    {SkipId::kUnsupportedPhase, "unsupported_phase", SkipSeverity::kInfo, SkipScope::kEvent, true,
     "an event of a phase strata does not use (the key ends with the phase letter, or \"other\")"},
    {SkipId::kEndWithoutBegin, "end_without_begin", SkipSeverity::kDataLoss, SkipScope::kEvent, false,
     "an E event with no open B event on its lane (the trace began inside the slice)"},
    {SkipId::kBeginWithoutEnd, "begin_without_end", SkipSeverity::kDataLoss, SkipScope::kEvent, false,
     "a B event never closed by an E event on its lane (the trace ended inside the slice)"},
    {SkipId::kTimestampOutOfRange, "timestamp_out_of_range", SkipSeverity::kError, SkipScope::kEvent, false,
     "a timestamp, or a slice's end, beyond the range of 64-bit nanoseconds"},
    {SkipId::kDurationOutOfRange, "duration_out_of_range", SkipSeverity::kError, SkipScope::kEvent, false,
     "a duration (or a B/E pair's span) beyond the range of 64-bit nanoseconds"},
    {SkipId::kInvalidTimestamp, "invalid_timestamp", SkipSeverity::kError, SkipScope::kEvent, false,
     "a start time that is not a number"},
    {SkipId::kInvalidDuration, "invalid_duration", SkipSeverity::kError, SkipScope::kEvent, false,
     "a duration that is not a number"},
    {SkipId::kNegativeDuration, "negative_duration", SkipSeverity::kError, SkipScope::kEvent, false,
     "a slice whose duration is negative"},
    {SkipId::kAbsurdDuration, "absurd_duration", SkipSeverity::kError, SkipScope::kEvent, false,
     "a slice longer than a week: no real operation takes that long"},
    {SkipId::kWrongColumnCount, "wrong_column_count", SkipSeverity::kError, SkipScope::kEvent, false,
     "a row with more or fewer fields than the header"},
    {SkipId::kInvalidRank, "invalid_rank", SkipSeverity::kError, SkipScope::kEvent, false,
     "a row whose rank is not a non-negative 32-bit integer"},
    {SkipId::kInvalidStep, "invalid_step", SkipSeverity::kError, SkipScope::kEvent, false,
     "a row whose step is not a 32-bit integer"},
    {SkipId::kIntegerOutOfRange, "integer_out_of_range", SkipSeverity::kError, SkipScope::kEvent, false,
     "a row whose start, duration or end is beyond the range of 64-bit nanoseconds"},
    {SkipId::kDuplicateRow, "duplicate_row", SkipSeverity::kInfo, SkipScope::kEvent, false,
     "a row repeating an earlier row exactly (table written twice): kept once"},
    {SkipId::kCallUnknownProbe, "call_unknown_probe", SkipSeverity::kError, SkipScope::kEvent, false,
     "a recorded call whose probe id is not in the segment's probe list"},
    {SkipId::kCallEndBeforeStart, "call_end_before_start", SkipSeverity::kError, SkipScope::kEvent, false,
     "a recorded call that ends before it starts"},
    {SkipId::kCounterUnknownSeries, "counter_unknown_series", SkipSeverity::kError, SkipScope::kEvent, false,
     "a recorded counter sample whose series id is not in the segment's series list"},
    {SkipId::kRingBufferFull, "ring_buffer_full", SkipSeverity::kDataLoss, SkipScope::kEvent, false,
     "recorder events the kernel dropped because the ring buffer to strata record was full: lost"},
    {SkipId::kNsysProcessWithoutGpu, "nsys_process_without_gpu", SkipSeverity::kInfo, SkipScope::kEvent, false,
     "Nsight Systems: a CPU-side row (CUDA API call, NVTX range) of a process with no GPU work in the export "
     "(a launcher, a shell, a data loader worker): it belongs to no rank"},
    {SkipId::kNvtxRangeWithoutEnd, "nvtx_range_without_end", SkipSeverity::kDataLoss, SkipScope::kEvent, false,
     "Nsight Systems: an NVTX range with no end (the capture stopped inside it)"},
    {SkipId::kNvtxNotARange, "nvtx_not_a_range", SkipSeverity::kInfo, SkipScope::kEvent, false,
     "Nsight Systems: an NVTX row that is no range (a mark, a domain, category or thread name)"},
    {SkipId::kUnknownStringId, "unknown_string_id", SkipSeverity::kError, SkipScope::kEvent, false,
     "Nsight Systems: a row whose name refers to no string of the StringIds table"},
    {SkipId::kNsysSchemaUntested, "nsys_schema_untested", SkipSeverity::kInfo, SkipScope::kInputMember, true,
     "Nsight Systems: an export whose schema version strata was not tested on (tested: 3.x; the key ends with "
     "the version, or \"unknown\"): its tables were read as 3.x writes them"},
    {SkipId::kInvalidUtf8Replaced, "invalid_utf8_replaced", SkipSeverity::kInfo, SkipScope::kEvent, false,
     "an event with invalid UTF-8, kept with the bad bytes replaced"},
    {SkipId::kUnreadableMember, "unreadable", SkipSeverity::kError, SkipScope::kInputMember, true,
     "a top-level member (distributedInfo, deviceProperties, baseTimeNanoseconds) that is not valid JSON: "
     "ignored, the events kept (the key ends with the member's name)"},
    {SkipId::kExportFlowUnpaired, "trace_flow_without_other_end", SkipSeverity::kDataLoss, SkipScope::kExportItem,
     false, "export: a trace flow whose start or end event is missing: not drawn"},
    {SkipId::kExportFlowEndOutsideSlice, "trace_flow_end_outside_slice", SkipSeverity::kDataLoss,
     SkipScope::kExportItem, false,
     "export: a trace flow whose start or end lies inside no slice of its thread or stream (viewers bind a "
     "flow end to the enclosing slice): not drawn"},
    {SkipId::kExportBlameStepUnshared, "blame_step_without_shared_collective", SkipSeverity::kInfo,
     SkipScope::kExportItem, false,
     "export: a step of a finding with no collective shared with its peers: no blame arrow drawn"},
    {SkipId::kExportBlameEdgeCapped, "blame_edge_beyond_max_blame_flows_per_finding", SkipSeverity::kInfo,
     SkipScope::kExportItem, false, "export: a blame arrow beyond the per-finding bound: not drawn"},
    {SkipId::kExportBlameNoWait, "blame_peer_call_ended_before_arrival", SkipSeverity::kInfo, SkipScope::kExportItem,
     false,
     "export: a peer's call of the late instance ended before the straggler arrived (it did not wait there): "
     "no blame arrow drawn, as it would end before it starts"},
    {SkipId::kExportRecorderUnplaced, "recorder_unplaced", SkipSeverity::kInfo, SkipScope::kExportItem, true,
     "export: a recorded event of a process of no rank, or whose recording is not aligned to the traces: "
     "not drawn (the key ends with the kind of event)"},
}};

namespace skip_reasons_detail {
constexpr bool TableInOrder() {
  for (size_t i = 0; i < kSkipReasons.size(); ++i)
    if (static_cast<size_t>(kSkipReasons[i].id) != i || kSkipReasons[i].key.empty() ||
        kSkipReasons[i].description.empty())
      return false;
  return true;
}
}  // namespace skip_reasons_detail
static_assert(skip_reasons_detail::TableInOrder(), "kSkipReasons must list every SkipId in enum order");

/// The table row of `id`.
constexpr const SkipReason& Reason(SkipId id) { return kSkipReasons[static_cast<size_t>(id)]; }

/// The key an output writes for `id` (with "_<detail>" when the reason carries one).
std::string SkipKey(SkipId id, std::string_view detail = {});

}  // namespace strata
