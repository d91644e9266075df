// `strata serve` on the command line (see serve_command.h): options bound straight to agent::ServeOptions.
#include "cli/serve_command.h"

#include <unistd.h>

#include <cstdio>

#ifdef STRATA_HAVE_RECORDER
#include "agent/serve.h"
#endif
#include "cli/messages.h"
#include "cli/validators.h"

namespace strata::cli {
namespace {

#ifdef STRATA_HAVE_RECORDER
agent::ServeOptions& ServeArgs() {
  static agent::ServeOptions options = [] {
    agent::ServeOptions o;
    char host[256] = {};
    gethostname(host, sizeof host - 1);
    o.consumer.consumer = std::string("serve-") + host;
    return o;
  }();
  return options;
}

// --quiet: serve's messages (on_message) are not printed.
bool& ServeQuiet() {
  static bool quiet = false;
  return quiet;
}
#endif

}  // namespace

CLI::App* AddServeCommand(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand(
      "serve",
      "read every job's step summaries from Redis (published by `strata agent --redis`) in a consumer group, detect "
      "stragglers over whole jobs across nodes, serve /metrics and /api/v1/status for all jobs");
#ifdef STRATA_HAVE_RECORDER
  agent::ServeOptions& o = ServeArgs();
  cmd->add_option("--redis", o.redis,
                  "redis://[USER:PASSWORD@]HOST:PORT[,HOST:PORT...] (several seeds for a Redis Cluster)")
      ->required();
  cmd->add_option("--listen", o.listen, "HOST:PORT for HTTP (/metrics, /api/v1/status, / a live page)")
      ->capture_default_str();
  cmd->add_option("--group", o.consumer.group, "Redis consumer group (one per serve deployment)")
      ->capture_default_str();
  cmd->add_option("--consumer", o.consumer.consumer,
                  "consumer name in the group; a restarted serve reuses it to re-read what it had not acknowledged")
      ->capture_default_str();
  cmd->add_option("--claim-idle-s", o.consumer.claim_idle_s,
                  "take over entries other consumers left pending this long (a serve that died)")
      ->check(Finite() & CLI::Range(0.0, 1e7))
      ->capture_default_str();
  cmd->add_option("--lease-s", o.lease.lease_s,
                  "several serves share the jobs: a job's lease lasts this long unless its serve renews it; another "
                  "serve takes the job over within about 1.25 times this after its serve dies (names: --consumer)")
      ->check(Finite() & CLI::Range(0.2, 3600.0))
      ->capture_default_str();
  cmd->add_option("--run-s", o.run_s, "stop after this many seconds (default: until SIGINT/SIGTERM)")
      ->check(Finite() & CLI::Range(0.0, 1e9));
  cmd->add_flag("-q,--quiet", ServeQuiet(), "no progress messages");
#endif
  return cmd;
}

int RunServeCommand() {
#ifdef STRATA_HAVE_RECORDER
  agent::ServeOptions& o = ServeArgs();
  if (!ServeQuiet()) o.on_message = StderrMessages("serve");
  if (Status st = agent::RunServe(o); !st.ok()) return ReportError("serve", st.message());
  return 0;
#else
  std::fprintf(stderr, "strata serve: this strata was built without the agent (-DSTRATA_RECORDER=OFF)\n");
  return 2;
#endif
}

}  // namespace strata::cli
