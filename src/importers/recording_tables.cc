// SetRecordingTables: a recording's decoded tables in the store (see recording_tables.h).
#include "importers/recording_tables.h"

#include "importers/recorded_calls.h"
#include "importers/recorded_layers.h"
#include "importers/recorded_threads.h"

namespace strata {

void SetRecordingTables(const RecordedRun& run, TraceStore* store) {
  store->recorded_layers = DecodeRecordedLayers(run);
  store->recorded_calls = DecodeRecordedCalls(run);
  store->recorded_threads = DecodeRecordedThreads(run);
}

}  // namespace strata
