// RecordedRun: what `strata record` wrote for a job (one or more segment files), indexed for analysis:
// processes with their ranks, probes and counter series by id, and the raw tables. Built by the job
// loader beside the TraceStore of the profiler traces of the same run.
// Invariants: a process's rank comes from its own environment (RANK, or SLURM_PROCID, OMPI_COMM_WORLD_RANK,
// PMI_RANK) as the recorder read it, or from its
// nearest ancestor that has one (a DataLoader worker belongs to its rank); processes of different
// segment files are kept apart by (segment, pid).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "segments/segment_tables.h"

namespace strata {

struct RecordedProcess {
  int pid = 0, ppid = 0;
  std::optional<int> rank;  // own or inherited
  std::string comm;
  std::string cgroup;
  uint64_t first_seen_ns = 0, exited_ns = 0;
};

struct RecordedProbe {
  std::string symbol, op, kind, library;
};

struct RecordedSeries {
  std::string name;
  int pid = -1;
  int index = -1;
  std::string label, unit;
  bool cumulative = false;
};

struct RecordedSegment {
  segments::SegmentData data;
  std::map<int, RecordedProcess> processes;    // by pid
  std::vector<RecordedProbe> probes;           // by probe id
  std::vector<RecordedSeries> series;          // by series id
  std::map<int, std::string> other_processes;  // pid -> comm of processes outside the job that took CPUs
  int recorder_pid = 0;                  // the recorder itself (its own CPU use is not another process's contention)
  bool finished = false;                 // the closing "recording" record was written: the recorder stopped cleanly
  std::string source = "strata record";  // or "nccl_profiler": written by the NCCL plugin inside a rank
  std::string host;                      // the host it was recorded on, when the segment says
  std::vector<std::string> gaps;         // what the recorder could not write (disk full), as sentences
  uint64_t dropped_events = 0;
  nlohmann::json stats;            // the recorder's "stats" record (events, drops, its own CPU time)
  std::vector<std::string> notes;  // the recorder's own notes (probes it could not attach, ...)

  // The rank of a process (nullopt when it is not part of a rank, e.g. the launcher).
  std::optional<int> RankOf(uint32_t pid) const;
};

struct RecordedRun {
  std::vector<RecordedSegment> segments;
  bool empty() const { return segments.empty(); }
  /// The rank of process `pid` in whichever segment saw it; nullopt when none did, or when segments (hosts)
  /// disagree (the same pid on two hosts).
  std::optional<int> RankOfPid(int64_t pid) const;
};

// Indexes one segment's meta records (the last record of a process wins: it is written again at exit).
RecordedSegment IndexSegment(segments::SegmentData data);

// Folds each NCCL profiler plugin segment into the `strata record` segment of the same host that saw its
// process (its probes appended, its call rows renumbered to them), so that one rank's device-side
// collectives and its host-side recording are one recording. A plugin segment no recorder segment claims
// stays a recording of its own.
void MergePluginSegments(RecordedRun* run);

}  // namespace strata
