// What changed between two runs, by HTA's TraceDiff rules (see run_diff.h).
#include "analysis/diff/run_diff.h"

#include <fmt/format.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <string_view>
#include <unordered_map>

#include "analysis/hta_time.h"
#include "analysis/job_summary.h"
#include "core/robust_stats.h"
#include "model/job_model.h"
#include "model/kernel_type.h"

namespace strata::diff {

namespace {

/// N of a name HTA treats as a step: it starts with "ProfilerStep" and `ProfilerStep\s*#\s*(\d+)` matches
/// at its start (what follows the digits is ignored, as re.match does).
std::optional<int64_t> StepNumber(std::string_view name) {
  constexpr std::string_view kPrefix = "ProfilerStep";
  if (name.substr(0, kPrefix.size()) != kPrefix) return std::nullopt;
  size_t i = kPrefix.size();
  auto skip_space = [&] {
    while (i < name.size() && (name[i] == ' ' || name[i] == '\t' || name[i] == '\n' || name[i] == '\r' ||
                               name[i] == '\f' || name[i] == '\v'))
      ++i;
  };
  skip_space();
  if (i >= name.size() || name[i] != '#') return std::nullopt;
  ++i;
  skip_space();
  const size_t digits = i;
  int64_t n = 0;
  for (; i < name.size() && name[i] >= '0' && name[i] <= '9'; ++i) {
    if (n > (INT64_MAX - 9) / 10) return std::nullopt;
    n = n * 10 + (name[i] - '0');
  }
  if (i == digits) return std::nullopt;
  return n;
}

/// Per store rank index, the slices HTA keeps as rows, in store (file) order: complete, with a category,
/// the category not "Trace". PyTorch 1.x's legacy profiler writes no categories at all, so HTA reads nothing
/// of such a trace; there every complete slice is a row (a strata extension, docs/hta-semantics.md §10).
std::vector<SliceRows> RowSlicesByRank(const TraceStore& store) {
  std::vector<SliceRows> out(store.ranks.size());
  std::vector<bool> uncategorized(store.ranks.size());
  for (size_t r = 0; r < store.ranks.size(); ++r)
    uncategorized[r] = store.inputs[store.ranks[r].input].format == InputFormat::kPytorchLegacy;
  const SliceTable& s = store.slices;
  const StringId trace_cat = store.strings.find("Trace");
  for (uint32_t i = 0; i < s.size(); ++i) {
    const uint8_t flags = s.flags[i];
    const uint32_t rank = store.track(s.track[i]).rank;
    if (!(flags & kSliceComplete)) continue;
    const bool categorized = (flags & kSliceHasCategory) && s.category[i] != trace_cat;
    if (categorized || uncategorized[rank]) out[rank].push_back(SliceId(i));
  }
  return out;
}

struct StepSpan {
  double start = 0;
  double end = 0;  // start + dur, as HTA's step[0] + step[1]
  int64_t number = 0;
  size_t order = 0;  // position in file order: the last containing step wins
};

/// HTA's add_iteration for rows on the CPU (stream < 0, or a cpu_op on stream 0): the last step in file order
/// with start <= ts < start + dur, else -1.
void AssignCpuSteps(const TraceStore& store, std::vector<HtaRow>& rows) {
  std::vector<StepSpan> steps;
  for (const HtaRow& r : rows)
    if (auto n = StepNumber(store.strings.view(store.slices.name[r.slice.value])))
      steps.push_back({r.start, r.start + r.dur, *n, steps.size()});
  std::sort(steps.begin(), steps.end(), [](const StepSpan& a, const StepSpan& b) { return a.start < b.start; });
  double max_dur = 0;
  for (const StepSpan& st : steps) max_dur = std::max(max_dur, st.end - st.start);
  const StringId cpu_op = store.strings.find("cpu_op");
  for (HtaRow& r : rows) {
    const bool cpu = r.stream < 0 || (r.stream == 0 && store.slices.category[r.slice.value] == cpu_op);
    if (!cpu) continue;
    r.step = -1;
    size_t best = SIZE_MAX;
    auto it = std::upper_bound(steps.begin(), steps.end(), r.start,
                               [](double ts, const StepSpan& st) { return ts < st.start; });
    // Steps starting more than the longest step's duration before the row cannot hold it.
    while (it != steps.begin() && std::prev(it)->start + max_dur > r.start) {
      --it;
      if (r.start < it->end && (best == SIZE_MAX || it->order > best)) best = it->order, r.step = it->number;
    }
  }
}

/// HTA's link of a row on a stream > 0 to its launch (transform_correlation_to_index): among rows with a
/// correlation other than -1, the GPU side is (stream >= 0 and correlation >= 0) or a row named Event Sync /
/// Context Sync, the CPU side the rest; a GPU row gets the step of the last CPU row with its correlation, -1
/// without one.
void AssignLinkedSteps(const TraceStore& store, std::vector<HtaRow>& rows) {
  const StringId event_sync = store.strings.find("Event Sync"), context_sync = store.strings.find("Context Sync");
  auto gpu_side = [&](const HtaRow& r) {
    const int64_t corr = store.slices.correlation[r.slice.value];
    const StringId name = store.slices.name[r.slice.value];
    return corr != -1 && ((r.stream >= 0 && corr >= 0) || name == event_sync || name == context_sync);
  };
  std::unordered_map<int64_t, size_t> last_cpu;  // correlation -> index into rows
  for (size_t i = 0; i < rows.size(); ++i)
    if (store.slices.correlation[rows[i].slice.value] != -1 && !gpu_side(rows[i]))
      last_cpu[store.slices.correlation[rows[i].slice.value]] = i;
  for (HtaRow& r : rows) {
    if (r.stream <= 0) continue;
    r.step = -1;
    if (!gpu_side(r)) continue;
    auto it = last_cpu.find(store.slices.correlation[r.slice.value]);
    if (it != last_cpu.end()) r.step = rows[it->second].step;
  }
}

/// A run without ProfilerSteps (a recording): every row in the model's step window that holds its start (-1:
/// in none), each window's length as the step time. An error when the model finds no steps either.
Expected<RunRows> WithModelSteps(const TraceStore& store, RunRows run) {
  const model::StepModel steps = model::BuildJobModel(store, SlicesByRank(store)).steps;
  std::set<int64_t> found;
  run.window_us.resize(run.by_rank.size());
  for (size_t rank = 0; rank < run.by_rank.size() && rank < steps.by_rank.size(); ++rank) {
    const std::vector<model::StepWindow>& windows = steps.by_rank[rank];
    for (const model::StepWindow& w : windows) {
      run.window_us[rank][w.step] = static_cast<double>(w.end_ns - w.start_ns) / 1000.0;
      found.insert(w.step);
    }
    for (HtaRow& r : run.by_rank[rank]) {
      // An op table's row is in the step its table says (its step windows may overlap: pipeline stages).
      if (steps.source == model::StepSource::kOpTable && store.slices.step[r.slice.value] >= 0) {
        r.step = store.slices.step[r.slice.value];
        continue;
      }
      const int w = model::FindWindow(windows, store.slices.ts_ns[r.slice.value]);
      r.step = w < 0 ? -1 : windows[static_cast<size_t>(w)].step;
    }
  }
  if (found.empty())
    return Status::BadInput(
        fmt::format("{}: no ProfilerStep#N in it and no steps found from its collective calls: the "
                    "diff compares steps (record with torch.profiler's schedule, or give a run "
                    "whose ranks call collectives every step)",
                    run.label));
  run.step_source = std::string(model::StepSourceName(steps.source));
  run.steps.assign(found.begin(), found.end());
  return run;
}

}  // namespace

Expected<RunRows> ReadRun(const TraceStore& store, const std::string& label) {
  RunRows run;
  run.label = label;
  const std::vector<SliceRows> slices = RowSlicesByRank(store);
  run.by_rank.resize(slices.size());
  std::set<int64_t> steps;
  bool any = false;
  for (size_t rank = 0; rank < slices.size(); ++rank) {
    const bool round = store.inputs[store.ranks[rank].input].float_timestamps;
    run.rounded |= round && !slices[rank].empty();
    any |= !slices[rank].empty();
    std::vector<HtaRow>& rows = run.by_rank[rank];
    rows.reserve(slices[rank].size());
    for (const SliceId slice : slices[rank]) {
      const HtaSpan span = HtaSpanOf(store.slices.ts_ns[slice.value], store.slices.dur_ns[slice.value], round);
      const double dur = round ? span.end - span.start : HtaMicros(store.slices.dur_ns[slice.value]);
      rows.push_back({slice, span.start, dur, store.track(store.slices.track[slice.value]).stream, kNoStep});
      if (auto n = StepNumber(store.strings.view(store.slices.name[slice.value]))) steps.insert(*n);
    }
    AssignCpuSteps(store, rows);
    AssignLinkedSteps(store, rows);
  }
  if (!any)
    return Status::BadInput(fmt::format("{}: no events to compare in it (complete events with a category)", label));
  run.step_source = "profiler-step";
  if (steps.empty()) return WithModelSteps(store, std::move(run));
  run.steps.assign(steps.begin(), steps.end());
  return run;
}

namespace {

std::string JoinInts(const std::vector<int64_t>& v) {
  std::string out;
  for (size_t i = 0; i < v.size() && i < 12; ++i) out += fmt::format("{}{}", i ? ", " : "", v[i]);
  if (v.size() > 12) out += fmt::format(", ... ({} in all)", v.size());
  return out;
}

/// True when `sel` leaves the side's ranks and steps to the default.
bool DefaultSelection(const SideSelection& sel) {
  return sel.ranks.empty() && sel.steps.empty() && !sel.all_ranks && !sel.all_steps;
}

/// The step of an op table whose time (its windows' mean over ranks) is the median of the table's steps (the
/// upper one of an even count: a step that was run): an op-table diff compares one typical step, not the first.
int64_t MedianStep(const RunRows& run) {
  std::vector<std::pair<double, int64_t>> times;
  for (int64_t n : run.steps) {
    double sum = 0;
    size_t ranks = 0;
    for (const auto& windows : run.window_us)
      if (auto it = windows.find(n); it != windows.end()) sum += it->second, ++ranks;
    if (ranks) times.emplace_back(sum / static_cast<double>(ranks), n);
  }
  if (times.empty()) return run.steps.front();
  return Median<EvenCount::kUpperMiddle>(std::move(times)).second;  // a step that was run
}

/// The store rank indexes and step numbers `sel` chooses on a side, or the error naming what is missing. An op
/// table left to the default compares the whole step: every rank's rows of its median step (HTA's default, the
/// first rank's first step, held one row of a table: the op tables of issue 51).
Status Choose(const TraceStore& store, const RunRows& run, const SideSelection& sel, std::vector<size_t>* ranks,
              SideSummary* summary) {
  std::map<int32_t, size_t> by_number;  // rank -> store index, of ranks with rows
  for (size_t i = 0; i < store.ranks.size(); ++i)
    if (!run.by_rank[i].empty()) by_number[store.ranks[i].rank] = i;
  std::vector<int64_t> known_ranks;
  for (const auto& [number, index] : by_number) known_ranks.push_back(number);
  const bool whole_step = run.step_source == "op-table" && DefaultSelection(sel);
  summary->whole_median_step = whole_step;
  std::vector<int32_t> wanted = sel.ranks;
  if (sel.all_ranks || whole_step) {
    wanted.clear();
    for (const auto& [number, index] : by_number) wanted.push_back(number);
  } else if (wanted.empty()) {
    wanted = {by_number.begin()->first};
  }
  for (int32_t r : wanted) {
    auto it = by_number.find(r);
    if (it == by_number.end())
      return Status::Usage(fmt::format("{} {}: {} has no rank {} (its ranks: {})", sel.rank_option, r, run.label, r,
                                       JoinInts(known_ranks)));
    ranks->push_back(it->second);
  }
  summary->all_steps = run.steps;
  std::vector<int64_t> steps = sel.all_steps ? run.steps : sel.steps;
  if (steps.empty()) steps = {whole_step ? MedianStep(run) : run.steps.front()};
  for (int64_t n : steps)
    if (!std::binary_search(run.steps.begin(), run.steps.end(), n))
      return Status::Usage(fmt::format("{} {}: {} has no {}{} (its steps: {})", sel.step_option, n, run.label,
                                       run.window_us.empty() ? "ProfilerStep#" : "step ", n, JoinInts(run.steps)));
  std::sort(steps.begin(), steps.end());
  steps.erase(std::unique(steps.begin(), steps.end()), steps.end());
  summary->steps = steps;
  // By rank number (store indexes follow the inputs' order), each once.
  std::sort(ranks->begin(), ranks->end(),
            [&](size_t a, size_t b) { return store.ranks[a].rank < store.ranks[b].rank; });
  ranks->erase(std::unique(ranks->begin(), ranks->end()), ranks->end());
  for (size_t index : *ranks) summary->ranks.push_back(store.ranks[index].rank);
  summary->rounded_to_us = run.rounded;
  summary->step_source = run.step_source;
  return Status::Ok();
}

std::string KindOf(const TraceStore& store, const HtaRow& r) {
  if (r.stream != -1)
    return std::string("GPU ") + KernelTypeName(ClassifyKernel(store.strings.view(store.slices.name[r.slice.value])));
  if (!(store.slices.flags[r.slice.value] & kSliceHasCategory)) return "CPU (no category)";
  return "CPU " + std::string(store.strings.view(store.slices.category[r.slice.value]));
}

bool PassesDevice(DeviceFilter device, const HtaRow& r) {
  return device == DeviceFilter::kAll || (device == DeviceFilter::kCpu) == (r.stream == -1);
}

using ChangeMap = std::unordered_map<std::string, Change>;

void Count(ChangeMap& map, const std::string& key, const std::string& kind, bool base, double dur) {
  Change& c = map[key];
  if (c.name.empty()) c.name = key, c.kind = kind;
  (base ? c.base_count : c.test_count) += 1;
  (base ? c.base_total_us : c.test_total_us) += dur;
}

/// Adds one side's selected rows to the per-name and per-kind tables and fills its step time, overall and by rank.
void Tally(const TraceStore& store, const RunRows& side, const std::vector<size_t>& ranks, DeviceFilter device,
           bool base, ChangeMap& names, ChangeMap& kinds, SideSummary* summary) {
  const std::set<int64_t> steps(summary->steps.begin(), summary->steps.end());
  double step_total = 0;
  for (size_t rank : ranks) {
    RankTotals& totals = summary->by_rank[store.ranks[rank].rank];
    for (const HtaRow& r : side.by_rank[rank]) {
      if (r.step == kNoStep || !steps.count(r.step)) continue;
      const std::string_view name = store.strings.view(store.slices.name[r.slice.value]);
      if (side.window_us.empty() && r.stream == -1 && StepNumber(name) == r.step)
        ++totals.step_rows, totals.step_time_us += r.dur;
      if (!PassesDevice(device, r)) continue;
      ++summary->rows;
      const std::string kind = KindOf(store, r);
      Count(names, std::string(name), kind, base, r.dur);
      Count(kinds, kind, "", base, r.dur);
      totals.kind_us[kind] += r.dur;
      if (ranks.size() == 2 && !IsWaitOrStepRow(name)) totals.name_us[std::string(name)] += r.dur;
    }
    if (!side.window_us.empty()) {
      for (int64_t step : summary->steps) {
        auto it = side.window_us[rank].find(step);
        if (it != side.window_us[rank].end()) ++totals.step_rows, totals.step_time_us += it->second;
      }
    }
    summary->step_rows += totals.step_rows;
    step_total += totals.step_time_us;
    if (totals.step_rows) totals.step_time_us /= static_cast<double>(totals.step_rows);
  }
  summary->step_time_us = summary->step_rows ? step_total / static_cast<double>(summary->step_rows) : 0;
}

std::vector<Change> Sorted(ChangeMap&& map) {
  std::vector<Change> out;
  out.reserve(map.size());
  for (auto& [key, change] : map) out.push_back(std::move(change));
  std::sort(out.begin(), out.end(), [](const Change& a, const Change& b) {
    const double da = std::fabs(a.diff_total_us()), db = std::fabs(b.diff_total_us());
    return da != db ? da > db : a.name < b.name;
  });
  return out;
}

}  // namespace

std::optional<DeviceFilter> ParseDeviceFilter(std::string_view name) {
  if (name == "all") return DeviceFilter::kAll;
  if (name == "cpu") return DeviceFilter::kCpu;
  if (name == "gpu") return DeviceFilter::kGpu;
  return std::nullopt;
}

DiffOptions NamedDiffOptions(std::vector<int32_t> base_ranks, std::vector<int64_t> base_steps,
                             std::vector<int32_t> test_ranks, std::vector<int64_t> test_steps, bool all_ranks,
                             bool all_steps, DeviceFilter device) {
  DiffOptions o;
  o.base = {"--base-rank", "--base-step", std::move(base_ranks), std::move(base_steps), all_ranks, all_steps};
  o.test = {"--test-rank", "--test-step", std::move(test_ranks), std::move(test_steps), all_ranks, all_steps};
  o.device = device;
  return o;
}

const char* DeviceFilterName(DeviceFilter d) {
  switch (d) {
    case DeviceFilter::kCpu:
      return "cpu";
    case DeviceFilter::kGpu:
      return "gpu";
    case DeviceFilter::kAll:
      break;
  }
  return "all";
}

Expected<RunDiff> DiffRuns(const TraceStore& base_store, const RunRows& base, const TraceStore& test_store,
                           const RunRows& test, const DiffOptions& options) {
  RunDiff out;
  out.device = options.device;
  std::vector<size_t> base_ranks, test_ranks;
  if (Status st = Choose(base_store, base, options.base, &base_ranks, &out.base); !st.ok()) return st;
  if (Status st = Choose(test_store, test, options.test, &test_ranks, &out.test); !st.ok()) return st;
  ChangeMap names, kinds;
  Tally(base_store, base, base_ranks, options.device, true, names, kinds, &out.base);
  Tally(test_store, test, test_ranks, options.device, false, names, kinds, &out.test);
  out.names = Sorted(std::move(names));
  out.kinds = Sorted(std::move(kinds));
  out.ranks = CompareRanks(out.base.by_rank, out.test.by_rank);
  return out;
}

}  // namespace strata::diff
