// `strata agent`: one per node, runs until stopped (SIGINT/SIGTERM). Every `interval_s` it finds the
// training processes on the node (discovery.h), keeps a flight recorder on each job (flight_recorder.h),
// re-diagnoses the last `window_s` of each job's recording (live_diagnosis.h) and publishes the result over
// HTTP on `listen` (status_render.h: /metrics, /api/v1/status, and / a live page). With `redis`, the step
// summaries and findings also go to the job's Redis stream (stream_publisher.h) for `strata serve`. A detection,
// or POST /api/v1/deep, opens a deep-tracing window on the job (deep_tracing.h).
// Invariants: a job's state outlives a failed round (the error is published); jobs whose processes are
// gone are published as ended for `retain_s`, then dropped; stopping the agent stops its recorders.
#pragma once

#include <cstddef>
#include <functional>
#include <string>

#include "core/status.h"

namespace strata::agent {

struct AgentOptions {
  std::string listen = "127.0.0.1:9464";  // HOST:PORT for HTTP; empty = none
  std::string dir = "/var/lib/strata/flight";
  double interval_s = 1.0;
  double window_s = 15.0;
  double rotate_s = 300;
  double retain_s = 900;
  double retain_mb = 2048;
  unsigned sample_hz = 49;
  // Deep tracing (deep_tracing.h): the seconds of deep recording a detection opens (0: detections open none;
  // POST /api/v1/deep still does), the stack-sampling rate in a window, and the token file control requests
  // must carry ("" : control requests are answered from loopback only). A detection in the first seconds of a
  // hang switches chunks, and a recorder attached after the stuck rank went to sleep saw no switch of it (CI's
  // recorder_hangs live_data_read failed once so on 2026-11-28, "rank 1 is not observed", and detections
  // opened none by default for a while); a recorder now writes such a rank's state from /proc
  // (recorder/sleep_watch.h).
  double deep_s = 60;
  double deep_request_s = 60;  // a POST without `seconds`
  unsigned deep_sample_hz = 499;
  std::string control_token;
  std::string redis;             // redis://HOST:PORT: publish step summaries and findings there ("" = none)
  size_t redis_buffer = 10000;   // entries kept while Redis is unreachable (older ones are dropped, counted)
  size_t redis_maxlen = 100000;  // approximate cap of each job's stream
  double run_s = 0;              // stop after this long (0 = until signalled; for tests)
  bool same_netns = false;       // watch only processes in the agent's own network namespace
  // The agent's niceness (its threads and its flight recorders inherit it): it yields the CPU to the job,
  // whose ranks may hold every core (2 ranks on 2 cores: at nice 0 its rounds cost the job's steps about 4 %,
  // at 19 nothing measurable, docs/benchmarks.md). 0 leaves it as started.
  int nice = 19;
  // What the agent has to say while it runs (listening, a job found, a detection): one line each; the
  // CLI prints them unless --quiet. Unset: nothing is said.
  std::function<void(const std::string&)> on_message;
};

/// Runs the agent until a signal or run_s; an error when it cannot start (directory, Redis URL, HTTP address).
Status RunAgent(const AgentOptions& options);

}  // namespace strata::agent
