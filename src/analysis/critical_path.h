// Critical path of one step across ranks (issue 26, item 3; docs/critical-path.md): the chain of CPU ops,
// launches, GPU kernels, collectives and waits, over all ranks, whose length is the step's length (last
// aligned end − first aligned start over ranks, as in the phase model). HTA's critical path is per rank;
// this one follows collectives to the rank that arrived last.
//
// Walk, backwards from the step's end on the rank whose aligned step window ends last, in one of two lanes:
//  - CPU lane (the training loop's thread, its time split by the innermost op covering it; annotations and
//    python_function wrappers are not ops): the interval covering t is a "cpu" segment back to its start
//    ("launch" for a kernel-launch call); a matched CPU-side collective covering t is handled as below, as is
//    one on another thread when no op of the loop covers t; a synchronize call covering t while a kernel of the rank
//    runs moves to the GPU lane (the host waits for the device), and its part after the last kernel is
//    "wait"; time covered by nothing is "idle" back to the previous op's end.
//  - GPU lane: the kernel covering t (on the stream being followed; on entry, the kernel that ends last) is
//    a "kernel" segment back to its start. What let it start: the previous kernel of its stream ending, its
//    CPU launch (same correlation) ending, or a kernel of another stream of the rank ending (the last to end
//    there at or before its start) when one of the two is a collective kernel (a stream waiting on another's
//    event: the compute after the collective whose result it uses, the collective after the compute it
//    sends), whichever came last. Another stream last: the gap after that kernel is "idle" and the walk
//    follows that stream from its end. Launch last: [launch end, kernel start] is "launch" and the walk
//    continues in the CPU lane at the launch's end; else the gap after the previous kernel is "idle" and the
//    walk stays on the stream.
//  - Collective (a matched instance, kernel or CPU op): arrival = the call's aligned start on each member.
//    From max(last arrival, own start) to t the segment is "collective" (the transfer). When another member
//    arrived last, the time this rank waited is not on the path: the walk jumps to the last-arriving rank at
//    its arrival and continues into what delayed it (its launch or previous kernel, or its CPU lane). An
//    incomplete instance (a member missing) keeps the walk on its rank: its wait is a "wait" segment.
// Segments are clipped to the step's span and emitted back to back, so they tile [start_ns, end_ns] exactly.
// They are then merged (MergePathSegments): touching segments of the same rank, kind and name become one, and so
// does each run of tiny segments (below kPathMinSegmentShare of the step) of the same rank and kind, named by the
// name holding most of the run's time; then each run of tiny host segments (cpu, launch, idle) of one rank,
// of whatever kinds, with its time by kind in its parts. A rank's time by kind is unchanged.
// Cost: one pass over each rank's rows to keep the step's slices (those starting within one step length
// before the step and before its end), then O(n log n) in the n slices kept (sorting, and one binary search
// per walk move and stream); the walk makes O(n) moves (each emits a segment that ends at an earlier event
// boundary, or changes lane, stream or rank once at the same instant; a cap ends it with "idle" otherwise).
// Invariants: segments are in time order, adjacent (each starts where the previous ended), of positive
// duration, and sum to end_ns − start_ns; no two adjacent segments have the same rank, kind and name, no two
// adjacent tiny segments the same rank and kind, and no two adjacent tiny host segments the same rank; a
// segment's parts, when it has them, sum to its duration.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/job_model.h"
#include "store/trace_store.h"

namespace strata {

/// What the path is doing during a segment.
enum class PathKind : uint8_t { kCpu, kLaunch, kKernel, kCollective, kWait, kIdle };
/// "cpu", "launch", "kernel", "collective", "wait", "idle": the JSON contract's names.
std::string_view PathKindName(PathKind kind);

/// One kind's time inside a merged run of tiny host segments of several kinds, and the name holding most of it.
struct PathPart {
  PathKind kind = PathKind::kIdle;
  std::string name;
  int64_t dur_ns = 0;
};

struct PathSegment {
  int32_t rank = -1;  // rank number (RankInfo::rank)
  PathKind kind = PathKind::kIdle;
  std::string name;      // op, kernel or collective name; the op before the gap for "idle" ("" when none)
  int64_t start_ns = 0;  // aligned clock
  int64_t dur_ns = 0;
  // A merged run of tiny cpu, launch and idle segments: each kind's time, in PathKind order, summing to dur_ns
  // (`kind` and `name` are the largest part's). Empty for a segment of one kind.
  std::vector<PathPart> parts;
};

/// Two path segments touch when the end of one is the start of the next within this (1 µs).
inline constexpr int64_t kPathTouchNs = 1000;
/// A path segment shorter than this share of its step (0.1 %) is tiny: a run of touching tiny segments of one
/// rank and kind merges into one segment (a pixel of a 1,000-pixel drawing; the time by rank and kind is kept). On
/// a step of hta/trace_filter: 1,606 segments become 860, and 56 once tiny host runs of mixed kinds merge too.
inline constexpr double kPathMinSegmentShare = 0.001;

/// One rank's window of the step, aligned.
struct RankWindow {
  int32_t rank = -1;
  int64_t start_ns = 0, end_ns = 0;
};

/// One (rank, kind) share of a path, for the text summary.
struct PathContributor {
  int32_t rank = -1;
  PathKind kind = PathKind::kIdle;
  std::string top_name;  // the name holding most of its time
  int64_t dur_ns = 0;
  double share = 0;  // of the step
};

struct CriticalPath {
  int64_t step = -1;
  int64_t start_ns = 0, end_ns = 0;   // the step's aligned span over ranks
  std::vector<RankWindow> windows;    // per rank index
  std::vector<PathSegment> segments;  // time order, tiling [start_ns, end_ns], merged
  size_t rank_changes = 0;            // jumps to a later-arriving rank at collectives
  size_t slices_considered = 0;       // slices of the step the walk read
  // Its time by (rank, kind), largest first, from the segments before they were merged: each one's main name
  // is exact (a merged run is named by its main name only). Empty on a path built otherwise.
  std::vector<PathContributor> contributors;
};

/// The step the reports show: the step (among those every rank has) whose span is the median one, a step that
/// was run (Median's EvenCount::kUpperMiddle over the spans ordered longest first): of an even count the
/// shorter of the two middle spans; ties: the earlier step. nullopt when there is none.
std::optional<int64_t> MedianStep(const model::JobModel& job, size_t ranks);

/// The critical path of `step` (see the file comment), or nullopt when some rank lacks the step.
std::optional<CriticalPath> ComputeCriticalPath(const TraceStore& store, const std::vector<SliceRows>& rows_by_rank,
                                                const model::JobModel& job, int64_t step);

/// `segments` (time order) merged: touching segments (kPathTouchNs) of the same rank, kind and name become one;
/// then each run of touching tiny segments (each shorter than kPathMinSegmentShare of `step_ns`) of the same rank
/// and kind becomes one, named by the name holding most of the run's time (ties: the first in byte order);
/// then each run of touching tiny host segments (cpu, launch, idle: a loop's short ops between its launches) of
/// one rank becomes one, of the kind holding most of its time, its time by kind in `parts`.
/// A merged segment runs from its first start to its last end: on segments that tile a span, the tiling and each
/// (rank, kind)'s total time (counting parts) are kept.
std::vector<PathSegment> MergePathSegments(std::vector<PathSegment> segments, int64_t step_ns);

/// The path's time by (rank, kind), largest first (ties: rank, then kind): its `contributors`, or, when it has
/// none, its segments' (counting parts).
std::vector<PathContributor> PathContributors(const CriticalPath& path);

}  // namespace strata
