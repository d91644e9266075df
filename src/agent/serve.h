// `strata serve`: the many-node side of issue 13. Consumes every job's step-summary stream from Redis in a
// consumer group (serve_core.h), runs the online detection over each whole job, and serves the same HTTP
// API as the agent (http_front.h) for all jobs. Runs until SIGINT/SIGTERM (or run_s); when Redis is
// unreachable it keeps serving the last state and retries with backoff.
// On a detection it asks the suspects' agents for their flight-recorder windows (serve_core.h).
#pragma once

#include <functional>
#include <string>

#include "core/status.h"

#include "agent/job_lease.h"
#include "agent/stream_consumer.h"

namespace strata::agent {

struct ServeOptions {
  std::string redis;                      // redis://HOST:PORT
  std::string listen = "127.0.0.1:9465";  // HOST:PORT for HTTP
  ConsumerOptions consumer;
  LeaseOptions lease;  // several serves share the jobs: each judges the jobs whose lease it holds (job_lease.h)
  int block_ms = 200;
  double run_s = 0;  // stop after this long (0 = until signalled)
  // What serve has to say while it runs (listening, Redis unreachable): one line each; the CLI prints them
  // unless --quiet. Unset: nothing is said.
  std::function<void(const std::string&)> on_message;
};

/// Runs serve until a signal or run_s; an error when it cannot start (Redis URL, HTTP address).
Status RunServe(const ServeOptions& options);

}  // namespace strata::agent
