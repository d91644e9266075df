// `strata record` command-line glue (see record_command.h).
#include "cli/record_command.h"

#include "cli/messages.h"
#include "cli/validators.h"

#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#ifdef STRATA_HAVE_RECORDER
#include "recorder/recorder.h"
#endif

namespace strata::cli {
namespace {

struct RecordCli {
  std::string out_dir = "strata-record";
  std::vector<int> pids;
  std::vector<std::string> command;
  unsigned sample_hz = 49;
  double counter_hz = 10;
  double link_hz = 50;
  unsigned max_buffer_mb = 64;
  bool no_probes = false;
  bool no_gc = false;
  bool no_follow = false;
  std::vector<std::string> libraries;
  std::vector<std::string> pythons;
  std::string nccl_plugin;
  bool no_nccl_plugin = false;
  bool quiet = false;
};

// Where the NCCL profiler plugin is installed: beside the strata binary (a build directory), or in
// ../lib/strata/ relative to it (an installed strata). Empty when neither exists.
std::string DefaultNcclPlugin() {
  std::error_code ec;
  const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) return "";
  for (const auto& candidate : {exe.parent_path() / "libstrata_nccl_profiler.so",
                                exe.parent_path() / "../lib/strata/libstrata_nccl_profiler.so"})
    if (std::filesystem::exists(candidate, ec)) return std::filesystem::weakly_canonical(candidate, ec).string();
  return "";
}

RecordCli& RecordArgs() {
  static RecordCli options;
  return options;
}

}  // namespace

CLI::App* AddRecordCommand(CLI::App& app) {
  RecordCli& o = RecordArgs();
  CLI::App* cmd = app.add_subcommand(
      "record",
      "record a training job with eBPF (scheduling, CPU stacks, collective and CUDA calls, Python GC) and host "
      "counters into DIR, for `strata diagnose DIR` (needs root). usage: strata record [-o DIR] [--pid PID ...] "
      "[-- CMD ARGS...]");
  cmd->footer(
      "Stopping: Ctrl-C reaches the command too; SIGINT or SIGTERM sent to strata alone is passed on to the "
      "command; either way strata waits up to 15 s for it to exit, then stops recording and says on stderr if it "
      "still runs. The probes are let go in the background after strata exits.");
  cmd->add_option("-o,--output", o.out_dir, "directory for the segment file (created if missing)")
      ->capture_default_str();
  // Repeatable options take one value per occurrence: as multi-value options (CLI11's default for a vector),
  // `--lib DIR -- sh -c CMD` took the `--` as the end of --lib's values and then read `-c` as strata's own
  // option ("The following argument was not expected: -c").
  cmd->add_option("--pid", o.pids,
                  "attach to this running process (repeatable); records until they all exit or "
                  "Ctrl-C")
      ->allow_extra_args(false);
  cmd->add_option("--sample-hz", o.sample_hz, "CPU stack samples per second per CPU (0 = off)")
      ->check(CLI::Range(0u, 999u))
      ->capture_default_str();
  cmd->add_option("--max-buffer-mb", o.max_buffer_mb,
                  "recording kept in memory while the disk is full (then the oldest is dropped, counted, and marked "
                  "in the file as a gap; strata exits 2 when anything was lost)")
      ->check(CLI::Range(0u, 65536u))
      ->capture_default_str();
  cmd->add_option("--counter-hz", o.counter_hz, "host counter samples per second (0 = off)")
      ->check(Finite() & CLI::Range(0.0, 100.0))
      ->capture_default_str();
  cmd->add_option("--link-hz", o.link_hz,
                  "network interface byte counters per second, between the host counter samples (0 or at most "
                  "--counter-hz = only with them): a link's traffic placed on short steps")
      ->check(Finite() & CLI::Range(0.0, 200.0))
      ->capture_default_str();
  cmd->add_flag("--no-probes", o.no_probes, "do not probe collective (c10d, gloo, NCCL) and CUDA runtime calls");
  cmd->add_flag("--no-gc", o.no_gc, "do not probe Python garbage collection");
  cmd->add_flag("--no-follow", o.no_follow, "do not follow processes started by the traced ones");
  cmd->add_option("--lib", o.libraries,
                  "extra library file or directory to search for probe points (libtorch_cpu, libgloo, libnccl, "
                  "libcudart; the ldconfig cache is always searched; repeatable)")
      ->allow_extra_args(false);
  cmd->add_option("--python", o.pythons,
                  "extra python executable whose GC probes to attach (default: "
                  "/usr/bin/python3 and the attached processes' executables; repeatable)")
      ->allow_extra_args(false);
  cmd->add_option("--nccl-plugin", o.nccl_plugin,
                  "NCCL profiler plugin offered to the command (NCCL_PROFILER_PLUGIN) for collective times on the "
                  "GPU (default: libstrata_nccl_profiler.so installed with strata)")
      ->check(CLI::ExistingFile);
  cmd->add_flag("--no-nccl-plugin", o.no_nccl_plugin, "do not offer the NCCL profiler plugin to the command");
  cmd->add_flag("-q,--quiet", o.quiet, "no progress messages");
  cmd->add_option("command", o.command, "the command to run and record (after --)");
  return cmd;
}

int RunRecordCommand() {
#ifdef STRATA_HAVE_RECORDER
  const RecordCli& o = RecordArgs();
  recorder::RecordOptions options;
  options.out_dir = o.out_dir;
  options.pids = o.pids;
  options.command = o.command;
  options.sample_hz = o.sample_hz;
  options.counter_hz = o.counter_hz;
  options.link_hz = o.link_hz;
  options.max_buffer_mb = o.max_buffer_mb;
  options.probes = !o.no_probes;
  options.python_gc = !o.no_gc;
  options.follow_children = !o.no_follow;
  options.libraries = o.libraries;
  options.pythons = o.pythons;
  if (!o.quiet) options.on_message = StderrMessages("record");
  if (!o.no_nccl_plugin) options.nccl_plugin = o.nccl_plugin.empty() ? DefaultNcclPlugin() : o.nccl_plugin;
  auto recorded = recorder::Record(options);
  if (!recorded.ok()) return ReportError("record", recorded.error());
  return recorded.value();
#else
  std::fprintf(stderr, "strata record: this strata was built without the recorder (-DSTRATA_RECORDER=OFF)\n");
  return 2;
#endif
}

}  // namespace strata::cli
