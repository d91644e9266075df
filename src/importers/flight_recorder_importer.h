// ImportFlightRecorder: one PyTorch Flight Recorder dump file (pickle or JSON, plain or gzip) into a store of
// its own, for the job loader: one input (format flight-recorder, its events the dump's entries) and the typed
// dump (importers/flight_recorder_decoder.h). The store holds no rank: the loader numbers dumps apart from
// traces (the dump's own `rank` key, its file name, --rank-map).
// Invariants: the file is read whole, at most PickleLimits::max_input_bytes of content (past it, an error
// naming the file); every error names the file.
#pragma once

#include "core/status.h"
#include "importers/byte_source.h"
#include "importers/pickle_reader.h"
#include "store/trace_store.h"

namespace strata {

/// Whether a file's first (decompressed) bytes are a Flight Recorder dump: a pickle (0x80, protocol 2 to 5) or
/// a JSON object whose first key is a dump's (flight_recorder_decoder.h).
bool LooksLikeFlightRecorderDump(std::string_view head);

Expected<TraceStore> ImportFlightRecorder(ByteSource& source, const PickleLimits& limits = PickleLimits());

}  // namespace strata
