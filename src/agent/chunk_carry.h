// ChunkCarry: the collective entries still open when the live diagnosis leaves one flight-recorder chunk for
// the next, carried into the next chunk's recording until that chunk shows their thread leave them.
// Why: each chunk is a recorder of its own (agent/flight_recorder.h) that attaches to running processes, so
// it never sees the entry of a collective a thread entered before it attached. Without the carry, a rank
// that entered a collective just before a chunk switch (a hang that began while the new recorder attached,
// a rotation, new processes of the job) reads in the new chunk as inside no collective: a waiting rank is
// named missing, or the hang is not seen at all.
// Invariants:
//  - Carried: a `call_enter` row of a recorder segment (not the NCCL plugin's, which is not per chunk) of
//    the chunk being left, as it stood in that chunk's last window, with no `call` row returning it, no later
//    `call_enter` on its thread, and its process not exited in that chunk; plus the entries carried into
//    that chunk that it did not show left. Its probe travels by name (symbol, library, kind, op): probe ids
//    are per segment. Times are CLOCK_MONOTONIC ns of the host, one clock for every chunk's recorder.
//  - Left (dropped for good, at the first round that shows it): the current chunk holds a `call_enter` of
//    the same thread at or after the entry (less kSameCallSlackNs: the new recorder's own row of the very
//    same call, taken by its own probe a few microseconds apart), or a `call` row of a collective probe of
//    that thread ending after it (a return, of it or of a later call); or no recorder segment of the current
//    chunk records its process (the process had ended when the chunk's recorder started). Nothing is judged
//    before the current chunk's recorder has said which processes it records (its first block).
//  - Added to a round's recording (never to a file, never to the tails): each carried entry not left goes
//    into the current chunk's segment that records its process, as that segment's row (its probe added to
//    the segment's probe table when missing). A live round leaves out entries of a process that exited (it
//    is not inside anything any more); a finished chunk's diagnosis (the job ended) keeps those of a process
//    that ended abnormally (exit code not 0, or a signal: the collective it died inside is the post-mortem's
//    evidence) and leaves out those of one that exited with 0 (it finished its collectives).
// Complexity: O(c · r) per round for c carried entries (at most a few per rank) and r collective rows.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "store/recorded_run.h"

namespace strata::agent {

struct CarriedEntry {
  uint32_t pid = 0, tid = 0;
  uint64_t ts_ns = 0;  // CLOCK_MONOTONIC
  uint64_t comm = 0, count = 0;
  RecordedProbe probe;
};

/// Two recorders' rows of one call are this close at most (each recorder's probe takes its own timestamp).
inline constexpr uint64_t kSameCallSlackNs = 1'000'000;

/// What to carry from `left` (the last window of the chunk being left; `carried`: what was carried into it)
/// into the next chunk: the carried entries `left` does not show left, and `left`'s own open entries.
std::vector<CarriedEntry> CarryFrom(const RecordedRun& left, const std::vector<CarriedEntry>& carried);

/// Drops from `carried` the entries `run` (the current chunk's round recording) shows left, and adds the rest
/// to `run` (see the invariants above). `finished`: `run` is the job's finished last chunk.
void CarryInto(std::vector<CarriedEntry>* carried, RecordedRun* run, bool finished = false);

}  // namespace strata::agent
