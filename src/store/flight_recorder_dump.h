// FlightRecorderDump: one rank's PyTorch Flight Recorder dump, typed -- the ring buffer of its last collective
// and P2P operations, its process groups and their ranks, and each group's last enqueued / started / completed
// sequence numbers (docs/flight-recorder.md lists the keys and their sources). importers/flight_recorder_decoder
// fills it from the pickle or the JSON form; analysis/diagnosis/flight_recorder_findings judges a job's dumps.
// Invariants: `entries` are in the dump's order (oldest first); a field the dump did not hold keeps its
// "absent" value (-1 for sequence numbers and ids, std::nullopt, empty); a group's ranks are global ranks,
// ascending as the dump lists them; `rank` is -1 until the loader knows it.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace strata {

/// One Python frame of an entry's stack (the dump's `frames`: innermost first).
struct FrFrame {
  std::string name, filename;
  int64_t line = 0;
};

/// An entry's `state`: what the watchdog saw of its work.
enum class FrState : uint8_t { kScheduled, kStarted, kCompleted };
inline const char* FrStateName(FrState s) {
  return s == FrState::kCompleted ? "completed" : s == FrState::kStarted ? "started" : "scheduled";
}

/// One entry of the ring: one collective, one P2P operation, or the closing entry of a coalesced group.
struct FrEntry {
  int64_t record_id = -1;
  int64_t pg_id = -1;
  std::string pg_name, pg_desc;  // `process_group`: (name, description); the name keys pg_config
  int64_t collective_seq_id = -1, p2p_seq_id = -1, op_id = -1;
  std::string profiling_name;  // "nccl:all_reduce", "nccl:send 0->1", "nccl:coalesced"
  int64_t time_created_ns = 0;
  std::optional<int64_t> time_discovered_started_ns, time_discovered_completed_ns;
  std::optional<double> duration_ms;
  FrState state = FrState::kScheduled;
  std::vector<std::vector<int64_t>> input_sizes, output_sizes;
  std::vector<std::string> input_dtypes, output_dtypes;
  bool is_p2p = false;
  bool retired = false;
  std::optional<int64_t> timeout_ms;
  std::vector<FrFrame> frames;
};

/// A process group as `pg_config` describes it.
struct FrGroup {
  std::string name, desc;
  std::vector<int32_t> ranks;  // global ranks
};

/// A process group's progress as `pg_status` states it (-1: not stated).
struct FrGroupStatus {
  int64_t last_enqueued = -1, last_started = -1, last_completed = -1;
};

/// Which recorder wrote the dump: PyTorch's c10d (per-group collective and P2P counters) or torchcomms' hook
/// (one collective counter for all of the process's groups, no P2P counter: docs/flight-recorder.md).
enum class FrDialect : uint8_t { kTorch, kTorchcomms };

struct FlightRecorderDump {
  std::string path;
  int32_t rank = -1;
  std::string rank_source;  // "dump" (its own `rank` key) or "file name" (torch writes PREFIX + rank)
  std::string version;      // "2.4"
  int32_t version_major = 0, version_minor = 0;
  FrDialect dialect = FrDialect::kTorch;
  std::string comm_lib_version;
  std::map<std::string, FrGroup> pg_config;        // by group name
  std::map<std::string, FrGroupStatus> pg_status;  // by group id, as a string ("0")
  bool has_entries = false;                        // the dump held `entries` (a dump may exclude collectives)
  std::vector<FrEntry> entries;
  uint64_t unknown_keys = 0;  // keys the decoder does not know, at any level: ignored, counted
};

/// Every dump of a job, in the order loaded (the loader sorts them by rank).
struct FlightRecorderDumps {
  std::vector<FlightRecorderDump> dumps;
  bool empty() const { return dumps.empty(); }
};

}  // namespace strata
