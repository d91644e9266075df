// Perfetto / chrome://tracing export: every rank of a job on one clock-aligned timeline, written as Chrome
// trace-event JSON ({"traceEvents": [...], "otherData": {...}}), which ui.perfetto.dev and chrome://tracing
// open. Layout:
//  - one process per rank (pid = rank number, "rank N" plus the host when a recording names it, sorted by
//    rank); its process_name args and process_labels give the clock offset that was applied;
//  - one thread per store track (CPU threads, GPU streams, op-table lanes), named as in the source trace;
//    slices as "X" events, instants as "I" (the spelling every viewer reads: Perfetto and chrome://tracing take
//    "i" and "I", Chrome DevTools only "I"), counters as "C", the trace's own flows (launch -> kernel) as
//    "s"/"f" pairs, each end on the thread (or GPU stream of that thread) whose slice encloses it;
//  - with recorder segments: per recorded thread an "off-CPU", a "run-queue wait", a "GC" and a "calls"
//    track, and the host counters, put on the rank's trace clock (model/recording_alignment) and then
//    aligned like the rank;
//  - the diagnosis: one process-scoped instant per finding on its rank (a global one when it names none),
//    and per blame edge (finding, late step, waiting peer) one flow arrow from the straggler's late
//    collective call to the peer's call of the same instance (ending where the straggler arrived, inside the
//    peer's call, never before the arrow's start);
//  - a stopped job (category "strata.stall", from the recording's Unix times put on each rank's aligned
//    clock like its recorder events): for a hang, on each waiting rank an instant where the stall began
//    ("waiting in all_reduce (pg0 #185) for rank 1") and a slice "stalled in all_reduce" as long as it
//    lasted, on a "stopped job" track of its own, and on each missing rank an instant where it stopped
//    ("rank 1 stopped here: blocked on a lock (futex) in Python f (x.py:7)"), where its hang finding is drawn
//    too; for a collective mismatch, an instant on each rank where it called its side, naming what it and
//    the others called.
// Invariants: aligned time = rank time - the offset `strata diagnose` reports for the rank
// (DiagnosisResult::clock_offsets_us), written in µs relative to `otherData.time_origin_ns`; only "X", "I",
// "C", "M", "s", "f" events are written (no B/E, so nesting is always balanced); every "s" has exactly one
// "f" with the same id, and both lie inside a slice of their thread; events left out are counted by reason
// in otherData.export_skipped beside the inputs' own skipped counts.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

#include "analysis/diagnosis/result.h"
#include "core/status.h"
#include "store/recorded_run.h"
#include "store/trace_store.h"

namespace strata {

struct PerfettoExportOptions {
  size_t max_blame_flows_per_finding = 4096;  // bounds the arrows of a finding at thousands of ranks
  size_t piece_bytes = size_t{1} << 20;       // text handed to the sink at once (about; one event may pass it)
};

struct PerfettoExportStats {
  size_t events = 0;       // trace events written, metadata included
  size_t blame_flows = 0;  // flow arrows drawn from blame edges
  size_t findings = 0;     // instant events drawn for findings
  size_t recorder_events = 0;
  size_t stall_events = 0;  // instants and slices of a stopped job (hang, collective mismatch)
};

/// Receives the export's text in order, in pieces of about PerfettoExportOptions::piece_bytes; an error stops
/// the export.
using PerfettoSink = std::function<Status(std::string_view)>;

/// The merged timeline of `store` (+ `recorded`) with `result` drawn on it, handed to `sink` as it is written
/// (memory stays bounded by the piece size, not the output's); the sink's first error, else Ok.
Status WritePerfettoJson(const TraceStore& store, const RecordedRun& recorded, const diagnosis::DiagnosisResult& result,
                         const PerfettoSink& sink, const PerfettoExportOptions& options = {},
                         PerfettoExportStats* stats = nullptr);

/// The same text as one string (for tests and small jobs).
std::string ExportPerfettoJson(const TraceStore& store, const RecordedRun& recorded,
                               const diagnosis::DiagnosisResult& result, const PerfettoExportOptions& options = {},
                               PerfettoExportStats* stats = nullptr);

}  // namespace strata
