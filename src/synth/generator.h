// Generator: drives a whole synthetic job — validates the request, calibrates the fault, runs the timing
// pass and the writing pass, and writes truth.json.
//
// Streaming: the DP gradient all-reduce is the only coupling between replicas, so
//   pass 1 (timing) walks step by step over all replicas without output, keeping per rank only its
//     current step start and its DP arrival, and records each rank's DP all-reduce completion per step;
//   pass 2 (writing) walks replica by replica: it opens that replica's pp * tp rank files, replays its
//     steps with the recorded completions (same pure-function durations, so the same times), writes every
//     event as it is produced, and closes the files before the next replica.
// Invariants: memory is O(ranks x steps) int64 completions + O(pp * tp) open writers with bounded
// buffers, never the events of the job; at most pp * tp files are open at once; the same options give
// byte-identical files.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "synth/faults.h"
#include "synth/kineto_writer.h"
#include "synth/timeline.h"

namespace strata::synth {

struct SynthOptions {
  std::string out_dir;
  int64_t ranks = 8;
  int64_t dp = 0, pp = 0, tp = 0;  // 0 = derive (tp = pp = 1, dp = the rest)
  int64_t steps = 6;
  int64_t first_step = 1;
  int64_t layers = 8;
  int64_t microbatches = 0;  // 0 = 2 * pp with a pipeline, else 1
  FaultRequest fault;
  uint64_t seed = 1;
  bool counters = false;
  double clock_skew_us = 1000;
  bool gzip = false;
  int progress = -1;  // -1: automatic (jobs of 512 ranks or more), 0: off, 1: on
  /// Receives each progress line ("timed step 3 of 6", "wrote 512 of 1024 ranks") when progress is on; the
  /// library prints nothing itself (the CLI renders them).
  std::function<void(const std::string&)> on_progress;
};

struct GenerateStats {
  int64_t ranks_written = 0;
  uint64_t events = 0;
  uint64_t bytes = 0;
  size_t max_open_sinks = 0;  // most rank outputs open at the same time
  size_t state_bytes = 0;     // per-rank state kept across the job (completions, starts, arrivals)
  double clean_step_ms = 0;   // calibrated clean step time
};

/// Where rank outputs go. The default writes Kineto JSON files into out_dir; tests substitute their own.
using SinkFactory =
    std::function<std::unique_ptr<RankSink>(const RankHeader& header, const std::string& path, Status* error)>;

/// Checks the options; an error names the argument (on success, cfg is filled).
Status Validate(const SynthOptions& options, JobConfig* cfg);

/// Generates the job; an error names the argument or the file that could not be written.
Status Generate(const SynthOptions& options, GenerateStats* stats = nullptr, SinkFactory factory = nullptr);

/// The clock offset (ns) of a rank: uniform in [-skew, +skew], drawn from the seed.
int64_t ClockOffsetNs(uint64_t seed, int64_t rank, double skew_us);

}  // namespace strata::synth
