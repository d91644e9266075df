// `strata record`: runs a command (following the processes it starts) or attaches to running processes,
// records scheduling, CPU stacks, collective and CUDA calls, Python GC and host counters, and writes one
// segment file (segments/segment_format.h) into the output directory. Invariants: the segment is flushed
// at least once a second, so a killed recorder loses at most the last second; every failure to attach a
// probe is written down in the recording's notes instead of stopping the recording.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "core/status.h"

namespace strata::recorder {

struct RecordOptions {
  std::string out_dir = "strata-record";
  std::vector<int> pids;             // attach to these running processes
  std::vector<std::string> command;  // or run this command
  unsigned sample_hz = 49;           // CPU stack sampling (0 = off)
  double counter_hz = 10;            // host counters (0 = off)
  // The network interfaces' byte counters again between the host counter samples, this many times a second
  // (0, or not above counter_hz: only with the other counters): a link's traffic placed on steps of 50-100 ms,
  // which 10 Hz samples blur into their neighbours. A few /proc/PID/net/dev reads each.
  double link_hz = 50;
  bool probes = true;     // collective and CUDA uprobes
  bool python_gc = true;  // USDT python:gc__start/gc__done
  bool follow_children = true;
  std::vector<std::string> libraries;  // extra libraries (files or directories) to search for probe points
  std::vector<std::string> pythons;    // extra python binaries for the GC probes
  /// Lines for the person running the recorder (what is attached, notes, the summary at the end); the
  /// recorder prints nothing itself. Unset: silent.
  std::function<void(const std::string&)> on_message;
  unsigned max_buffer_mb = 64;  // recording kept in memory while the disk is full
  // NCCL profiler plugin offered to a launched command (NCCL_PROFILER_PLUGIN, with STRATA_NCCL_PROFILER_DIR
  // = out_dir) unless the command's environment names one already; empty = none.
  std::string nccl_plugin;
};

// Runs the recording to completion. Returns the exit code to pass on (the command's in launch mode, 0 in
// attach mode, 130 when a stopped command did not exit), or an error when recording could not start or the
// segment could not be closed.
Expected<int> Record(const RecordOptions& options);

}  // namespace strata::recorder
