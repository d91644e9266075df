// `strata serve`: the many-node side of issue 13. Consumes every job's step-summary stream from Redis in a
// consumer group (serve_core.h), runs the online detection over each whole job, and serves the same HTTP
// API as the agent (http_front.h) for all jobs. Runs until SIGINT/SIGTERM (or run_s); when Redis is
// unreachable it keeps serving the last state and retries with backoff.
// On a detection it asks the suspects' agents for their flight-recorder windows (serve_core.h).
#pragma once

#include <string>

#include "agent/serve_consumer.h"

namespace strata::agent {

struct ServeOptions {
  std::string redis;                      // redis://HOST:PORT
  std::string listen = "127.0.0.1:9465";  // HOST:PORT for HTTP
  ConsumerOptions consumer;
  int block_ms = 200;
  double run_s = 0;  // stop after this long (0 = until signalled)
  bool quiet = false;
};

/// Runs serve; returns the exit code (0 stopped, 2 cannot start).
int RunServe(const ServeOptions& options);

}  // namespace strata::agent
