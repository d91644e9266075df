// `strata synth` command-line glue (see synth_command.h).
#include "cli/synth_command.h"

#include "cli/exit_codes.h"
#include "cli/validators.h"

#include <cstdio>
#include <string>

#include "synth/generator.h"

namespace strata::cli {

namespace {

synth::SynthOptions& SynthArgs() {
  static synth::SynthOptions options;
  return options;
}

struct ProgressFlags {
  bool on = false, off = false;
};

ProgressFlags& Progress() {
  static ProgressFlags flags;
  return flags;
}

}  // namespace

CLI::App* AddSynthCommand(CLI::App& app) {
  synth::SynthOptions& o = SynthArgs();
  CLI::App* cmd = app.add_subcommand(
      "synth",
      "write a deterministic synthetic multi-rank Kineto trace set of GPU training (DP x PP x TP) with an "
      "injected fault and its ground truth (DIR/rank-<r>.json and DIR/truth.json)");
  cmd->add_option("-o,--output", o.out_dir, "output directory (created if missing)")->required();
  cmd->add_option("--ranks", o.ranks, "world size, 2 to 100000")->capture_default_str();
  cmd->add_option("--dp", o.dp, "data-parallel size (default: ranks / (pp * tp))");
  cmd->add_option("--pp", o.pp, "pipeline stages (default 1)");
  cmd->add_option("--tp", o.tp, "tensor-parallel size (default 1)");
  cmd->add_option("--steps", o.steps, "profiled steps (ProfilerStep#N from --first-step)")->capture_default_str();
  cmd->add_option("--first-step", o.first_step, "number of the first ProfilerStep")->capture_default_str();
  cmd->add_option("--layers", o.layers, "transformer layers, split across the stages")->capture_default_str();
  cmd->add_option("--microbatches", o.microbatches, "microbatches per step (default: 2 * pp with a pipeline, else 1)");
  cmd->add_option("--fault", o.fault.name, "injected fault: " + synth::FaultNames())->capture_default_str();
  cmd->add_option("--fault-rank", o.fault.rank, "rank of a rank-level fault (default: drawn from the seed)");
  cmd->add_option("--fault-stage", o.fault.stage, "stage of stage_imbalance (default: the last stage)");
  cmd->add_option("--fault-steps", o.fault.steps, "comma-separated ProfilerStep numbers affected (default: all)");
  cmd->add_option("--every", o.fault.every, "affect only the steps whose number is a multiple of K (intermittent)");
  cmd->add_option("--magnitude", o.fault.magnitude, "extra time per affected step, as a fraction of a clean step")
      ->check(Finite() & CLI::Range(0.0, 100.0))
      ->capture_default_str();
  cmd->add_option("--seed", o.seed, "random seed: the same seed gives byte-identical files")->capture_default_str();
  cmd->add_flag("--counters", o.counters,
                "add host counter tracks (cpu_util_pct, nic_bytes_per_s, pcie_bytes_per_s, gpu_sm_clock_mhz)");
  cmd->add_option("--clock-skew-us", o.clock_skew_us, "largest per-rank clock offset, in µs")
      ->check(Finite() & CLI::Range(0.0, 1e9))
      ->capture_default_str();
  cmd->add_flag("--gzip", o.gzip, "write rank-<r>.json.gz");
  cmd->add_flag("--progress", Progress().on, "report progress on stderr (default: for jobs of 512 ranks or more)");
  cmd->add_flag("--no-progress", Progress().off, "never report progress");
  return cmd;
}

int RunSynthCommand() {
  synth::SynthOptions& o = SynthArgs();
  o.progress = Progress().off ? 0 : Progress().on ? 1 : -1;
  o.on_progress = [](const std::string& line) { std::fprintf(stderr, "strata synth: %s\n", line.c_str()); };
  synth::JobConfig cfg;
  if (Status error = synth::Validate(o, &cfg); !error.ok()) {
    std::fprintf(stderr, "strata synth: %s\n", error.message().c_str());
    return 2;
  }
  synth::GenerateStats stats;
  if (Status error = synth::Generate(o, &stats); !error.ok()) {
    std::fprintf(stderr, "strata synth: %s\n", error.message().c_str());
    return ExitCodeFor(error.kind());
  }
  std::fprintf(stderr, "strata synth: wrote %lld ranks (%llu events, %.1f MB) and truth.json to %s\n",
               static_cast<long long>(stats.ranks_written), static_cast<unsigned long long>(stats.events),
               static_cast<double>(stats.bytes) / 1e6, o.out_dir.c_str());
  return 0;
}

}  // namespace strata::cli
