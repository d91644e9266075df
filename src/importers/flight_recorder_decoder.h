// The PyTorch Flight Recorder dump decoder: one rank's dump file -- the pickle torch writes by default
// (read by the bounded pickle_reader, never executing anything) or its JSON form (same keys) -- into a typed
// FlightRecorderDump (store/flight_recorder_dump.h). Versions 2.x (fields that older versions lack are
// optional; a major version other than 2 is refused) and the torchcomms dialect (one collective counter for
// all of a process's groups: recognised by its numbering, see DecodeFlightRecorderValue).
// Invariants: bad input is an error (the one Status type) that starts with the file's path and says which
// key, entry or byte was wrong; keys it does not know are ignored and counted (FlightRecorderDump::unknown_keys);
// the work is bounded by the pickle reader's limits (JSON: the same input size and nesting depth).
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "core/status.h"
#include "importers/pickle_reader.h"
#include "importers/pickle_value.h"
#include "store/flight_recorder_dump.h"

namespace strata {

/// Whether a file's first bytes are a pickle of protocol 2 or more (0x80, then the protocol): how torch
/// writes the dump.
bool LooksLikeFlightRecorderPickle(std::string_view head);

/// Whether a file's first bytes are a JSON object whose first key is one a Flight Recorder dump has at its
/// top level ("version", "entries", "pg_config", "pg_status", "comm_lib_version", "nccl_comm_state", "rank"):
/// a Kineto trace begins with other keys.
bool LooksLikeFlightRecorderJson(std::string_view head);

/// The rank a dump's file name states: torch writes PREFIX + rank (TORCH_NCCL_DEBUG_INFO_TEMP_FILE, default
/// "nccl_trace_rank_"), so the decimal digits that end the base name (a ".json" or ".pkl" suffix aside).
std::optional<int> RankFromDumpFileName(std::string_view path);

/// A JSON text as the tree the pickle reader makes (objects as dicts, arrays as lists; integers that fit
/// int64 as ints, other numbers as floats), nesting bounded by limits.max_depth and size by max_input_bytes.
Expected<PickleValue> JsonAsPickleValue(std::string_view text, const PickleLimits& limits = PickleLimits());

/// A decoded dump value as a typed dump. `path` starts every error. The rank is the dump's own `rank` key
/// when it has one, else the file name's (RankFromDumpFileName), else -1. The dialect is torchcomms when the
/// dump has entries of two or more groups numbered by one counter (each entry's collective_seq_id one more
/// than the previous entry's, whatever its group): its per-group numbers are then unknown to the dump.
Expected<FlightRecorderDump> DecodeFlightRecorderValue(const PickleValue& root, const std::string& path);

/// A dump file's bytes (pickle or JSON, sniffed) as a typed dump. A pickle of objects (refused opcodes) or a
/// value that is not a dict with a version key is an error of kind kNotATrace (a directory's loader passes over
/// it); every other error is a damaged dump's.
Expected<FlightRecorderDump> DecodeFlightRecorderDump(std::string_view bytes, const std::string& path,
                                                      const PickleLimits& limits = PickleLimits());

}  // namespace strata
