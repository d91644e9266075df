// JobLoader: turns the paths a user gives (files and directories) into one TraceStore for the job.
// Sniffs each file, imports files in parallel on all cores, decides each rank (distributedInfo, then
// file name, then --rank-map; a map entry overrides; a Flight Recorder dump's from its own rank key or its
// name's last digits), and merges per-file stores in rank order. In directories it reads *.json, *.csv and
// *.sseg files, and files of any name that begin as a Flight Recorder dump (torch names them PREFIX + rank).
// Invariants: two inputs claiming the same rank is an error naming both; any file that cannot be read
// is an error naming it (unless skip_unreadable, which then lists it in `unreadable`).
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "core/status.h"
#include "importers/import_options.h"
#include "store/recorded_run.h"
#include "store/trace_store.h"

namespace strata {

struct LoadOptions {
  ImportOptions import;
  std::map<std::string, int> rank_map;  // FILE (path or base name) -> rank; overrides the file
  unsigned threads = 0;                 // 0 = all cores
  /// Receives a progress line ("loaded 12/64 files (3.1 s)") at most twice a second during long loads, when
  /// set; the loader prints nothing itself.
  std::function<void(const std::string&)> on_progress;
  bool skip_unreadable = false;   // leave out files that cannot be read instead of failing
  uint64_t max_memory_bytes = 0;  // the events kept may not exceed this (0 = no bound of our own)
};

/// A file the loader left out because it could not be read (skip_unreadable only).
struct UnreadableInput {
  std::string path;
  std::string error;  // the message reading it gave (names the file and where)
  Status status;      // that error, with its kind and place (core/status.h)
};

struct LoadedJob {
  TraceStore store;
  std::vector<UnreadableInput> unreadable;  // files left out (skip_unreadable only)
  std::vector<std::string> ignored;         // files found in directories that are not traces (e.g. truth.json)
  uint64_t input_bytes = 0;                 // bytes read from disk (compressed size for gzip)
  uint64_t content_bytes = 0;               // decompressed bytes parsed
  RecordedRun recorded;                     // `strata record` segments given or found beside the traces
  std::vector<std::string> files;           // every file the inputs named or held (traces, segments, others)
  std::vector<std::string> notes;           // damaged segment blocks and the like
};

struct InputFile {
  std::string path;
  bool from_directory = false;  // found by expanding a directory (not named by the user)
  std::string left_out;         // non-empty: a directory entry that could not be included, and why
};

/// Expands directories (recursively; files whose name contains ".json" or ".csv", recorder segments "*.sseg",
/// and files whose first bytes are a Flight Recorder dump's) into a sorted list. Subdirectories that cannot be
/// listed and symbolic links to directories come back with `left_out` set: LoadJob fails on them unless
/// skip_unreadable, which lists them.
Expected<std::vector<InputFile>> ExpandInputs(const std::vector<std::string>& paths);

Expected<LoadedJob> LoadJob(const std::vector<std::string>& paths, const LoadOptions& options);

/// OK when some rank of `job` has events, or (`dumps_suffice`: strata diagnose) when it holds Flight Recorder
/// dumps; else the error every front end gives ("no events could be used from the inputs (A, B): nothing to
/// analyse"), naming the inputs read, or that dumps are for `strata diagnose`.
Status RequireEvents(const LoadedJob& job, bool dumps_suffice = false);

/// OK when every FILE of `rank_map` (LoadOptions::rank_map) names an input of `job` by path or base name; else
/// the error every front end gives, after its own name of the option ("FILE=RANK names no input file ...").
Status CheckRankMapNamesInputs(const LoadedJob& job, const std::map<std::string, int>& rank_map);

/// One run of a comparison (`strata diff`, strata.diff): LoadJob of `path` alone, an error (a load's, or a run
/// without events) prefixed with "WHICH PATH: ", e.g. "BASE runs/a: ...".
Expected<LoadedJob> LoadComparedRun(const std::string& which, const std::string& path, unsigned threads);

}  // namespace strata
