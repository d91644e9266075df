// The one decoder of a recording's collective entry and return rows into RecordedCollectiveCalls
// (store/recorded_calls.h), which the model's collective progress reads instead of the rows: which probe a
// row is, which process and rank it belongs to, the bytes of gloo's algorithms, each call's return and the
// processes' exits are read here, once.
#pragma once

#include "store/recorded_calls.h"
#include "store/recorded_run.h"

namespace strata {

/// The collective calls of every ranked process of `run`. O(rows log rows).
RecordedCollectiveCalls DecodeRecordedCalls(const RecordedRun& run);

}  // namespace strata
