// RecordedLayers: what a `strata record` recording says about each rank below the framework, decoded once
// from the segment's rows by importers/recorded_layers.h into tables analysis and the agent read (the
// cross-layer comparison, the agent's step summaries, the alignment of a recording to a trace): per rank,
// its main threads' run-queue waits with who held the CPU, its uninterruptible sleeps, its Python GC pauses,
// its processes' cumulative counters (cgroup throttling, memory-cgroup failures, major faults, system time),
// its own network namespace's interface series, and its collective calls' times.
// Times are CLOCK_MONOTONIC ns of the recording host. No row or JSON type of the segment format appears here.
// Invariants: segments[i] is decoded from the recording's segments[i] (the same order, one per segment, with
// no rank when the segment has none); each counter and link series is sorted by time; a rank's runq, dstate and
// gcs tables are in the order of the recording's rows (by end time within a thread); `training` is the
// rank's first to last collective call, else its processes' recorded life (end <= start: nothing to measure).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace strata {

/// A time span on the recording's clock (CLOCK_MONOTONIC ns).
struct RecordedSpan {
  uint64_t start = 0, end = 0;
};

/// A time-sorted series of (ns, value) samples.
using RecordedPoints = std::vector<std::pair<uint64_t, double>>;

/// A main thread runnable but waiting for a CPU over [start, end). `other_pid`: the process outside the job
/// that held the CPU (took it when the thread was preempted, else ran just before it came back), 0 when none
/// did; `idle_cpu`: nothing ran on the CPU before it came back (it waited on an idle CPU: a quota);
/// `after_uninterruptible`: the thread woke into this wait from an uninterruptible sleep (a page-in, I/O), so
/// the wait is part of what that sleep cost.
struct RunQueueWait {
  uint64_t start = 0, end = 0;
  uint32_t other_pid = 0;
  bool idle_cpu = false;
  bool after_uninterruptible = false;
};

/// The per-process cumulative counters the cross-layer comparison reads.
enum class RankCounter : uint8_t {
  kCgroupThrottledNs,  // cgroup.cpu.throttled_ns (a rank's processes share a cgroup: the largest counts)
  kMemoryCgroupFails,  // cgroup.memory.failcnt, .events.high, .events.max (the largest counts)
  kMajorFaults,        // proc.majflt (summed over the rank's processes)
  kSystemNs,           // proc.stime_ns (summed)
};

struct RankCounterSeries {
  RankCounter counter = RankCounter::kSystemNs;
  RecordedPoints points;
};

/// One series of an interface in the rank's own network namespace ("lo" excluded).
struct LinkSeries {
  enum class Kind : uint8_t { kRxBytes, kTxBytes, kCapacityBps } kind = Kind::kRxBytes;
  std::string interface;
  RecordedPoints points;
};

/// The rank's collective calls as the alignment to a trace compares them: the ends of blocking calls
/// (gloo's algorithms) and the starts of enqueue-only calls (NCCL, c10d), each in row order.
struct RecordedCollectiveTimes {
  std::vector<int64_t> blocking_ends, enqueue_starts;
};

struct RankLayers {
  RecordedSpan training;
  std::vector<RunQueueWait> runq;  // main threads' (they run the training loop and the GC)
  std::vector<RecordedSpan> dstate;
  std::vector<RecordedSpan> gcs;  // any thread's
  std::vector<RankCounterSeries> counters;
  std::vector<LinkSeries> links;  // empty unless every rank of the segment has a namespace of its own
  RecordedCollectiveTimes collectives;
};

struct RecordedLayerSegment {
  std::map<int32_t, RankLayers> ranks;
  std::map<uint32_t, std::string> process_names;  // the name of each other_pid of the runq tables
  bool own_namespaces = false;                    // every rank has a network namespace of its own
  int64_t realtime_minus_monotonic_ns = 0;        // from the segment's header: its clock on the Unix clock
  bool device_collectives = false;  // the NCCL profiler plugin timed collectives on the device (preferred)
};

struct RecordedLayers {
  std::vector<RecordedLayerSegment> segments;
  bool empty() const { return segments.empty(); }
};

/// The part of `layers` that spans from `from` on can touch: waits, sleeps and GC pauses ending at or after it,
/// counter and link samples from `margin_ns` before it (for the interpolation at a span's start). What the
/// online step summaries measure each new step on, so that a round costs about one pass over its window.
RecordedLayers LayersFrom(const RecordedLayers& layers, uint64_t from, uint64_t margin_ns);

}  // namespace strata
