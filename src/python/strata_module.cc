// strata's Python extension (_strata, wrapped by the pure-Python package strata/__init__.py): loads a job,
// diagnoses it, summarizes it and diffs two runs through the same library calls as the `strata` CLI
// (importers/job_loader, analysis/diagnosis, analysis/job_summary, analysis/diff, reports/), and hands Python
// the JSON text the CLI writes plus each rank's columns of the trace store (slices, kernels, collectives,
// steps) for DataFrames.
// Invariants: the GIL is released while the library loads or analyses (no Python object is touched then);
// every error the library reports becomes strata.Error carrying the CLI's message (the text after
// "strata: "), raised as the subclass of its kind (strata.BadInputError, ... : core/status.h's ErrorKind) with
// the attributes kind, file, offset and line (None where unknown); a loaded job is never modified, so columns read from
// it agree with its diagnosis.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <fmt/format.h>

#include <cmath>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "analysis/diagnosis/diagnose.h"
#include "analysis/diagnosis/thresholds.h"
#include "analysis/diff/run_diff.h"
#include "analysis/job_summary.h"
#include "analysis/whatif/op_graph.h"
#include "importers/job_loader.h"
#include "model/collectives.h"
#include "model/kernel_type.h"
#include "model/step_windows.h"
#include "reports/diagnosis_report.h"
#include "reports/diff_report.h"
#include "reports/html_report.h"
#include "reports/html_view.h"
#include "reports/summary_report.h"

namespace py = pybind11;

namespace strata::python {
namespace {

/// The C++ side of strata.Error: a library error (its message unchanged, its kind and place), or a keyword of the
/// module's that is wrong (a usage error).
class ModuleError : public std::runtime_error {
 public:
  explicit ModuleError(Status error) : std::runtime_error(error.message()), error_(std::move(error)) {}
  explicit ModuleError(const std::string& usage) : ModuleError(Status::Usage(usage)) {}
  const Status& error() const { return error_; }

 private:
  Status error_;
};

/// strata.Error and its subclass per ErrorKind, created once by BindErrors (owned by the module from then on).
struct ErrorClasses {
  PyObject* base = nullptr;
  PyObject* by_kind[6] = {};
};
ErrorClasses& Errors() {
  static ErrorClasses classes;
  return classes;
}

/// `s` as a Python str, bytes that are not UTF-8 (of paths) replaced by U+FFFD.
py::str Text(const std::string& s) {
  return py::reinterpret_steal<py::str>(PyUnicode_DecodeUTF8(s.data(), static_cast<Py_ssize_t>(s.size()), "replace"));
}

/// Raises `e` in Python as the class of its kind, with kind, file, offset and line set on the exception.
void RaiseModuleError(const ModuleError& e) {
  const Status& st = e.error();
  PyObject* cls = Errors().by_kind[static_cast<int>(st.kind())];
  py::object exc = py::reinterpret_borrow<py::object>(cls)(Text(st.message()));
  const ErrorPlace* where = st.where();
  exc.attr("kind") = ErrorKindName(st.kind());
  exc.attr("file") = where ? py::object(Text(where->file)) : py::object(py::none());
  exc.attr("offset") = where && where->offset ? py::object(py::int_(*where->offset)) : py::object(py::none());
  exc.attr("line") = where && where->line ? py::object(py::int_(*where->line)) : py::object(py::none());
  PyErr_SetObject(cls, exc.ptr());
}

/// Creates strata.Error (an Exception) and one subclass per kind, and translates ModuleError into them.
void BindErrors(py::module_& m) {
  ErrorClasses& c = Errors();
  c.base = PyErr_NewException("_strata.Error", PyExc_Exception, nullptr);
  m.add_object("Error", py::handle(c.base));
  const std::pair<ErrorKind, const char*> kinds[] = {
      {ErrorKind::kBadInput, "BadInputError"},       {ErrorKind::kNotATrace, "NotATraceError"},
      {ErrorKind::kUnsupported, "UnsupportedError"}, {ErrorKind::kResource, "ResourceError"},
      {ErrorKind::kInternal, "InternalError"},       {ErrorKind::kUsage, "UsageError"}};
  for (const auto& [kind, name] : kinds) {
    PyObject* cls = PyErr_NewException(("_strata." + std::string(name)).c_str(), c.base, nullptr);
    c.by_kind[static_cast<int>(kind)] = cls;
    m.add_object(name, py::handle(cls));
  }
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const ModuleError& e) {
      RaiseModuleError(e);
    }
  });
}

/// The JSON text the CLI writes for a report (cli/main.cc, cli/diff_command.cc): two-space indent, bytes
/// that are not UTF-8 replaced by U+FFFD, a final newline.
std::string CliJsonText(const nlohmann::ordered_json& j) {
  return j.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
}

/// A loaded job and what the columns read from it need: each rank's slice rows, the step windows and the
/// collective calls as the model finds them.
/// Invariant: built once by LoadForPython, then only read (shared by the Python Job and its results).
struct JobData {
  LoadedJob job;
  std::vector<SliceRows> rows_by_rank;  // SlicesByRank(job.store)
  model::StepModel steps;               // model::FindSteps, completed by MatchCollectives
  model::CollectiveModel collectives;   // model::MatchCollectives over rows_by_rank
};

/// The CLI's input options, by the module's keyword names (strata.load): --rank-map, --op-map, --col-*,
/// --time-unit-ns, --threads, --skip-unreadable.
struct PyLoadOptions {
  unsigned threads = 0;
  bool skip_unreadable = false;
  std::map<std::string, int> rank_map;         // FILE (path or base name) -> rank
  std::map<std::string, std::string> op_map;   // the table's op type -> the what-if's
  std::map<std::string, std::string> columns;  // rank, step, op, start, duration, dp_rank, stage -> column
  std::optional<double> time_unit_ns;          // a power of ten from 1 to 1e9
};

/// `columns`' keys (the CLI's --col-NAME with '-' as '_') and the option each sets.
std::string* ColumnOption(ImportOptions::OpTableColumns& c, std::string_view key) {
  const std::pair<std::string_view, std::string*> keys[] = {
      {"rank", &c.rank},         {"step", &c.step},       {"op", &c.op},      {"start", &c.start},
      {"duration", &c.duration}, {"dp_rank", &c.dp_rank}, {"stage", &c.stage}};
  for (const auto& [name, field] : keys)
    if (name == key) return field;
  return nullptr;
}

/// LoadOptions from the module's keywords; throws ModuleError naming the keyword and the bad entry.
LoadOptions ToLoadOptions(const PyLoadOptions& in) {
  LoadOptions load;
  load.threads = in.threads;
  load.skip_unreadable = in.skip_unreadable;
  load.rank_map = in.rank_map;
  auto& table = load.import.op_table;
  for (const auto& [from, to] : in.op_map)
    if (Status st = whatif::AddOpMapEntry(from, to, &table.op_map); !st.ok())
      throw ModuleError(st.Reworded(fmt::format("op_map {{'{}': '{}'}}: {}", from, to, st.message())));
  for (const auto& [key, column] : in.columns) {
    std::string* field = ColumnOption(table, key);
    if (!field)
      throw ModuleError(
          fmt::format("columns: no op-table column is called '{}' (rank, step, op, start, duration, "
                      "dp_rank, stage)",
                      key));
    *field = column;
  }
  if (in.time_unit_ns) {
    const double v = *in.time_unit_ns;
    if (!IsOpTableTimeUnit(v))
      throw ModuleError(
          fmt::format("time_unit_ns={}: not a power of ten from 1 to 1e9 (1e9 = seconds, 1e6 = ms, "
                      "1e3 = us, 1 = ns)",
                      v));
    table.time_unit_ns = v;
  }
  return load;
}

/// Loads `paths` as `strata diagnose PATHS` does (LoadOrFail in cli/main.cc without --max-memory); throws
/// ModuleError with the CLI's message. Call without the GIL.
std::shared_ptr<const JobData> LoadForPython(const std::vector<std::string>& paths, const PyLoadOptions& options) {
  const LoadOptions load = ToLoadOptions(options);
  auto loaded = LoadJob(paths, load);
  if (!loaded.ok()) throw ModuleError(loaded.status());
  auto data = std::make_shared<JobData>();
  data->job = std::move(loaded).value();
  if (Status st = CheckRankMapNamesInputs(data->job, load.rank_map); !st.ok())
    throw ModuleError(st.Reworded("rank_map " + st.message()));
  if (Status st = RequireEvents(data->job); !st.ok()) throw ModuleError(st);
  data->rows_by_rank = SlicesByRank(data->job.store);
  data->steps = model::FindSteps(data->job.store, data->rows_by_rank);
  data->collectives = model::MatchCollectives(data->job.store, data->rows_by_rank, &data->steps);
  return data;
}

/// One column of a frame: integers, booleans or texts (exactly one is used, by `type`).
struct Column {
  enum Type { kInt, kBool, kText } type = kInt;
  std::string name;
  std::vector<int64_t> ints;
  std::vector<std::string_view> texts;  // views into the job's string pool or a static table
};

/// Columns of one frame in order, filled row by row without the GIL and handed to Python as a dict of
/// numpy arrays (numbers, booleans) and lists of str.
class Columns {
 public:
  /// Adds a column; returns its index for Push.
  size_t Add(std::string name, Column::Type type) {
    columns_.push_back(Column{type, std::move(name), {}, {}});
    return columns_.size() - 1;
  }
  void Push(size_t c, int64_t v) { columns_[c].ints.push_back(v); }
  void Push(size_t c, std::string_view v) { columns_[c].texts.push_back(v); }

  /// The dict {name: column}, in the order the columns were added. Needs the GIL.
  py::dict ToPython() const {
    py::dict out;
    for (const Column& c : columns_) out[py::str(c.name)] = ToPython(c);
    return out;
  }

 private:
  static py::object ToPython(const Column& c) {
    if (c.type == Column::kText) {
      py::list texts(c.texts.size());
      for (size_t i = 0; i < c.texts.size(); ++i)
        texts[i] = py::reinterpret_steal<py::object>(
            PyUnicode_DecodeUTF8(c.texts[i].data(), static_cast<Py_ssize_t>(c.texts[i].size()), "replace"));
      return texts;
    }
    if (c.type == Column::kBool) {
      py::array_t<bool> a(static_cast<py::ssize_t>(c.ints.size()));
      bool* p = a.mutable_data();
      for (size_t i = 0; i < c.ints.size(); ++i) p[i] = c.ints[i] != 0;
      return a;
    }
    return py::array_t<int64_t>(static_cast<py::ssize_t>(c.ints.size()), c.ints.data());
  }
  std::vector<Column> columns_;
};

std::string_view TrackKindName(TrackKind k) {
  switch (k) {
    case TrackKind::kCpuThread:
      return "cpu";
    case TrackKind::kGpuStream:
      return "gpu";
    case TrackKind::kCounter:
      return "counter";
    case TrackKind::kOpTable:
      return "op-table";
  }
  return "";
}

/// The step whose window (on the rank's own clock) holds `ts_ns`, or -1.
int64_t StepAt(const JobData& d, size_t rank_index, int64_t ts_ns) {
  if (rank_index >= d.steps.by_rank.size()) return -1;
  const auto& windows = d.steps.by_rank[rank_index];
  const int w = model::FindWindow(windows, ts_ns);
  return w < 0 ? -1 : windows[static_cast<size_t>(w)].step;
}

/// Which of a rank's slices a frame holds.
enum class SliceSet { kAll, kKernels };

/// The columns every slice frame has: times (ns, the rank's own clock), name, step, track.
struct CommonColumns {
  size_t ts, dur, name, category, step, kind, pid, tid, stream, correlation;
  explicit CommonColumns(Columns& c)
      : ts(c.Add("ts_ns", Column::kInt)),
        dur(c.Add("dur_ns", Column::kInt)),
        name(c.Add("name", Column::kText)),
        category(c.Add("category", Column::kText)),
        step(c.Add("step", Column::kInt)),
        kind(c.Add("track", Column::kText)),
        pid(c.Add("pid", Column::kInt)),
        tid(c.Add("tid", Column::kInt)),
        stream(c.Add("stream", Column::kInt)),
        correlation(c.Add("correlation", Column::kInt)) {}

  /// `known_step`: the row's step when the model gave it one (a kernel's is its launch's), else the window's.
  void Push(Columns& c, const JobData& d, size_t rank_index, uint32_t row,
            std::optional<int64_t> known_step = std::nullopt) const {
    const TraceStore& s = d.job.store;
    const Track& track = s.track(s.slices.track[row]);
    c.Push(ts, s.slices.ts_ns[row]);
    c.Push(dur, s.slices.dur_ns[row]);
    c.Push(name, s.strings.view(s.slices.name[row]));
    c.Push(category, s.strings.view(s.slices.category[row]));
    c.Push(step, known_step ? *known_step : StepAt(d, rank_index, s.slices.ts_ns[row]));
    c.Push(kind, TrackKindName(track.kind));
    c.Push(pid, track.pid);
    c.Push(tid, track.tid);
    c.Push(stream, track.stream);
    c.Push(correlation, s.slices.correlation[row]);
  }
};

/// The columns of one rank's slices of `set`: the common ones, then the kernel type (HTA's classification
/// by name) for kernels, the flags for all slices.
Columns SliceColumns(const JobData& d, size_t rank_index, SliceSet set) {
  Columns c;
  const CommonColumns common(c);
  const bool kernels = set == SliceSet::kKernels;
  const size_t kernel_type = kernels ? c.Add("kernel_type", Column::kText) : 0;
  const size_t gpu = kernels ? 0 : c.Add("gpu", Column::kBool), instant = kernels ? 0 : c.Add("instant", Column::kBool);
  const TraceStore& s = d.job.store;
  for (const SliceId row : d.rows_by_rank[rank_index]) {
    const uint8_t flags = s.slices.flags[row.value];
    if (kernels && !(flags & kSliceGpu)) continue;
    common.Push(c, d, rank_index, row.value);
    if (kernels) {
      c.Push(kernel_type, KernelTypeName(ClassifyKernel(s.strings.view(s.slices.name[row.value]))));
    } else {
      c.Push(gpu, int64_t{(flags & kSliceGpu) != 0});
      c.Push(instant, int64_t{(flags & kSliceInstant) != 0});
    }
  }
  return c;
}

/// Per call of a rank (model order): whether every member of its group has the same call (a complete
/// matched instance).
std::vector<uint8_t> CallsMatched(const model::CollectiveModel& m, size_t rank_index) {
  std::vector<uint8_t> out(rank_index < m.calls.size() ? m.calls[rank_index].size() : 0, 0);
  for (const model::MatchedCollective& instance : m.matched)
    if (instance.complete() && rank_index < instance.call.size() && instance.call[rank_index] >= 0)
      out[static_cast<size_t>(instance.call[rank_index])] = 1;
  return out;
}

/// One rank's collective calls as the model finds and matches them (GPU collective kernels, else CPU-side
/// collective ops such as gloo:all_reduce, else the op table's): the slice's columns, then the model's.
Columns CollectiveColumns(const JobData& d, size_t rank_index) {
  Columns c;
  const CommonColumns common(c);
  const size_t group = c.Add("group", Column::kText), group_size = c.Add("group_size", Column::kInt),
               ordinal = c.Add("ordinal", Column::kInt), launch = c.Add("launch_ns", Column::kInt),
               matched = c.Add("matched", Column::kBool), source = c.Add("source", Column::kText);
  const auto& calls = d.collectives.calls;
  if (rank_index >= calls.size()) return c;
  const std::vector<uint8_t> complete = CallsMatched(d.collectives, rank_index);
  const std::string_view source_name = model::CollectiveSourceName(d.collectives.source);
  for (size_t i = 0; i < calls[rank_index].size(); ++i) {
    const model::CollectiveCall& call = calls[rank_index][i];
    common.Push(c, d, rank_index, call.slice.value, call.step);
    c.Push(group, d.job.store.strings.view(call.group));
    c.Push(group_size, call.group_size);
    c.Push(ordinal, call.ordinal);
    c.Push(launch, call.launch_ns);
    c.Push(matched, int64_t{complete[i]});
    c.Push(source, source_name);
  }
  return c;
}

/// One rank's step windows (the model's: ProfilerStep#N, the op table's steps, or the collectives' rhythm).
Columns StepColumns(const JobData& d, size_t rank_index) {
  Columns c;
  const size_t step = c.Add("step", Column::kInt), start = c.Add("start_ns", Column::kInt),
               end = c.Add("end_ns", Column::kInt), dur = c.Add("dur_ns", Column::kInt);
  if (rank_index < d.steps.by_rank.size()) {
    for (const model::StepWindow& w : d.steps.by_rank[rank_index]) {
      c.Push(step, w.step);
      c.Push(start, w.start_ns);
      c.Push(end, w.end_ns);
      c.Push(dur, w.end_ns - w.start_ns);
    }
  }
  return c;
}

/// The Python-visible job: a handle on an immutable JobData.
class Job {
 public:
  explicit Job(std::shared_ptr<const JobData> data) : data_(std::move(data)) {}

  /// One dict per rank, in store order: rank, world size, where the rank came from, its input file.
  py::list Ranks() const {
    py::list out;
    const TraceStore& s = data_->job.store;
    for (const RankInfo& r : s.ranks) {
      py::dict row;
      row["rank"] = r.rank;
      row["world_size"] = r.world_size;
      row["rank_source"] = r.rank_source;
      row["backend"] = r.backend;
      row["path"] = s.inputs[r.input].path;
      row["format"] = std::string(InputFormatName(s.inputs[r.input].format));
      row["events"] = r.events;
      out.append(std::move(row));
    }
    return out;
  }

  py::dict Slices(size_t rank_index, SliceSet set) const {
    CheckRankIndex(rank_index);
    Columns c;
    {
      py::gil_scoped_release release;
      c = SliceColumns(*data_, rank_index, set);
    }
    return c.ToPython();
  }

  py::dict Collectives(size_t rank_index) const {
    CheckRankIndex(rank_index);
    return CollectiveColumns(*data_, rank_index).ToPython();
  }

  py::dict Steps(size_t rank_index) const {
    CheckRankIndex(rank_index);
    return StepColumns(*data_, rank_index).ToPython();
  }

  /// `strata summary --format json [--include-last-step] [--top-kernels N]` of this job.
  std::string SummaryJson(bool include_last_step, size_t top_kernels, bool series) const {
    py::gil_scoped_release release;
    BreakdownOptions options;
    options.include_last_step = include_last_step;
    options.top_kernels = top_kernels;
    SummaryJsonOptions json;
    json.series = series;
    return CliJsonText(SummaryToJson(data_->job.store, Summarize(data_->job.store, options), json));
  }

  /// `strata diagnose --format json [--min-effect PCT]` of this job.
  std::string DiagnoseJson(double min_effect_pct) const {
    py::gil_scoped_release release;
    return CliJsonText(DiagnosisToJson(DiagnoseWith(min_effect_pct, false)));
  }

  /// `strata diagnose --format text|html [--min-effect PCT]` of this job; text wrapped at `width` columns.
  std::string DiagnoseReport(double min_effect_pct, const std::string& format, size_t width) const {
    if (format != "text" && format != "html")
      throw ModuleError(fmt::format("render: format '{}' is not text or html (JSON: to_json())", format));
    py::gil_scoped_release release;
    const diagnosis::DiagnosisResult result = DiagnoseWith(min_effect_pct, format == "html");
    return format == "html" ? RenderHtmlReport(DiagnosisToJson(result), BuildReportView(data_->job.store, result))
                            : DiagnosisToText(result, width);
  }

  const std::vector<std::string>& Notes() const { return data_->job.notes; }
  const std::vector<std::string>& Files() const { return data_->job.files; }
  std::vector<std::pair<std::string, std::string>> Unreadable() const {
    std::vector<std::pair<std::string, std::string>> out;
    for (const auto& u : data_->job.unreadable) out.emplace_back(u.path, u.error);
    return out;
  }

 private:
  /// The diagnosis `strata diagnose --min-effect PCT` makes of this job (the files left out named in it), with
  /// what the HTML report draws beside it when `drawn_facts` (DiagnoseOptions::drawn_facts).
  diagnosis::DiagnosisResult DiagnoseWith(double min_effect_pct, bool drawn_facts) const {
    diagnosis::DiagnoseOptions options;
    options.min_effect = min_effect_pct / 100.0;
    options.drawn_facts = drawn_facts;
    for (const auto& bad : data_->job.unreadable) options.left_out.push_back({bad.path, bad.error, bad.status});
    return diagnosis::Diagnose(data_->job.store, options);
  }

  void CheckRankIndex(size_t rank_index) const {
    if (rank_index >= data_->job.store.ranks.size())
      throw py::index_error(
          fmt::format("rank index {} out of range (the job has {} ranks)", rank_index, data_->job.store.ranks.size()));
  }
  std::shared_ptr<const JobData> data_;
};

Job Load(const std::vector<std::string>& paths, const PyLoadOptions& options) {
  py::gil_scoped_release release;
  return Job(LoadForPython(paths, options));
}

/// What `strata diff` selects on each side and how it filters rows (its options, by the same names).
struct DiffRequest {
  std::string base, test;
  std::vector<int32_t> base_ranks, test_ranks;
  std::vector<int64_t> base_steps, test_steps;
  bool all_ranks = false, all_steps = false;
  std::string device = "all";
  unsigned threads = 0;
};

/// One run of a diff, loaded as `strata diff` loads it (LoadComparedRun); errors name the side.
LoadedJob LoadDiffRun(const std::string& which, const std::string& path, unsigned threads) {
  auto job = LoadComparedRun(which, path, threads);
  if (!job.ok()) throw ModuleError(job.status());
  return std::move(job).value();
}

/// `strata diff --format json` of two runs (RunDiffCommand's steps, cli/diff_command.cc).
std::string DiffJson(const DiffRequest& r) {
  const std::optional<diff::DeviceFilter> device = diff::ParseDeviceFilter(r.device);
  if (!device) throw ModuleError(fmt::format("--device: {} not in {{all,cpu,gpu}}", r.device));
  py::gil_scoped_release release;
  const LoadedJob base = LoadDiffRun("BASE", r.base, r.threads);
  const LoadedJob test = LoadDiffRun("TEST", r.test, r.threads);
  auto base_rows = diff::ReadRun(base.store, "BASE " + r.base);
  if (!base_rows.ok()) throw ModuleError(base_rows.status());
  auto test_rows = diff::ReadRun(test.store, "TEST " + r.test);
  if (!test_rows.ok()) throw ModuleError(test_rows.status());
  auto result = diff::DiffRuns(base.store, base_rows.value(), test.store, test_rows.value(),
                               diff::NamedDiffOptions(r.base_ranks, r.base_steps, r.test_ranks, r.test_steps,
                                                      r.all_ranks, r.all_steps, *device));
  if (!result.ok()) throw ModuleError(result.status());
  return CliJsonText(DiffToJson(DiffSides{base.store, test.store, r.base, r.test}, result.value()));
}

void BindJob(py::module_& m) {
  py::enum_<SliceSet>(m, "SliceSet").value("ALL", SliceSet::kAll).value("KERNELS", SliceSet::kKernels);
  py::class_<Job>(m, "Job", "A loaded job (use strata.load, which wraps it)")
      .def("ranks", &Job::Ranks, "one dict per rank, in the store's order (the rank index)")
      .def("slice_columns", &Job::Slices, py::arg("rank_index"), py::arg("set") = SliceSet::kAll,
           "columns of one rank's slices (all or kernels)")
      .def("collective_columns", &Job::Collectives, py::arg("rank_index"),
           "columns of one rank's collective calls as the model matches them")
      .def("step_columns", &Job::Steps, py::arg("rank_index"), "columns of one rank's step windows")
      .def("summary_json", &Job::SummaryJson, py::arg("include_last_step") = false, py::arg("top_kernels") = 10,
           py::arg("series") = false, "strata summary --format json [--series] of the job")
      .def("diagnose_json", &Job::DiagnoseJson, py::arg("min_effect_pct") = 100.0 * diagnosis::thresholds::kMinEffect,
           "strata diagnose --format json of the job")
      .def("diagnose_report", &Job::DiagnoseReport, py::arg("min_effect_pct"), py::arg("format"),
           py::arg("width") = kDefaultTextWidth, "strata diagnose --format text|html of the job")
      .def_property_readonly("notes", &Job::Notes)
      .def_property_readonly("files", &Job::Files)
      .def_property_readonly("unreadable", &Job::Unreadable);
}

void BindFunctions(py::module_& m) {
  m.def(
      "load",
      [](const std::vector<std::string>& paths, unsigned threads, bool skip_unreadable,
         std::map<std::string, int> rank_map, std::map<std::string, std::string> op_map,
         std::map<std::string, std::string> columns, std::optional<double> time_unit_ns) {
        return Load(paths, PyLoadOptions{threads, skip_unreadable, std::move(rank_map), std::move(op_map),
                                         std::move(columns), time_unit_ns});
      },
      py::arg("paths"), py::arg("threads") = 0u, py::arg("skip_unreadable") = false,
      py::arg("rank_map") = std::map<std::string, int>{}, py::arg("op_map") = std::map<std::string, std::string>{},
      py::arg("columns") = std::map<std::string, std::string>{}, py::arg("time_unit_ns") = std::nullopt,
      "loads the traces, op tables and recordings of one job (as strata diagnose PATHS with the same input "
      "options)");
  m.def(
      "diff_json",
      [](std::string base, std::string test, std::vector<int32_t> base_ranks, std::vector<int32_t> test_ranks,
         std::vector<int64_t> base_steps, std::vector<int64_t> test_steps, bool all_ranks, bool all_steps,
         std::string device, unsigned threads) {
        return DiffJson(DiffRequest{std::move(base), std::move(test), std::move(base_ranks), std::move(test_ranks),
                                    std::move(base_steps), std::move(test_steps), all_ranks, all_steps,
                                    std::move(device), threads});
      },
      py::arg("base"), py::arg("test"), py::arg("base_ranks") = std::vector<int32_t>{},
      py::arg("test_ranks") = std::vector<int32_t>{}, py::arg("base_steps") = std::vector<int64_t>{},
      py::arg("test_steps") = std::vector<int64_t>{}, py::arg("all_ranks") = false, py::arg("all_steps") = false,
      py::arg("device") = "all", py::arg("threads") = 0u, "strata diff --format json BASE TEST");
}

}  // namespace
}  // namespace strata::python

PYBIND11_MODULE(_strata, m) {
  m.doc() = "strata's C++ side; import strata (its wrapper) instead";
  m.attr("__version__") = STRATA_VERSION;
  m.attr("DEFAULT_MIN_EFFECT_PCT") = 100.0 * strata::diagnosis::thresholds::kMinEffect;
  strata::python::BindErrors(m);
  strata::python::BindJob(m);
  strata::python::BindFunctions(m);
}
