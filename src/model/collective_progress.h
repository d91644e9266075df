// CollectiveProgress: where each rank of a recorded job stands in its sequence of collectives, per
// communicator (DESIGN.md "Stalls"): which collectives it called, which it is inside, which completed, with
// op, element count (where the probe reads it: the NCCL API), buffer bytes (gloo) and times. Built from the
// recording's collective calls as importers/recorded_calls decodes them (store/recorded_calls.h: each call's
// probe, entry and return, the processes' exits); no row of the recording is read here.
// Sources, per rank process, best first:
//  - the NCCL profiler plugin (probe kinds collective_device_enqueue / _start / _done): communicator =
//    NCCL's commHash (equal on every rank), the k-th enqueue, start and done of a communicator are its
//    collective k; a call is inside from its enqueue until its kernel is done;
//  - c10d's process-group methods (collective_enqueue, symbol c10d::...): communicator = the process group
//    object, named "pg<N>" by the order the process first used it (equal on every rank when the job uses
//    its groups in the same order, as c10d requires of group creation); each call is paired with the
//    blocking gloo algorithm of the same op that ran it (collective): inside from the c10d call until the
//    algorithm returned. Without gloo algorithms (NCCL via c10d) a call's return is its launch, so
//    `tracks_completion` is false: only entries say where the rank is;
//  - gloo algorithms alone, or the NCCL API alone: one communicator "pg0".
// Sequence numbers count a communicator's collectives from 0, point-to-point (send/recv) apart, as c10d
// counts them. When the recorder did not start the job (it attached, or a flight-recorder chunk began
// mid-run), each rank's numbers are aligned to the lowest rank's per communicator by the shift that lines
// their completions up best (no op disagreements, the smallest median completion difference); the numbers
// are `numbers_certain` when each shift was certain (paired enough calls and no other shift came close,
// model_thresholds.h), so ops at one number can be compared across ranks (a mismatch).
// Times are Unix nanoseconds (each segment's monotonic clock put on the wall clock by its header).
// Complexity O(n log n) for n recorded collective rows.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "store/recorded_calls.h"

namespace strata::model {

enum class CallState {
  kEnqueued,  // called, but its algorithm / kernel has not started (queued behind another, or NCCL waits)
  kInside,    // its algorithm runs (gloo) or its kernel started (NCCL): waiting for the peers or moving data
  kDone,
};

struct RankCollective {
  std::string comm;  // the communicator's key, equal on every rank
  int64_t seq = 0;   // per (communicator, p2p)
  bool p2p = false;
  std::string op;
  uint64_t count = 0;  // elements; 0 when the probe cannot read it
  uint64_t bytes = 0;  // bytes of the buffers gloo's algorithm was given (createUnboundBuffer); 0 when unread
  CallState state = CallState::kEnqueued;
  int64_t enter_unix_ns = 0;  // when the rank called it
  int64_t start_unix_ns = 0;  // when its algorithm or kernel started (0: not started)
  int64_t done_unix_ns = 0;   // when it completed (0: not done)
};

struct RankProgress {
  int32_t rank = -1;
  uint32_t pid = 0;
  size_t segment = 0;                 // index of its segment in the recording
  std::vector<RankCollective> calls;  // in call order
  bool tracks_completion = false;     // the recording sees its collectives complete (see above)
  bool device = false;                // from the NCCL plugin: kEnqueued means its kernel has not started
  std::optional<int64_t> exited_unix_ns;
  std::optional<int> exit_code, exit_signal;
  int64_t horizon_unix_ns = 0;  // the last instant the recording speaks for the rank: its exit or the end
};

/// A collective's identity across ranks: its communicator, whether it is point-to-point, its number there.
struct CollectiveKey {
  std::string comm;
  bool p2p = false;
  int64_t seq = 0;
  auto operator<=>(const CollectiveKey&) const = default;
};
inline CollectiveKey KeyOf(const RankCollective& c) { return {c.comm, c.p2p, c.seq}; }

/// The calls the ranks made at one number, and whether they were one collective.
struct CallsAtNumber {
  CollectiveKey key;
  std::vector<std::pair<int32_t, const RankCollective*>> calls;  // (rank, its call at `key`), ranks ascending
  // They all completed further apart than the ranks' skew and half the gap to a neighbouring number's
  // completion on any of their ranks: not one collective, though the recording numbered them alike (a call
  // lost from one rank's record shifts its later numbers), so their differing ops or sizes are no mismatch
  // (held-out seed 19441: a CPU-contention job named collective_mismatch). Judged only from completions the
  // recording sees (tracks_completion): a call of the NCCL API alone returns at its launch, which says nothing
  // of when it completed (launches on three ranks came a gap apart under the sanitizer and hid a real count
  // mismatch, ctest recorder_hangs nccl_api_mismatch). Without a neighbour to measure the gap against,
  // nothing is judged apart.
  bool completed_apart = false;
};

struct CollectiveProgress {
  std::map<int32_t, RankProgress> ranks;  // ranks with at least one collective call recorded
  std::set<int32_t> ranks_seen;           // ranks with a process in the recording (calls or not)
  std::optional<int32_t> world_size;      // from the processes' WORLD_SIZE or the plugin's communicator
  int64_t end_unix_ns = 0;                // the recording's end (or `now` live)
  bool aligned_by_time = false;           // sequence numbers were moved to align them by completion times
  bool numbers_certain = true;            // the numbers are exact or every alignment shift was certain
};

/// Builds the progress of every rank. `now_unix_ns`: the present instant of a live (unfinished) recording,
/// else the recording's end is taken from the recorder's own end record (or its last row).
CollectiveProgress BuildCollectiveProgress(const RecordedCollectiveCalls& recorded,
                                           std::optional<int64_t> now_unix_ns = std::nullopt);

/// Every number's calls across the ranks of `p`, in key order; the pointers are into `p`. O(n log n) for n calls.
std::vector<CallsAtNumber> CallsByNumber(const CollectiveProgress& p);

/// "kEnqueued" -> "enqueued", "inside", "done".
const char* CallStateName(CallState s);

}  // namespace strata::model
