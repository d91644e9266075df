// TraceStore: the columnar in-memory form of a whole job (all ranks), filled by importers and read by
// analysis passes. Tables are structs of arrays; times are int64 nanoseconds on the rank's own clock as
// recorded (alignment is the model's job); names and categories are interned StringIds.
// Invariants: every column of a table has the same length; Slice.track indexes `tracks`; Track.rank
// indexes `ranks`; RankInfo.input indexes `inputs`; a slice's args index is kNoArgs or indexes the side table named by
// its flags.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <vector>

#include "core/skip_counts.h"
#include "core/string_pool.h"
#include "store/flight_recorder_dump.h"
#include "store/recorded_calls.h"
#include "store/recorded_layers.h"
#include "store/recorded_threads.h"

namespace strata {

/// What an input was read as. kUnknown until an importer says; outputs print InputFormatName.
enum class InputFormat : uint8_t {
  kUnknown,
  kKineto,          // a Kineto trace (a JSON object with traceEvents)
  kChromeJson,      // a Chrome trace-event array with categories
  kPytorchLegacy,   // the legacy autograd profiler's event array (no categories)
  kOpTable,         // a per-op CSV table (importers/op_table_importer.h)
  kRecording,       // a `strata record` recording (importers/recording_trace.h)
  kNsysSqlite,      // an Nsight Systems export, `nsys export --type sqlite` (importers/nsys_importer.h)
  kFlightRecorder,  // a PyTorch Flight Recorder dump (importers/flight_recorder_decoder.h)
};
/// The name outputs use: "kineto", "chrome-json", "pytorch-legacy", "op-table-csv", "strata-recording",
/// "nsys-sqlite", "flight-recorder" ("" unknown).
std::string_view InputFormatName(InputFormat f);

/// One input file and what importing it produced.
struct InputInfo {
  std::string path;
  InputFormat format = InputFormat::kUnknown;
  bool recording() const { return format == InputFormat::kRecording; }
  uint64_t events = 0;  // events accepted from this file
  SkipCounts skipped;   // events dropped, by reason
  SkipCounts repaired;  // events kept after a repair (e.g. invalid UTF-8 replaced), by reason
  // Some event wrote its ts as a JSON float (or had none): HTA then rounds every event inward to whole
  // µs in double precision, and so do the HTA-compatible metrics.
  bool float_timestamps = false;
};

/// One worker (process) of the job.
struct RankInfo {
  int32_t rank = -1;                           // global rank; -1 until known
  int32_t world_size = -1;                     // -1 when not recorded
  std::string rank_source;                     // "distributedInfo", "file name", "rank map", "column", "only file"
  std::string backend;                         // e.g. "nccl", "gloo"; empty when not recorded
  std::vector<std::string> devices;            // device names from deviceProperties
  int64_t base_time_ns = 0;                    // baseTimeNanoseconds when present
  uint32_t input = 0;                          // index into TraceStore::inputs
  uint64_t events = 0;                         // events accepted for this rank
  std::map<std::string, uint64_t> categories;  // accepted events by "cat" ("(none)" when absent)
  // Layout, when the input states it (op tables); -1 otherwise.
  int32_t dp_rank = -1;
  int32_t pp_stage = -1;
  int32_t tp_rank = -1;
};

enum class TrackKind : uint8_t { kCpuThread = 0, kGpuStream = 1, kCounter = 2, kOpTable = 3 };

/// The index of a track in TraceStore::tracks, a type of its own (as StringId): no other integer (a slice row,
/// a rank index, a count) converts to it. TraceStore::track(id) looks one up.
struct TrackId {
  uint32_t value = 0;
  constexpr TrackId() = default;
  constexpr explicit TrackId(uint32_t v) : value(v) {}
  friend constexpr auto operator<=>(TrackId, TrackId) = default;
};
/// No track (a lookup that found none; the main thread of a rank with no CPU slices).
inline constexpr TrackId kNoTrack{UINT32_MAX};

/// The row of a slice in TraceStore::slices, a type of its own (as StringId and TrackId): no other integer (a
/// track, a rank index, a count, a row of another table) converts to it; a column is indexed with `.value`.
struct SliceId {
  uint32_t value = 0;
  constexpr SliceId() = default;
  constexpr explicit SliceId(uint32_t v) : value(v) {}
  friend constexpr auto operator<=>(SliceId, SliceId) = default;
};
/// Slice rows, e.g. one rank's (SlicesByRank) or one track's, in the order the pass that made them says.
using SliceRows = std::vector<SliceId>;

/// A timeline within a rank: a CPU thread, a GPU stream, a counter series or an op-table lane.
/// Kineto tracks are (pid, tid, args.stream) lanes, so every slice on a track has the track's stream.
struct Track {
  uint32_t rank = 0;  // index into TraceStore::ranks
  TrackKind kind = TrackKind::kCpuThread;
  int64_t pid = 0;
  int64_t tid = 0;
  int64_t stream = -1;  // GPU stream (args.stream); -1 for CPU
  StringId name;        // thread / counter / lane name
};

/// Bits of SliceTable::flags.
enum SliceFlags : uint8_t {
  kSliceComplete = 1 << 0,         // from a ph "X" event (has an explicit dur)
  kSliceBeginEnd = 1 << 1,         // from a matched B/E pair
  kSliceInstant = 1 << 2,          // ph "i"/"I"/"n", zero duration
  kSliceGpu = 1 << 3,              // args.stream >= 0 and args.correlation >= 0 (HTA's GPU event)
  kSliceCollectiveArgs = 1 << 4,   // args indexes collective_args
  kSliceOpLayout = 1 << 5,         // args indexes op_layout
  kSliceHasCategory = 1 << 6,      // the event had a "cat" field
  kSliceMemoryBandwidth = 1 << 7,  // args indexes memory_bandwidth_gbps (a memcpy/memset row's bandwidth)
};

inline constexpr uint32_t kNoArgs = UINT32_MAX;
inline constexpr int64_t kNoCorrelation = -1;

/// Arguments of a communication op that the analysis needs (NCCL / gloo collectives).
struct CollectiveArgs {
  StringId collective;   // "Collective name", e.g. allreduce
  StringId group;        // "Process Group Name" / description
  StringId group_ranks;  // "Process Group Ranks" as text, e.g. "[0, 1]"
  StringId dtype;
  int64_t in_nelems = -1;
  int64_t out_nelems = -1;
  int32_t group_size = -1;
  // The call's sequence number on its communicator (`group`), as NCCL numbers them (an Nsight Systems export's
  // NVTX payload seqNumber); -1 when not recorded. When every call has one, calls are matched across ranks by
  // (group, seq) instead of by order (model/collectives.h).
  int64_t seq = -1;
};

/// Position of an op-table row within the worker's schedule.
struct OpLayout {
  int32_t seq_id = -1;
  int16_t microbatch = -1;
  int16_t chunk = -1;  // model chunk (virtual pipeline)
};

/// The bytes one row costs in a table whose columns are the std::vector members listed in `Columns`, a tuple of
/// pointers to them: the sum of their value types' sizes.
template <typename Columns>
struct ColumnRowBytes;
template <typename Table, typename... Values>
struct ColumnRowBytes<std::tuple<std::vector<Values> Table::*...>> {
  static constexpr size_t value = (sizeof(Values) + ...);
};

/// Slices: intervals (and instants) on tracks. Columnar; row cost checked by static_assert below.
struct SliceTable {
  std::vector<int64_t> ts_ns;
  std::vector<int64_t> dur_ns;
  std::vector<int64_t> correlation;  // args.correlation, kNoCorrelation when absent
  std::vector<StringId> name;
  std::vector<StringId> category;
  std::vector<TrackId> track;
  std::vector<uint32_t> args;  // kNoArgs or index into collective_args / op_layout / memory_bandwidth_gbps (flags)
  std::vector<int32_t> step;   // step number once the model assigns it; -1 = none
  std::vector<uint8_t> flags;

  /// Every column above, in order. kRowBytes is summed from their types; the static_assert after the struct
  /// fails when a column is added without being listed here.
  static constexpr auto kColumns = std::make_tuple(&SliceTable::ts_ns, &SliceTable::dur_ns, &SliceTable::correlation,
                                                   &SliceTable::name, &SliceTable::category, &SliceTable::track,
                                                   &SliceTable::args, &SliceTable::step, &SliceTable::flags);
  static constexpr size_t kRowBytes = ColumnRowBytes<std::remove_const_t<decltype(kColumns)>>::value;

  size_t size() const { return ts_ns.size(); }
  void reserve(size_t n);
  void shrink_to_fit();
  size_t memory_bytes() const;
  SliceId append(int64_t ts, int64_t dur, StringId name_id, StringId cat, TrackId track_id, int64_t corr,
                 uint8_t slice_flags, uint32_t args_index = kNoArgs);
};
static_assert(sizeof(SliceTable) == std::tuple_size_v<decltype(SliceTable::kColumns)> * sizeof(std::vector<int64_t>),
              "SliceTable::kColumns must list every column (and a SliceTable holds nothing but its columns)");
static_assert(SliceTable::kRowBytes <= 48, "a slice must cost at most 48 bytes resident");

/// Flow events (ph s/t/f), e.g. ac2g launch -> kernel links, keyed by (category, id).
struct FlowTable {
  std::vector<int64_t> id;
  std::vector<int64_t> ts_ns;
  std::vector<TrackId> track;
  std::vector<StringId> category;
  std::vector<char> phase;  // 's', 't' or 'f'
  size_t size() const { return id.size(); }
};

/// Counter samples (ph C); one track per (rank, counter name).
struct CounterTable {
  std::vector<TrackId> track;
  std::vector<int64_t> ts_ns;
  std::vector<double> value;
  size_t size() const { return ts_ns.size(); }
};

/// The row tables of a store, kept apart so that an importer can reuse their capacity from file to file.
struct RowTables {
  SliceTable slices;
  FlowTable flows;
  CounterTable counters;
};

class TraceStore {
 public:
  StringPool strings;
  std::vector<InputInfo> inputs;
  std::vector<RankInfo> ranks;
  /// Each rank index's rank number (`ranks[i].rank`), in index order: the one mapping the passes that work by
  /// index hand their results through.
  std::vector<int32_t> RankNumbers() const;
  std::vector<Track> tracks;
  const Track& track(TrackId id) const { return tracks[id.value]; }
  Track& track(TrackId id) { return tracks[id.value]; }
  /// The id the next track pushed onto `tracks` gets.
  TrackId next_track() const { return TrackId(static_cast<uint32_t>(tracks.size())); }
  SliceTable slices;
  std::vector<CollectiveArgs> collective_args;
  std::vector<OpLayout> op_layout;
  /// Kineto's args["memory bandwidth (GB/s)"] of GPU rows that have it (memcpy and memset), for HTA's memory
  /// bandwidth counters (analysis/memory_bandwidth.h).
  std::vector<double> memory_bandwidth_gbps;
  FlowTable flows;
  CounterTable counters;
  /// What a recording says below the framework, decoded once by the importer that reads it
  /// (importers/recorded_layers.h): set by the loader for the whole job, empty without a recording. append and
  /// Merge leave it as it is (a recording is not split by input).
  RecordedLayers recorded_layers;
  /// A recording's collective calls and where its ranked processes' threads were (importers/recorded_calls.h,
  /// importers/recorded_threads.h), for the stall analysis: set with recorded_layers, empty without a recording.
  RecordedCollectiveCalls recorded_calls;
  RecordedThreads recorded_threads;
  /// PyTorch Flight Recorder dumps, one per rank (store/flight_recorder_dump.h); append and Merge move them
  /// over in order, each dump's `rank` kept in step with its RankInfo by the loader.
  FlightRecorderDumps flight_recorder;
  /// Whether a recording was loaded (its tables above are set; a recording with no segment counts as none).
  bool has_recording() const { return !recorded_threads.empty(); }

  /// Moves `other` into this store, remapping its string, rank, track and args ids. Rows of `other`
  /// come after this store's rows, in their original order. `other` is consumed: its memory is released
  /// and it is left moved-from (destroy or assign it; do not read it). Reserve the rows of many stores
  /// first (reserve_rows) to copy each row once.
  void append(TraceStore&& other);
  /// The stores of `parts` merged in order: the same store as appending each in turn to an empty one (the same
  /// ids, rows and order), with the rows copied column by column and part by part on `threads` threads and
  /// each part freed once copied. `parts` is consumed.
  static TraceStore Merge(std::vector<TraceStore>&& parts, unsigned threads);
  /// Room for this many slices in total, so that appending stores of that many rows reallocates nothing.
  void reserve_rows(size_t slices_total);
  /// Takes `spare`'s row tables (emptied, their capacity kept) as this store's: an import into a store with no
  /// rows yet then grows nothing until it passes the capacity a previous import left.
  void adopt_rows(RowTables&& spare);
  /// Leaves this store's rows in tables of exactly their size and hands the larger tables, emptied, to `spare`
  /// for the next import (unless they hold more than RowTables' cap, which is freed instead).
  void release_rows(RowTables* spare);
  /// Releases spare capacity of every table (called once an import is complete).
  void shrink_to_fit();
  /// Bytes held by all tables and the string pool.
  size_t memory_bytes() const;
};

}  // namespace strata

template <>
struct std::hash<strata::TrackId> {
  size_t operator()(strata::TrackId id) const noexcept { return std::hash<uint32_t>()(id.value); }
};
template <>
struct std::hash<strata::SliceId> {
  size_t operator()(strata::SliceId id) const noexcept { return std::hash<uint32_t>()(id.value); }
};
