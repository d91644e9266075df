// strata command-line front end: parses arguments (CLI11) and dispatches to the subcommands.
#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/diagnosis/diagnose.h"
#include "analysis/job_summary.h"
#include "analysis/whatif/op_graph.h"
#include "cli/agent_command.h"
#include "cli/diff_command.h"
#include "cli/exit_codes.h"
#include "cli/export_command.h"
#include "cli/output.h"
#include "cli/record_command.h"
#include "cli/serve_command.h"
#include "cli/synth_command.h"
#include "cli/terminal_width.h"
#include "cli/usage_errors.h"
#include "cli/validators.h"
#include "core/allocator_tuning.h"
#include "core/memory_limit.h"
#include "core/text_escape.h"
#include "importers/job_loader.h"
#include "importers/rank_inference.h"
#include "importers/segment_index.h"
#include "reports/diagnosis_report.h"
#include "reports/html_report.h"
#include "reports/html_view.h"
#include "reports/segment_report.h"
#include "reports/summary_report.h"
#include "segments/segment_reader.h"

namespace {

/// "strata: MESSAGE" on stderr, control characters of names and paths in it escaped.
// Prints an error, one "strata: " line per line of the message (several errors are joined by newlines),
// each escaped for the terminal.
void PrintError(const std::string& message) {
  size_t start = 0;
  for (;;) {
    const size_t end = message.find('\n', start);
    const std::string_view line = std::string_view(message).substr(start, end - start);
    std::fprintf(stderr, "strata: %s\n", strata::TerminalSafe(line).c_str());
    if (end == std::string::npos) break;
    start = end + 1;
  }
}

/// Prints an error and returns the exit code of its kind (cli/exit_codes.h).
int Fail(const strata::Status& error) {
  PrintError(error.message());
  return strata::cli::ExitCodeFor(error.kind());
}

struct CommonInputOptions {
  std::vector<std::string> paths;
  std::vector<std::string> rank_map;
  std::vector<std::string> op_map;
  unsigned threads = 0;
  bool skip_unreadable = false;
  bool progress = false;
  bool quiet = false;       // no warnings on stderr (files left out, damaged segment blocks, units); errors still
  uint64_t max_memory = 0;  // bytes; 0 = the machine's physical memory
  strata::ImportOptions::OpTableColumns columns;
  bool dumps_suffice = false;  // Flight Recorder dumps alone are a job to analyse (diagnose)
};

/// --max-memory SIZE: bounds what the command may allocate (core/memory_limit.h).
void AddMaxMemoryOption(CLI::App* cmd, uint64_t& bytes) {
  cmd->add_option("--max-memory", bytes,
                  "SIZE with a unit (512M, 4G): memory the command may use; past it, an error names the input "
                  "being read (default: the machine's physical memory)")
      ->transform(CLI::AsSizeValue(false))
      ->check(CLI::Validator(
          [](std::string& value) -> std::string {
            uint64_t given = 0;
            if (!CLI::detail::lexical_cast(value, given) || given < (uint64_t{16} << 20))
              return "at least 16M is needed (a number without a unit is bytes: write 4096M, 4G)";
            return "";
          },
          "SIZE"));
}

/// Applies --max-memory (or the default); returns 0 or the exit code after printing why.
int ApplyMaxMemory(uint64_t bytes) {
  const uint64_t want = bytes ? bytes : strata::PhysicalMemoryBytes();
  if (want == 0) return 0;
  if (auto applied = strata::ApplyMemoryLimit(want); !applied.ok()) return Fail(applied.status());
  return 0;
}

void AddInputOptions(CLI::App* cmd, CommonInputOptions& o) {
  cmd->add_option("paths", o.paths,
                  "trace files and/or directories of one job (Kineto/Chrome JSON, op-table CSV; plain or gzip; "
                  "Nsight Systems SQLite exports), and `strata record` segments (.sseg): beside traces they add the "
                  "layers below the framework; alone, the recording is the job")
      ->required();
  cmd->add_option("--rank-map", o.rank_map,
                  "FILE=RANK[,FILE=RANK...]: rank of each file (by path or base name); overrides what the file "
                  "says; repeatable; an entry that names no input is an error")
      ->allow_extra_args(false);
  cmd->add_option("--op-map", o.op_map,
                  "FROM=TO[,FROM=TO...]: read the op table's op type FROM as TO, one of the types the what-if "
                  "knows (forward-compute, backward-compute, optimizer, gc, forward-send, ...); repeatable")
      ->delimiter(',');
  cmd->add_option("--threads", o.threads, "files parsed at once (default: all cores)")->check(CLI::Range(0u, 4096u));
  cmd->add_flag("--skip-unreadable", o.skip_unreadable,
                "leave out files that cannot be read (they are listed) instead of failing");
  cmd->add_flag("--progress", o.progress, "print loading progress to stderr");
  cmd->add_flag("-q,--quiet", o.quiet,
                "no warnings on stderr (files left out, damaged recording blocks, implausible units); errors are "
                "still printed, and the report still lists what was left out or skipped");
  AddMaxMemoryOption(cmd, o.max_memory);
  cmd->add_option("--col-rank", o.columns.rank, "op-table column holding the global rank")->capture_default_str();
  cmd->add_option("--col-step", o.columns.step, "op-table column holding the step")->capture_default_str();
  cmd->add_option("--col-op", o.columns.op, "op-table column holding the op type")->capture_default_str();
  cmd->add_option("--col-start", o.columns.start, "op-table column holding the start time")->capture_default_str();
  cmd->add_option("--col-duration", o.columns.duration, "op-table column holding the duration")->capture_default_str();
  cmd->add_option("--col-dp-rank", o.columns.dp_rank, "op-table column holding the data-parallel rank")
      ->capture_default_str();
  cmd->add_option("--col-stage", o.columns.stage, "op-table column holding the pipeline stage")->capture_default_str();
  cmd->add_option("--time-unit-ns", o.columns.time_unit_ns,
                  "nanoseconds per op-table time unit, a power of ten (1e9 = seconds, 1e3 = microseconds); steps "
                  "under 10 µs or over 10 min get a warning naming the units that fit")
      ->check(strata::cli::PowerOfTen(1, 1e9))
      ->capture_default_str();
}

void AddOutputOptions(CLI::App* cmd, std::string& format, std::string& out, size_t& width,
                      const std::vector<std::string>& formats = {"text", "json"}) {
  cmd->add_option("--format", format, "output format")->check(CLI::IsMember(formats))->capture_default_str();
  cmd->add_option("-o,--output", out, "write to FILE instead of standard output");
  strata::cli::AddWidthOption(cmd, width);
}

/// --op-map's entries into `out`; a usage error names the entry that is not FROM=TO with a known TO.
strata::Status ParseOpMap(const std::vector<std::string>& specs, std::map<std::string, std::string, std::less<>>* out) {
  for (const std::string& spec : specs) {
    const size_t eq = spec.find('=');
    const std::string_view from = eq == std::string::npos ? spec : std::string_view(spec).substr(0, eq);
    const std::string_view to = eq == std::string::npos ? std::string_view() : std::string_view(spec).substr(eq + 1);
    if (auto st = strata::whatif::AddOpMapEntry(from, to, out); !st.ok())
      return strata::Status::Usage(fmt::format("--op-map {}: {}", spec, st.message()));
  }
  return strata::Status::Ok();
}

int LoadOrFail(const CommonInputOptions& o, strata::LoadedJob* job) {
  if (int rc = ApplyMaxMemory(o.max_memory)) return rc;
  strata::LoadOptions load;
  load.max_memory_bytes = strata::MemoryLimitInEffect();
  load.import.op_table = o.columns;
  load.threads = o.threads;
  load.skip_unreadable = o.skip_unreadable;
  if (o.progress)
    load.on_progress = [](const std::string& line) { std::fprintf(stderr, "strata: %s\n", line.c_str()); };
  if (auto st = ParseOpMap(o.op_map, &load.import.op_table.op_map); !st.ok()) {
    PrintError(st.message());
    return 2;
  }
  for (const std::string& spec : o.rank_map) {
    if (auto st = strata::ParseRankMap(spec, &load.rank_map); !st.ok()) {
      PrintError(st.message());
      return 2;
    }
  }
  auto loaded = strata::LoadJob(o.paths, load);
  if (!loaded.ok()) return Fail(loaded.status());
  *job = std::move(loaded).value();
  if (strata::Status st = strata::CheckRankMapNamesInputs(*job, load.rank_map); !st.ok()) {
    PrintError("--rank-map " + st.message());
    return 2;
  }
  if (strata::Status st = strata::RequireEvents(*job, o.dumps_suffice); !st.ok()) return Fail(st);
  if (o.quiet) return 0;
  for (const auto& bad : job->unreadable) PrintError("left out: " + bad.error);
  for (const auto& note : job->notes) PrintError(note);
  return 0;
}

/// JSON output text. Strings that are not valid UTF-8 (bytes of paths or names from inputs) are written
/// with U+FFFD in place of the bad bytes rather than aborting the whole output; paths are already escaped
/// byte for byte by the reports (core/text_escape.h).
std::string JsonText(const nlohmann::ordered_json& j) {
  return j.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
}

int FailOnExit(const std::vector<std::string>& fail_on, strata::diagnosis::Verdict status) {
  using strata::diagnosis::Verdict;
  for (const std::string& f : fail_on) {
    if (strata::diagnosis::ParseVerdict(f) != status) continue;
    if (status == Verdict::kFindings) return strata::cli::kExitFindings;
    if (status == Verdict::kInconclusive) return strata::cli::kExitInconclusive;
  }
  return 0;
}

}  // namespace

/// The segments `paths` name: files as given, folders as every .sseg under them (sorted), "-" as is.
strata::Expected<std::vector<std::string>> SegmentPaths(const std::vector<std::string>& paths) {
  std::vector<std::string> out;
  for (const std::string& path : paths) {
    std::error_code ec;
    if (path == "-" || !std::filesystem::is_directory(path, ec)) {
      out.push_back(path);
      continue;
    }
    std::vector<std::string> found;
    for (auto it = std::filesystem::recursive_directory_iterator(
             path, std::filesystem::directory_options::skip_permission_denied, ec);
         !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec))
      if (it->path().extension() == ".sseg" && it->is_regular_file(ec)) found.push_back(it->path().string());
    if (ec) return strata::Status::Resource(fmt::format("{}: cannot list it: {}", path, ec.message()));
    if (found.empty()) return strata::Status::NotATrace(fmt::format("{}: no .sseg segment files in it", path));
    std::sort(found.begin(), found.end());
    out.insert(out.end(), found.begin(), found.end());
  }
  return out;
}

/// `strata inspect`: each segment as text tables (one block per segment), or JSON (one object; an array
/// for several segments).
int RunInspect(const std::vector<std::string>& paths, const std::string& format, size_t width) {
  auto segments = SegmentPaths(paths);
  if (!segments.ok()) return Fail(segments.status());
  std::string text;
  nlohmann::ordered_json all = nlohmann::ordered_json::array();
  for (const std::string& path : segments.value()) {
    auto segment = strata::segments::ReadSegment(path);
    if (!segment.ok()) return Fail(segment.status());
    strata::RecordedSegment indexed = strata::IndexSegment(std::move(segment).value());
    if (segments.value().size() == 1) strata::TakeRootAsRankZero(&indexed);  // one process tree, no rank: rank 0
    if (format == "json")
      all.push_back(strata::SegmentToJson(indexed));
    else
      text += (text.empty() ? "" : "\n") +
              strata::SegmentToText(indexed, strata::cli::TextWidth("", width, strata::kDefaultTextWidth));
  }
  if (format == "json") text = JsonText(all.size() == 1 ? all[0] : all);
  if (auto st = strata::WriteOutput("", text); !st.ok()) return Fail(st);
  return 0;
}

/// `strata summary`: its options (bound by CLI11) and its run.
struct SummaryCommand {
  CommonInputOptions in;
  std::string format = "text";
  std::string out;
  size_t width = 0;  // --width; 0: COLUMNS, the terminal's or the default (cli/terminal_width.h)
  bool include_last_step = false;
  size_t top_kernels = 10;
  strata::KernelSequenceOptions sequences;
  strata::SummaryTextOptions text;
  strata::SummaryJsonOptions json;
  CLI::App* cmd = nullptr;

  void Add(CLI::App& app) {
    cmd = app.add_subcommand("summary",
                             "per-rank and job overview, outlier ranks first: events by category, steps, time "
                             "span, HTA's GPU analyses (idle/compute/non-compute time, communication-computation "
                             "overlap, kernel time by type, idle time by cause, kernel launch statistics, queue "
                             "length) and a recording's run-queue, GC and D-state shares");
    AddInputOptions(cmd, in);
    AddOutputOptions(cmd, format, out, width);
    cmd->add_flag("--include-last-step", include_last_step,
                  "keep the last ProfilerStep (HTA drops it by default because it is often incomplete)");
    cmd->add_flag("--per-rank", text.per_rank,
                  "text: a row and a detail block (categories, GPU time by type, top kernels) for every rank; "
                  "by default every rank's row up to 8 ranks, then only the outlier ranks");
    cmd->add_option("--top-kernels", top_kernels, "kernels listed per rank")
        ->check(CLI::Range(size_t{0}, size_t{100000}))
        ->capture_default_str();
    cmd->add_flag("--series", json.series,
                  "JSON: each GPU stream's queue length and each kind of memory copy's bandwidth over time (one "
                  "[µs, value] point per change, HTA's get_queue_length_time_series / get_memory_bw_time_series)");
    cmd->add_option("--kernel-sequences", sequences.operator_name,
                    "HTA's frequent kernel sequences launched by the CPU operators whose name contains this text "
                    "(e.g. aten::linear): the 5 most frequent per rank, of 3 kernels or more");
  }

  int Run() {
    if (json.series && format != "json") {
      PrintError("summary --series: the time series are written in JSON only (add --format json)");
      return 2;
    }
    strata::LoadedJob job;
    if (int rc = LoadOrFail(in, &job)) return rc;
    strata::BreakdownOptions options;
    options.include_last_step = include_last_step;
    options.top_kernels = top_kernels;
    const strata::JobSummary result = strata::Summarize(job.store, options, sequences);
    text.width = strata::cli::TextWidth(out, width, strata::kDefaultTextWidth);
    const std::string rendered = format == "json" ? JsonText(strata::SummaryToJson(job.store, result, json))
                                                  : strata::SummaryToText(job.store, result, text);
    if (auto st = strata::WriteOutput(out, rendered, job.files); !st.ok()) return Fail(st);
    return 0;
  }
};

/// `strata diagnose`: its options (bound by CLI11) and its run.
struct DiagnoseCommand {
  CommonInputOptions in;
  std::string format = "text";
  std::string out;
  size_t width = 0;  // --width; 0: COLUMNS, the terminal's or the default (cli/terminal_width.h)
  double min_effect_pct = 100.0 * strata::diagnosis::thresholds::kMinEffect;
  std::vector<std::string> fail_on;
  CLI::App* cmd = nullptr;

  void Add(CLI::App& app) {
    cmd = app.add_subcommand("diagnose",
                             "find the straggler ranks, the culprit op or gap, the cause and what fixing it would "
                             "save (JSON per the strata.diagnosis/1 contract with --format json; a self-contained "
                             "page with --format html -o FILE)");
    AddInputOptions(cmd, in);
    AddOutputOptions(cmd, format, out, width, {"text", "json", "html"});
    cmd->add_option(
           "--min-effect", min_effect_pct,
           "hide findings that save less than this, in % of step time, except each named straggler's own (a filter: "
           "no figure changes)")
        ->check(strata::cli::Finite() & CLI::Range(0.0, 100.0))
        ->capture_default_str();
    cmd->add_option("--fail-on", fail_on,
                    "exit 3 when the status is findings, 4 when it is inconclusive (repeatable; default: exit 0 "
                    "whenever the diagnosis ran; errors exit 1, 5, 6 or 7 by kind, usage errors 2: docs/usage.md)")
        ->check(CLI::IsMember({"findings", "inconclusive"}))
        ->delimiter(',');
  }

  int Run() {
    if (format == "html") {
      if (auto st = strata::CheckHtmlTarget(out); !st.ok()) {
        PrintError(st.message());
        return strata::cli::kExitUsage;
      }
    }
    strata::LoadedJob job;
    in.dumps_suffice = true;
    if (int rc = LoadOrFail(in, &job)) return rc;
    strata::diagnosis::DiagnoseOptions options;
    options.min_effect = min_effect_pct / 100.0;
    options.drawn_facts = format == "html";  // the page draws them (BuildReportView); text and JSON do not
    for (const auto& bad : job.unreadable) options.left_out.push_back({bad.path, bad.error, bad.status});
    const auto result = strata::diagnosis::Diagnose(job.store, options);
    const std::string text =
        format == "json" ? JsonText(strata::DiagnosisToJson(result))
        : format == "html"
            ? strata::RenderHtmlReport(strata::DiagnosisToJson(result), strata::BuildReportView(job.store, result))
            : strata::DiagnosisToText(result, strata::cli::TextWidth(out, width, strata::kDefaultTextWidth));
    if (auto st = strata::WriteOutput(out, text, job.files); !st.ok()) return Fail(st);
    return FailOnExit(fail_on, result.status);
  }
};

/// `strata inspect`: its options (bound by CLI11) and its run.
struct InspectCommand {
  std::vector<std::string> paths;
  std::string format = "text";
  size_t width = 0;
  uint64_t max_memory = 0;
  CLI::App* cmd = nullptr;

  void Add(CLI::App& app) {
    cmd = app.add_subcommand("inspect",
                             "summarize what a `strata record` segment file holds: processes and ranks, calls, GC "
                             "pauses, off-CPU time, counters, dropped events, and the per-rank metrics diagnose "
                             "compares");
    cmd->add_option("segment", paths,
                    "a .sseg file written by strata record, a folder (every .sseg under it), or - for standard "
                    "input")
        ->required();
    cmd->add_option("--format", format, "output format")->check(CLI::IsMember({"text", "json"}))->capture_default_str();
    strata::cli::AddWidthOption(cmd, width);
    AddMaxMemoryOption(cmd, max_memory);
  }

  int Run() {
    if (int rc = ApplyMaxMemory(max_memory)) return rc;
    return RunInspect(paths, format, width);
  }
};

int RunMain(int argc, char** argv) {
  strata::TuneAllocatorForLoading();
  CLI::App app{
      "strata: finds which worker of a distributed training job is slow, which operation, why, "
      "and what fixing it would save."};
  app.set_version_flag("--version", std::string("strata ") + STRATA_VERSION);
  app.require_subcommand(1);

  // Subcommands in the order --help lists them.
  SummaryCommand summary;
  summary.Add(app);
  DiagnoseCommand diagnose;
  diagnose.Add(app);
  CLI::App* diff = strata::cli::AddDiffCommand(app);
  CLI::App* record = strata::cli::AddRecordCommand(app);
  InspectCommand inspect;
  inspect.Add(app);
  CLI::App* synth = strata::cli::AddSynthCommand(app);
  CLI::App* agent = strata::cli::AddAgentCommand(app);
  CLI::App* serve = strata::cli::AddServeCommand(app);
  CommonInputOptions export_in;
  CLI::App* export_cmd = strata::cli::AddExportCommand(app);
  AddInputOptions(export_cmd, export_in);

  if (auto unknown = strata::cli::UnknownSubcommand(app, argc, argv)) {
    std::fprintf(stderr, "%s\n", strata::TerminalSafe(*unknown).c_str());
    return strata::cli::kExitUsage;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    PrintError(strata::cli::UsageErrorMessage(app, e, argc, argv));
    return strata::cli::kExitUsage;
  }

  if (record->parsed()) return strata::cli::RunRecordCommand();
  if (inspect.cmd->parsed()) return inspect.Run();
  if (diff->parsed()) return strata::cli::RunDiffCommand();
  if (synth->parsed()) return strata::cli::RunSynthCommand();
  if (agent->parsed()) return strata::cli::RunAgentCommand();
  if (serve->parsed()) return strata::cli::RunServeCommand();
  if (export_cmd->parsed()) {
    strata::LoadedJob job;
    if (int rc = LoadOrFail(export_in, &job)) return rc;
    return strata::cli::RunExportCommand(job);
  }
  if (summary.cmd->parsed()) return summary.Run();
  if (diagnose.cmd->parsed()) return diagnose.Run();
  return 0;
}

int main(int argc, char** argv) {
  try {
    return RunMain(argc, argv);
  } catch (const std::bad_alloc&) {
    // Imports name the file they were reading (job_loader); this is the analysis after them.
    PrintError(
        fmt::format("out of memory: the analysis needs more than {} (raise --max-memory, or give fewer "
                    "ranks or steps)",
                    strata::DescribeMemoryLimit()));
    return strata::cli::kExitError;
  } catch (const std::system_error& e) {
    // A thread that cannot start (its stack counts against --max-memory too).
    PrintError(fmt::format("{} (with {})", e.what(), strata::DescribeMemoryLimit()));
    return strata::cli::kExitError;
  }
}
