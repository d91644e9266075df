// RunDiff: what changed between two runs (`strata diff BASE TEST`). The per-name table is HTA's
// TraceDiff.compare_traces (docs/hta-semantics.md §10): for the selected ranks and ProfilerSteps of each
// side, every row's name with its count and total duration (µs), the two sides joined on the name, missing
// values 0, change = test − base. Besides it: the step time of each side, names new and gone, and the change
// grouped by kind (GPU rows by kernel type, CPU rows by category).
// Rows and steps as HTA's LabeledTrace sees them: complete slices with a category other than "Trace", HTA's
// µs times (rounded inward for float-timestamp inputs), no last-step filter; a CPU row (stream < 0, or a
// cpu_op on stream 0) is in the last ProfilerStep (file order) whose [ts, ts + dur) holds its start, a row on
// a stream > 0 in the step of the CPU row its correlation links (the last one with that correlation).
// Where HTA reads nothing, strata goes on (docs/hta-semantics.md §10): a PyTorch 1.x trace (no categories)
// gives every complete slice as a row; a run without ProfilerSteps (a recording) takes its job model's steps.
// With several ranks in both runs, which ranks changed unlike the rest (rank_changes.h).
// Invariants: `names` holds each name once, sorted by |diff_total_us| descending then name; a count of 0 on a
// side means the name is absent there; the selected ranks and steps exist on their side (else an error).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/diff/rank_changes.h"
#include "core/status.h"
#include "store/trace_store.h"

namespace strata::diff {

/// HTA's device_type: every row, CPU rows only (stream == -1) or device rows only (stream != -1).
enum class DeviceFilter { kAll, kCpu, kGpu };
const char* DeviceFilterName(DeviceFilter d);
/// "all", "cpu" or "gpu" as DeviceFilterName writes them; nullopt for any other text.
std::optional<DeviceFilter> ParseDeviceFilter(std::string_view name);

/// Which ranks and steps of one side are compared. Empty lists: the side's smallest rank / step (HTA's
/// default), except for an op table: every rank and its median step by time (the whole of one typical step);
/// `all_ranks` / `all_steps` take every one.
struct SideSelection {
  std::string rank_option;  // the option that chose `ranks`, e.g. "--base-rank"
  std::string step_option;  // likewise for `steps`
  std::vector<int32_t> ranks;
  std::vector<int64_t> steps;
  bool all_ranks = false;
  bool all_steps = false;
};

struct DiffOptions {
  SideSelection base;
  SideSelection test;
  DeviceFilter device = DeviceFilter::kAll;
};

/// The options of `strata diff` (and strata.diff, which takes the same names): `base_*` / `test_*` select each
/// side, `all_*` both; the selections name --base-rank, --base-step, --test-rank, --test-step in their errors.
DiffOptions NamedDiffOptions(std::vector<int32_t> base_ranks, std::vector<int64_t> base_steps,
                             std::vector<int32_t> test_ranks, std::vector<int64_t> test_steps, bool all_ranks,
                             bool all_steps, DeviceFilter device);

/// Count and total duration of one name (or kind) on both sides.
struct Change {
  std::string name;  // the op/kernel name, or the kind ("GPU COMPUTATION", "cpu_op", ...)
  std::string kind;  // for a name: the kind of its first selected row (base first); empty for a kind
  uint64_t base_count = 0;
  uint64_t test_count = 0;
  double base_total_us = 0;
  double test_total_us = 0;
  int64_t diff_count() const { return static_cast<int64_t>(test_count) - static_cast<int64_t>(base_count); }
  double diff_total_us() const { return test_total_us - base_total_us; }
  bool is_new() const { return base_count == 0 && test_count > 0; }
  bool is_gone() const { return test_count == 0 && base_count > 0; }
};

/// What was compared on one side.
struct SideSummary {
  std::vector<int32_t> ranks;  // selected, ascending
  std::vector<int64_t> steps;  // selected, ascending
  std::vector<int64_t> all_steps;
  uint64_t rows = 0;               // rows selected (after the device filter)
  uint64_t step_rows = 0;          // selected ProfilerStep CPU rows the step time is the mean of
  double step_time_us = 0;         // mean duration of those rows; 0 when there are none
  bool rounded_to_us = false;      // some input had float timestamps (HTA's inward rounding applied)
  std::string step_source;         // "profiler-step", or the model\'s ("detected-rhythm" for a recording)
  bool whole_median_step = false;  // an op table left to the default: every rank, its median step
  RankTotalsByRank by_rank;        // each selected rank's step time and time by kind
};

struct RunDiff {
  SideSummary base;
  SideSummary test;
  DeviceFilter device = DeviceFilter::kAll;
  std::vector<Change> names;      // sorted by |diff_total_us| desc, then name
  std::vector<Change> kinds;      // sorted the same way
  std::vector<RankChange> ranks;  // ranks selected in both runs with a step time in each (rank_changes.h)
};

/// A row as HTA's trace diff sees it, in file order within its rank.
struct HtaRow {
  SliceId slice;        // its row in the store's slices
  double start = 0;     // µs
  double dur = 0;       // µs (HTA's dur column: rounded, or as written)
  int64_t stream = -1;  // args.stream (-1: a CPU row)
  int64_t step = -1;    // ProfilerStep number; -1 in none; kNoStep never assigned (HTA's NaN: never selected)
};
inline constexpr int64_t kNoStep = INT64_MIN;

/// One run read by HTA's rules: every rank's rows with their steps, and the steps of all its rows.
struct RunRows {
  std::string label;                         // how errors name the run, e.g. "BASE (runs/a)"
  std::vector<std::vector<HtaRow>> by_rank;  // by store rank index
  std::vector<int64_t> steps;                // ascending, distinct
  bool rounded = false;                      // some input with rows had float timestamps
  // A run without ProfilerStep#N (a `strata record` recording): the steps are the model's (the rhythm of the
  // collective calls), each row in the step window holding its start, and a step's time is its window's
  // length, per store rank index and step. Empty for runs with ProfilerSteps.
  std::string step_source;  // "profiler-step", or the model's source ("detected-rhythm", ...)
  std::vector<std::map<int64_t, double>> window_us;
};

/// Reads one run. An error (naming `label`) when it has no row to compare, or neither a ProfilerStep#N nor
/// steps the model finds.
Expected<RunRows> ReadRun(const TraceStore& store, const std::string& label);

/// Compares `test` with `base` (each read from its store by ReadRun). The only errors are the selection's:
/// a rank or step it names that the side does not have (a usage error, naming the option and the side).
Expected<RunDiff> DiffRuns(const TraceStore& base_store, const RunRows& base, const TraceStore& test_store,
                           const RunRows& test, const DiffOptions& options);

}  // namespace strata::diff
