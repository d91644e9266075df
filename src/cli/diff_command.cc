// `strata diff` command-line glue (see diff_command.h).
#include "cli/diff_command.h"

#include <fmt/format.h>

#include <cstdio>
#include <string>
#include <vector>

#include "analysis/diff/run_diff.h"
#include "cli/exit_codes.h"
#include "cli/output.h"
#include "cli/terminal_width.h"
#include "core/text_escape.h"
#include "importers/job_loader.h"
#include "reports/diff_report.h"

namespace strata::cli {

namespace {

struct DiffCommandOptions {
  std::string base;
  std::string test;
  std::vector<int32_t> base_ranks, test_ranks;
  std::vector<int64_t> base_steps, test_steps;
  bool all_ranks = false;
  bool all_steps = false;
  std::string device = "all";
  std::string format = "text";
  std::string out;
  size_t top = 20;
  size_t width = 0;  // --width; 0: COLUMNS, the terminal's or the default (cli/terminal_width.h)
  unsigned threads = 0;
};

DiffCommandOptions& DiffArgs() {
  static DiffCommandOptions options;
  return options;
}

/// Prints an error and returns the exit code of its kind (cli/exit_codes.h).
int DiffFail(const Status& error) {
  std::fprintf(stderr, "strata: %s\n", TerminalSafe(error.message()).c_str());
  return ExitCodeFor(error.kind());
}

void AddSelectionOptions(CLI::App* cmd, DiffCommandOptions& o) {
  auto* base_rank = cmd->add_option("--base-rank", o.base_ranks,
                                    "rank of BASE to compare (repeatable; default: its smallest rank, as HTA)");
  auto* test_rank =
      cmd->add_option("--test-rank", o.test_ranks, "rank of TEST to compare (repeatable; default: its smallest rank)");
  auto* base_step =
      cmd->add_option("--base-step", o.base_steps,
                      "ProfilerStep#N of BASE to compare (repeatable; default: its first step, as HTA; without "
                      "ProfilerSteps, e.g. a recording, the steps found from the collective calls)");
  auto* test_step = cmd->add_option("--test-step", o.test_steps,
                                    "ProfilerStep#N of TEST to compare (repeatable; default: its first step)");
  cmd->add_flag("--all-ranks", o.all_ranks, "compare every rank of each run (counts and times summed over ranks)")
      ->excludes(base_rank)
      ->excludes(test_rank);
  cmd->add_flag("--all-steps", o.all_steps, "compare every ProfilerStep of each run (summed over steps)")
      ->excludes(base_step)
      ->excludes(test_step);
  cmd->add_option("--device", o.device,
                  "rows compared: all, cpu (no stream) or gpu (on a stream), as HTA's device_type")
      ->check(CLI::IsMember({"all", "cpu", "gpu"}))
      ->capture_default_str();
}

std::string Render(const DiffSides& sides, const diff::RunDiff& result, const DiffCommandOptions& o) {
  if (o.format == "json")
    return DiffToJson(sides, result).dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
  if (o.format == "html") return DiffToHtml(sides, result, o.top);
  return DiffToText(sides, result, o.top, TextWidth(o.out, o.width, kDefaultTextWidth));
}

}  // namespace

CLI::App* AddDiffCommand(CLI::App& app) {
  DiffCommandOptions& o = DiffArgs();
  CLI::App* cmd = app.add_subcommand(
      "diff",
      "what changed between two runs: step time before -> after and, per op/kernel name, counts and total time "
      "of each run and their differences (HTA's TraceDiff.compare_traces: by default the first rank and first "
      "ProfilerStep of each run), grouped by kind; names new and gone");
  cmd->add_option("BASE", o.base,
                  "the run compared against: a trace file, a folder of one run's traces, or a `strata record` "
                  "recording (.sseg or its folder)")
      ->required();
  cmd->add_option("TEST", o.test, "the run whose changes are shown: a trace file, a folder or a recording")->required();
  AddSelectionOptions(cmd, o);
  cmd->add_option("--format", o.format, "output format (html needs -o FILE)")
      ->check(CLI::IsMember({"text", "json", "html"}))
      ->capture_default_str();
  cmd->add_option("-o,--output", o.out, "write to FILE instead of standard output");
  AddWidthOption(cmd, o.width);
  cmd->add_option("--top", o.top, "names listed in text and html (json lists every name)")
      ->check(CLI::Range(size_t{1}, size_t{100000}))
      ->capture_default_str();
  cmd->add_option("--threads", o.threads, "files parsed at once (default: all cores)")->check(CLI::Range(0u, 4096u));
  return cmd;
}

int RunDiffCommand() {
  DiffCommandOptions& o = DiffArgs();
  if (o.format == "html")
    if (Status st = CheckHtmlTarget(o.out); !st.ok()) return DiffFail(st);
  auto base_job = LoadComparedRun("BASE", o.base, o.threads);
  if (!base_job.ok()) return DiffFail(base_job.status());
  auto test_job = LoadComparedRun("TEST", o.test, o.threads);
  if (!test_job.ok()) return DiffFail(test_job.status());
  const TraceStore& base = base_job.value().store;
  const TraceStore& test = test_job.value().store;
  auto base_rows = diff::ReadRun(base, "BASE " + o.base);
  if (!base_rows.ok()) return DiffFail(base_rows.status());
  auto test_rows = diff::ReadRun(test, "TEST " + o.test);
  if (!test_rows.ok()) return DiffFail(test_rows.status());
  const diff::DiffOptions options =
      diff::NamedDiffOptions(o.base_ranks, o.base_steps, o.test_ranks, o.test_steps, o.all_ranks, o.all_steps,
                             diff::ParseDeviceFilter(o.device).value_or(diff::DeviceFilter::kAll));
  auto result = diff::DiffRuns(base, base_rows.value(), test, test_rows.value(), options);
  if (!result.ok()) return DiffFail(result.status());
  std::vector<std::string> inputs = base_job.value().files;
  inputs.insert(inputs.end(), test_job.value().files.begin(), test_job.value().files.end());
  const DiffSides sides{base, test, o.base, o.test};
  if (Status st = WriteOutput(o.out, Render(sides, result.value(), o), inputs); !st.ok()) return DiffFail(st);
  return 0;
}

}  // namespace strata::cli
