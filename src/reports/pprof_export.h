// The CPU stack samples of a `strata record` recording as a pprof profile (gzip'd profile.proto, the format
// `go tool pprof`, Pyroscope and Parca read; the message is src/reports/pprof_profile.proto), for
// `strata export --format pprof`.
//
// What a profile holds:
//  - sample types samples/count and cpu/nanoseconds (one sample = 1e9 / sample_hz ns of CPU; when a segment
//    does not say its sampling rate, samples/count alone, and a comment says why), period type cpu/nanoseconds;
//  - one sample per sampled stack and label set, its values summed over the rows that share both;
//  - a stack, leaf first, merges the native frames and the Python frames of a sample: the native frames up
//    to the first interpreter frame (_PyEval_EvalFrameDefault, ...), then the Python frames innermost first,
//    then the native frames below the last interpreter frame; interpreter frames themselves are dropped
//    when Python frames take their place. A sample without a user stack (the thread was in the kernel, or
//    the unwinder failed) is the one frame "[no user stack]", one whose stack id has no "stack" record
//    "[user stack not recorded]", so that CPU totals stay true;
//  - functions named as recorded (a native function the symbolizer could not name is "[module file name]"),
//    with their source file and line where the recording has them (native: DWARF line info; Python: the
//    line the frame executes, and the function's first line as its start line); native frames carry a mapping
//    named by their module;
//  - string labels on every sample: job, rank, pid, tid, and host when the segment names it.
// Invariants: only processes that belong to a rank (RecordedSegment::RankOf) are exported; the profile is
// deterministic for a given recording (ids in order of first use, samples in order of first row).
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>

#include "core/status.h"
#include "store/recorded_run.h"

namespace strata {

struct PprofOptions {
  std::string job;              // the "job" label; "" = the name of the folder holding the first segment
  std::optional<int32_t> rank;  // only this rank's samples; nullopt = every rank, told apart by the label
};

/// The ranks of `run` that have at least one CPU stack sample.
std::set<int32_t> RanksWithSamples(const RecordedRun& run);

/// The selected samples of `run` as a gzip'd profile.proto. An error naming the recording when it holds
/// no stack samples (of the selected rank).
Expected<std::string> PprofProfile(const RecordedRun& run, const PprofOptions& options);

/// The peers' median of `straggler`, as a gzip'd profile.proto to compare the straggler's own profile
/// against (`go tool pprof -diff_base PEERS STRAGGLER`): every stack any other rank sampled, valued at the
/// median over those ranks of its samples on each (a rank that never sampled it counts 0; an even number of
/// peers takes the mean of the middle two, rounded to whole samples and ns), labelled job and
/// peers="median of ranks 0, 2, ...". An error when the straggler or every peer has no samples.
Expected<std::string> PprofPeersMedian(const RecordedRun& run, int32_t straggler, const std::string& job = "");

}  // namespace strata
