// The one decoder of a recording's scheduler, GC, counter and network rows into the store's RecordedLayers
// (store/recorded_layers.h), which the cross-layer comparison, the online step summaries and the alignment
// of a recording to a trace read instead of the rows. Which process is a rank's, which thread is its main one,
// who held a CPU and which namespace is a rank's own are decided here, once.
// Invariants: one RecordedLayerSegment per segment of the run, in order; rows of processes without a rank are
// left out; counter rows whose series id the segment does not declare are left out (the recording's importer,
// importers/recording_trace, counts them once: counter_unknown_series).
#pragma once

#include "store/recorded_layers.h"
#include "store/recorded_run.h"

namespace strata {

/// The layers of every rank of every segment of `run`. O(rows log rows).
RecordedLayers DecodeRecordedLayers(const RecordedRun& run);

}  // namespace strata
