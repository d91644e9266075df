// `strata export` command-line glue (see export_command.h).
#include "cli/export_command.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>
#include <set>
#include <string>
#include <string_view>

#include "analysis/diagnosis/diagnose.h"
#include "analysis/diagnosis/thresholds.h"
#include "cli/exit_codes.h"
#include "cli/output.h"
#include "cli/validators.h"
#include "core/text_escape.h"
#include "reports/perfetto_export.h"
#include "reports/pprof_export.h"

namespace strata::cli {

namespace {

struct ExportOptions {
  std::string format = "perfetto";
  std::string out;
  double min_effect_pct = 100.0 * diagnosis::thresholds::kMinEffect;
  // --format pprof only
  int rank = -1;  // -1: every rank (or, with --diff-straggler, the diagnosis' straggler)
  bool diff_straggler = false;
  std::string peers_out;
  std::string job;
};

ExportOptions& ExportArgs() {
  static ExportOptions options;
  return options;
}

/// Prints an error and returns the exit code of its kind (cli/exit_codes.h).
int ExportFail(const Status& st) {
  std::fprintf(stderr, "strata: %s\n", TerminalSafe(st.message()).c_str());
  return ExitCodeFor(st.kind());
}

std::string InputNames(const LoadedJob& job) {
  std::string names;
  for (const auto& in : job.store.inputs) names += (names.empty() ? "" : ", ") + in.path;
  return names;
}

std::string RankList(const std::set<int32_t>& ranks) {
  std::string list;
  for (int32_t r : ranks) list += (list.empty() ? "" : ", ") + std::to_string(r);
  return list.empty() ? std::string("none") : list;
}

// Usage errors of the pprof options, before anything is computed: the options of another format, a binary
// profile to a terminal, a rank without samples. Returns the exit code (0: fine).
int CheckPprofUsage(const ExportOptions& o, const LoadedJob& job) {
  if (o.out == "-" && ::isatty(STDOUT_FILENO))
    return ExportFail(
        Status::Usage("--format pprof -o -: standard output is a terminal; give a file, e.g. -o cpu.pb.gz"));
  if (o.diff_straggler && o.peers_out == o.out)
    return ExportFail(Status::Usage("--peers-output names the same file as -o: give two files"));
  const std::set<int32_t> ranks = RanksWithSamples(job.recorded);
  if (o.rank >= 0 && !ranks.empty() && !ranks.count(o.rank))
    return ExportFail(
        Status::Usage(fmt::format("--rank {}: the recording has no CPU stack samples of rank {} (ranks "
                                  "sampled: {})",
                                  o.rank, o.rank, RankList(ranks))));
  return 0;
}

// The rank the diagnosis names as the job's straggler (its first), or an error saying to name one.
Expected<int32_t> DiagnosedStraggler(LoadedJob& job) {
  const diagnosis::DiagnosisResult result = diagnosis::Diagnose(job.store, {});
  if (result.stragglers.empty())
    return Status::Usage(
        fmt::format("{}: the diagnosis names no straggler to compare with its peers; name the "
                    "rank with --rank N",
                    InputNames(job)));
  return result.stragglers.front().rank.value();
}

// --diff-straggler: the straggler's profile to -o, its peers' median to --peers-output.
int RunPprofDiff(const ExportOptions& o, LoadedJob& job) {
  Expected<int32_t> straggler = o.rank >= 0 ? Expected<int32_t>(o.rank) : DiagnosedStraggler(job);
  if (!straggler.ok()) return ExportFail(straggler.status());
  PprofOptions options;
  options.job = o.job;
  options.rank = straggler.value();
  const Expected<std::string> mine = PprofProfile(job.recorded, options);
  if (!mine.ok()) return ExportFail(mine.status());
  const Expected<std::string> peers = PprofPeersMedian(job.recorded, straggler.value(), o.job);
  if (!peers.ok()) return ExportFail(peers.status());
  Status st = WriteOutput(o.out, mine.value(), job.files);
  if (st.ok()) st = WriteOutput(o.peers_out, peers.value(), job.files);
  if (!st.ok()) return ExportFail(st);
  std::fprintf(stderr, "strata: rank %d against its peers' median: go tool pprof -diff_base %s %s\n", straggler.value(),
               TerminalSafe(o.peers_out).c_str(), TerminalSafe(o.out).c_str());
  return 0;
}

int RunPprofExport(LoadedJob& job) {
  const ExportOptions& o = ExportArgs();
  if (job.recorded.empty())
    return ExportFail(
        Status::Unsupported(fmt::format("{}: --format pprof writes the CPU stack samples of a `strata record` "
                                        "recording (*.sseg), and these inputs hold none (profiler traces "
                                        "have no stack samples)",
                                        InputNames(job))));
  if (int rc = CheckPprofUsage(o, job)) return rc;
  if (o.diff_straggler) return RunPprofDiff(o, job);
  PprofOptions options;
  options.job = o.job;
  if (o.rank >= 0) options.rank = o.rank;
  const Expected<std::string> profile = PprofProfile(job.recorded, options);
  if (!profile.ok()) return ExportFail(profile.status());
  if (Status st = WriteOutput(o.out, profile.value(), job.files); !st.ok()) return ExportFail(st);
  return 0;
}

// Options of --format pprof given with another format: a usage error naming the first.
int CheckFormatOptions(const CLI::App& cmd) {
  if (ExportArgs().format == "pprof") return 0;
  for (const char* name : {"--rank", "--diff-straggler", "--peers-output", "--job"})
    if (cmd.count(name) > 0) return ExportFail(Status::Usage(fmt::format("{} applies to --format pprof only", name)));
  return 0;
}

CLI::App* g_export = nullptr;

}  // namespace

CLI::App* AddExportCommand(CLI::App& app) {
  ExportOptions& o = ExportArgs();
  CLI::App* cmd = app.add_subcommand(
      "export",
      "perfetto (default): write all ranks of a job on one clock-aligned timeline (Chrome trace-event JSON that "
      "ui.perfetto.dev and chrome://tracing open): a process per rank, threads and GPU streams as in the "
      "traces, the recorder's layers beside them, the diagnosis' findings as instant events and its blame edges "
      "as flow arrows. pprof: the CPU stack samples of a `strata record` recording as a gzip'd profile.proto "
      "(go tool pprof, Pyroscope, Parca): native and Python frames with file:line, labels job, rank, pid, tid");
  cmd->add_option("--format", o.format, "output format")
      ->check(CLI::IsMember({"perfetto", "pprof"}))
      ->capture_default_str();
  cmd->add_option("-o,--output", o.out, "FILE to write (replaced atomically), or - for standard output")->required();
  cmd->add_option("--min-effect", o.min_effect_pct, "perfetto: smallest effect of a finding drawn, in % of step time")
      ->check(Finite() & CLI::Range(0.0, 100.0))
      ->capture_default_str();
  cmd->add_option("--rank", o.rank,
                  "pprof: only rank N's samples (default: every rank, told apart by the `rank` label); with "
                  "--diff-straggler, the rank compared with its peers")
      ->check(CLI::Range(0, 1 << 30));
  CLI::Option* diff = cmd->add_flag("--diff-straggler", o.diff_straggler,
                                    "pprof: write the straggler's profile to -o and its peers' median (per stack, "
                                    "the median of the other ranks' samples) to --peers-output, for `go tool pprof "
                                    "-diff_base PEERS STRAGGLER`; the straggler is --rank, else the diagnosis' "
                                    "first straggler");
  CLI::Option* peers = cmd->add_option("--peers-output", o.peers_out, "pprof: FILE for the peers' median");
  diff->needs(peers);
  peers->needs(diff);
  cmd->add_option("--job", o.job, "pprof: the `job` label (default: the folder holding the recording)");
  g_export = cmd;
  return cmd;
}

int RunExportCommand(LoadedJob& job) {
  const ExportOptions& o = ExportArgs();
  if (g_export != nullptr)
    if (int rc = CheckFormatOptions(*g_export)) return rc;
  if (o.format == "pprof") return RunPprofExport(job);
  diagnosis::DiagnoseOptions options;
  options.min_effect = o.min_effect_pct / 100.0;
  options.drawn_facts = true;  // the timeline draws them (blame arrows from the latest arrivals)
  for (const auto& bad : job.unreadable) options.left_out.push_back({bad.path, bad.error, bad.status});
  const diagnosis::DiagnosisResult result = diagnosis::Diagnose(job.store, options);
  // Written as it is made: the output of a large job is hundreds of MB, held nowhere in memory.
  OutputFile out;
  Status st = out.Open(o.out, job.files);
  if (st.ok())
    st =
        WritePerfettoJson(job.store, job.recorded, result, [&out](std::string_view bytes) { return out.Write(bytes); });
  if (st.ok()) st = out.Commit();
  return st.ok() ? 0 : ExportFail(st);
}

}  // namespace strata::cli
