// Shared plumbing of the host-counter readers: the series types, the table that gives each series its id
// (an index, assigned on first sight and never reused), the diagnostics (warnings said once, skips
// counted), and the sink a reader writes one Sample()'s values into.
// Invariants: a series' key is (name, pid, index, label); unit and cumulative are fixed by its first
// emission. A cumulative series never decreases as emitted: when the raw value drops (a counter reset, a
// kernel's idle-time jitter) the emitted value holds and later growth is added from the new raw base.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "recorder/host/proc_file.h"

namespace strata::recorder {

/// One numeric series (e.g. "cpu.busy_pct" for cpu 3, "cgroup.cpu.throttled_ns" for pid 1234).
struct CounterSeries {
  std::string name;
  int32_t pid = -1;    // -1: host-wide
  int32_t index = -1;  // cpu, port, gpu... id, or -1
  std::string label;   // interface or device name, cgroup path...
  std::string unit;
  bool cumulative = false;  // true: monotonically increasing counter (consumers take deltas)
};

struct CounterSample {
  uint64_t ts_ns;
  uint32_t series;
  double value;
};

/// What a reader emits; the strings only need to live for the Emit call.
struct SeriesKey {
  std::string_view name;
  int32_t pid = -1;
  int32_t index = -1;
  std::string_view label;
  std::string_view unit;
  bool cumulative = false;
};

/// Sources skipped and why, since the sampler was made.
struct HostCounterStats {
  uint64_t samples = 0;
  uint64_t files_missing = 0;     // a file that vanished or was never there (exited process, optional source)
  uint64_t files_unreadable = 0;  // EACCES, EIO...
  uint64_t malformed = 0;         // lines or files that did not parse
  uint64_t pids_vanished = 0;     // traced pids found gone (each counted once)
  uint64_t threads_exited = 0;    // threads of traced pids that exited between samples
  uint64_t counter_resets = 0;    // cumulative raw values that went down (held, see above)
};

class SeriesTable {
 public:
  uint32_t Intern(const SeriesKey& key);
  /// The value to emit for a cumulative series whose raw value is now `raw` (see the invariants above).
  double Monotonic(uint32_t id, double raw, uint64_t* resets);
  const std::vector<CounterSeries>& series() const { return series_; }

 private:
  std::vector<CounterSeries> series_;
  std::unordered_map<std::string, uint32_t> ids_;
  std::string scratch_;
  struct Last {
    double raw = 0;
    double emitted = 0;
    bool valid = false;
  };
  std::vector<Last> last_;
};

class Diagnostics {
 public:
  /// Adds `message` unless a warning with the same `key` was already given.
  void WarnOnce(std::string_view key, std::string message);
  std::vector<std::string> Take();
  HostCounterStats stats;

 private:
  std::unordered_set<std::string> warned_;
  std::vector<std::string> pending_;
};

/// Where the readers put one Sample()'s values.
class CounterSink {
 public:
  CounterSink(SeriesTable* table, Diagnostics* diag, uint64_t ts_ns, std::vector<CounterSample>* out)
      : table_(table), diag_(diag), ts_ns_(ts_ns), out_(out) {}

  void Emit(const SeriesKey& key, double value);
  Diagnostics& diag() { return *diag_; }

  /// Reads `path` into `file`; on failure counts it and warns once per path (for a missing file only when
  /// `warn_if_missing`). True when the text is there.
  bool Read(FileReader* file, const std::string& path, bool warn_if_missing);
  /// Counts a malformed line or file and warns once per `where` (a path).
  void Malformed(std::string_view where, std::string_view what);

 private:
  SeriesTable* table_;
  Diagnostics* diag_;
  uint64_t ts_ns_;
  std::vector<CounterSample>* out_;
};

}  // namespace strata::recorder
