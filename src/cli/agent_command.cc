// `strata agent` on the command line (see agent_command.h): options bound straight to agent::AgentOptions.
#include "cli/agent_command.h"

#include <cstdio>

#include "agent/agent.h"
#include "cli/messages.h"
#include "cli/validators.h"

namespace strata::cli {
namespace {

agent::AgentOptions& AgentArgs() {
  static agent::AgentOptions options;
  return options;
}

// --quiet: the agent's messages (on_message) are not printed.
bool& AgentQuiet() {
  static bool quiet = false;
  return quiet;
}

}  // namespace

CLI::App* AddAgentCommand(CLI::App& app) {
  agent::AgentOptions& o = AgentArgs();
  CLI::App* cmd = app.add_subcommand(
      "agent",
      "watch this node's training jobs until stopped (root): find ranked processes by their environment, keep a "
      "flight recorder on each job, diagnose the last seconds continuously, serve /metrics and /api/v1/status, and "
      "record a job in depth for a while when a rank is detected late (or on POST /api/v1/deep?job=ID&seconds=S)");
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
  cmd->add_option("--rotate-s", o.rotate_s,
                  "start a new flight-recorder chunk at least this often (held while the job may be stalled: a rank "
                  "long inside a collective)")
      ->check(Finite() & CLI::Range(5.0, 86400.0))
      ->capture_default_str();
  cmd->add_option("--retain-s", o.retain_s, "delete chunks that ended longer ago than this")
      ->check(Finite() & CLI::Range(10.0, 1e7))
      ->capture_default_str();
  cmd->add_option("--retain-mb", o.retain_mb, "keep at most this many MB of chunks per job")
      ->check(Finite() & CLI::Range(1.0, 1e7))
      ->capture_default_str();
  cmd->add_option("--sample-hz", o.sample_hz, "CPU stack samples per second per CPU")
      ->check(CLI::Range(0u, 999u))
      ->capture_default_str();
  cmd->add_option("--deep-s", o.deep_s,
                  "seconds of deep tracing a detection opens on its job (stacks at --deep-sample-hz, host counters "
                  "at 50 Hz, then back to the always-on rates; 0 = none; at most one window per 120 s from "
                  "detections; POST /api/v1/deep opens one by hand, 60 s unless it says)")
      ->check(Finite() & CLI::Range(0.0, 600.0))
      ->capture_default_str();
  cmd->add_option("--deep-sample-hz", o.deep_sample_hz, "CPU stack samples per second per CPU in a deep window")
      ->check(CLI::Range(1u, 999u))
      ->capture_default_str();
  cmd->add_option("--control-token", o.control_token,
                  "file whose first line is the token control requests (POST /api/v1/deep) must carry as "
                  "'Authorization: Bearer TOKEN'; without it they are answered from loopback only")
      ->check(CLI::ExistingFile);
  cmd->add_option("--redis", o.redis,
                  "redis://[USER:PASSWORD@]HOST:PORT[,HOST:PORT...]: also publish step summaries and findings to "
                  "the job's stream there (for `strata serve`); several seeds for a Redis Cluster");
  cmd->add_option("--redis-buffer", o.redis_buffer,
                  "stream entries kept while Redis is unreachable; older ones are dropped and counted")
      ->check(CLI::Range(size_t{1}, size_t{100000000}))
      ->capture_default_str();
  cmd->add_option("--redis-maxlen", o.redis_maxlen, "approximate cap of each job's stream (XADD MAXLEN ~)")
      ->check(CLI::Range(size_t{100}, size_t{1000000000}))
      ->capture_default_str();
  cmd->add_option("--run-s", o.run_s, "stop after this many seconds (default: until SIGINT/SIGTERM)")
      ->check(Finite() & CLI::Range(0.0, 1e9));
  cmd->add_option("--nice", o.nice,
                  "the agent's niceness, inherited by its flight recorders: it yields the CPU to the job's ranks "
                  "(0: as started)")
      ->check(CLI::Range(-20, 19))
      ->capture_default_str();
  cmd->add_flag("--same-netns", o.same_netns,
                "watch only training processes in the agent's own network namespace (one agent per container, or "
                "per emulated node on one host)");
  cmd->add_flag("-q,--quiet", AgentQuiet(), "no progress messages");
  return cmd;
}

int RunAgentCommand() {
#ifdef STRATA_HAVE_RECORDER
  agent::AgentOptions& o = AgentArgs();
  if (!AgentQuiet()) o.on_message = StderrMessages("agent");
  if (Status st = agent::RunAgent(o); !st.ok()) return ReportError("agent", st.message());
  return 0;
#else
  std::fprintf(stderr, "strata agent: this strata was built without the recorder (-DSTRATA_RECORDER=OFF)\n");
  return 2;
#endif
}

}  // namespace strata::cli
