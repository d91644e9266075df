// IndexSegment: a read segment file (segments/segment_tables.h: rows and JSON meta records) made the store's
// RecordedSegment (store/recorded_run.h): processes with their ranks, probes, series, thread states, stacks,
// the recorder's own records, and the rows kept as they are. The one place the recording's meta records become
// store tables, so that the store includes nothing of the file format.
// Invariants: the last record of a process wins (it is written again at exit); a process without a rank of its
// own inherits its nearest ranked ancestor's; the JSON records themselves are not kept.
#pragma once

#include "segments/segment_tables.h"
#include "store/recorded_run.h"

namespace strata {

// Indexes one segment's meta records and keeps its rows (moved out of `data`).
RecordedSegment IndexSegment(segments::SegmentData data);

}  // namespace strata
