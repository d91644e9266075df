// `strata agent` on the command line (see agent_command.h).
#include "cli/agent_command.h"

#include <cstdio>

#include "cli/validators.h"

#ifdef STRATA_HAVE_RECORDER
#include "agent/agent.h"
#endif

namespace strata::cli {
namespace {

struct AgentCli {
  std::string listen = "127.0.0.1:9464";
  std::string dir = "/var/lib/strata/flight";
  double interval_s = 1, window_s = 15, rotate_s = 300, retain_s = 900, retain_mb = 2048, run_s = 0;
  unsigned sample_hz = 49;
  bool quiet = false;
};

AgentCli& Options() {
  static AgentCli options;
  return options;
}

}  // namespace

CLI::App* AddAgentCommand(CLI::App& app) {
  AgentCli& o = Options();
  CLI::App* cmd = app.add_subcommand(
      "agent",
      "watch this node's training jobs until stopped (root): find ranked processes by their environment, keep a "
      "flight recorder on each job, diagnose the last seconds continuously, serve /metrics and /api/v1/status");
  cmd->add_option("--listen", o.listen, "HOST:PORT for HTTP (/metrics, /api/v1/status, / a live page); '' = none")
      ->capture_default_str();
  cmd->add_option("--dir", o.dir, "flight-recorder directory (one folder per job, rotating chunks)")
      ->capture_default_str();
  cmd->add_option("--interval-s", o.interval_s, "seconds between analysis rounds")
      ->check(Finite() & CLI::Range(0.1, 3600.0))
      ->capture_default_str();
  cmd->add_option("--window-s", o.window_s, "seconds of recording each round diagnoses")
      ->check(Finite() & CLI::Range(1.0, 3600.0))
      ->capture_default_str();
  cmd->add_option("--rotate-s", o.rotate_s, "start a new flight-recorder chunk at least this often")
      ->check(Finite() & CLI::Range(5.0, 86400.0))
      ->capture_default_str();
  cmd->add_option("--retain-s", o.retain_s, "delete chunks that ended longer ago than this")
      ->check(Finite() & CLI::Range(10.0, 1e7))
      ->capture_default_str();
  cmd->add_option("--retain-mb", o.retain_mb, "keep at most this many MB of chunks per job")
      ->check(Finite() & CLI::Range(1.0, 1e7))
      ->capture_default_str();
  cmd->add_option("--sample-hz", o.sample_hz, "CPU stack samples per second per CPU")
      ->check(CLI::Range(0u, 1000u))
      ->capture_default_str();
  cmd->add_option("--run-s", o.run_s, "stop after this many seconds (default: until SIGINT/SIGTERM)")
      ->check(Finite() & CLI::Range(0.0, 1e9));
  cmd->add_flag("-q,--quiet", o.quiet, "no progress messages");
  return cmd;
}

int RunAgentCommand() {
#ifdef STRATA_HAVE_RECORDER
  const AgentCli& o = Options();
  agent::AgentOptions options;
  options.listen = o.listen;
  options.dir = o.dir;
  options.interval_s = o.interval_s;
  options.window_s = o.window_s;
  options.rotate_s = o.rotate_s;
  options.retain_s = o.retain_s;
  options.retain_mb = o.retain_mb;
  options.sample_hz = o.sample_hz;
  options.run_s = o.run_s;
  options.quiet = o.quiet;
  return agent::RunAgent(options);
#else
  std::fprintf(stderr, "strata agent: this strata was built without the recorder (-DSTRATA_RECORDER=OFF)\n");
  return 2;
#endif
}

}  // namespace strata::cli
