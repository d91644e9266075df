// The store's decoded tables of a recording, set in one place: its layers below the framework
// (recorded_layers.h), its collective calls (recorded_calls.h) and where its ranked processes' threads were
// (recorded_threads.h). The loader and the recording-as-trace importer call it; analysis reads only these.
#pragma once

#include "store/recorded_run.h"
#include "store/trace_store.h"

namespace strata {

/// Decodes `run` into `store`'s recorded_layers, recorded_calls and recorded_threads (each empty when `run` is).
void SetRecordingTables(const RecordedRun& run, TraceStore* store);

}  // namespace strata
