// The bytes each gloo algorithm of a recording was given, in one place for the recording's importer (bytes on
// its collective slices: the communication table) and the model's collective progress (size mismatches).
// c10d calls gloo::Context::createUnboundBuffer(ptr, size) for each tensor just before the algorithm runs on the
// same thread; the recorder writes each as a `collective_buffer` entry row whose count is the size
// (docs/segment-format.md). An algorithm's bytes are those of the buffers its thread created at most
// kGlooBufferLeadNs before its entry, none inside an earlier algorithm of the thread (from its entry to its
// completion: its own scratch buffers). A thread's first algorithm in what was read gets 0 (unknown): some of
// its buffers may lie before the recording's start or a live window's, and a partial sum would be a size
// mismatch that never happened.
// Invariant: every kCollective entry row of `enters` has an entry in the result (0 when unknown); no other row.
#pragma once

#include <cstdint>
#include <map>
#include <tuple>
#include <vector>

#include "store/recorded_run.h"

namespace strata {

/// A buffer older than this before the algorithm's entry belongs to a path whose algorithm is not probed
/// (broadcast and allgather through other entry points): c10d builds the options on the worker thread just
/// before the call (microseconds). Summed into the next probed algorithm, such buffers made a false size
/// mismatch on a real job (2026-11-27: 102 MB against 1.06 GB "bytes" at a broadcast).
inline constexpr int64_t kGlooBufferLeadNs = 1'000'000;

/// A call's entry: (tid, probe id, entry ts) — also the key of its `call` row (tid, probe, start_ns).
using CallEntryKey = std::tuple<uint32_t, uint32_t, uint64_t>;

/// One process's rows: `enters` in time order, `returns` (entry key -> return ts) of the calls that returned.
std::map<CallEntryKey, uint64_t> GlooAlgorithmBytes(const RecordedSegment& seg,
                                                    const std::vector<const CallEnterRow*>& enters,
                                                    const std::map<CallEntryKey, uint64_t>& returns);

}  // namespace strata
