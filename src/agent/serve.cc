// `strata serve`: the loop around ServeCore (see serve.h).
#include "agent/serve.h"

#include <signal.h>
#include <time.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <thread>

#include "agent/http_front.h"
#include "agent/serve_core.h"

namespace strata::agent {
namespace {

std::atomic<bool> g_stop{false};
void OnSignal(int) { g_stop = true; }

double UnixS() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

}  // namespace

int RunServe(const ServeOptions& options) {
  auto address = ParseRedisUrl(options.redis);
  if (!address.ok()) {
    std::fprintf(stderr, "strata serve: %s\n", address.error().c_str());
    return 2;
  }
  HttpFront http("strata serve");
  if (Status st = http.Start(options.listen); !st.ok()) {
    std::fprintf(stderr, "strata serve: %s\n", st.message().c_str());
    return 2;
  }
  if (!options.quiet)
    std::fprintf(stderr, "strata serve: reading %s, listening on http://%s/\n", address.value().Text().c_str(),
                 options.listen.c_str());
  struct sigaction action {};
  action.sa_handler = OnSignal;
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
  ServeCore core(address.value(), options.consumer);
  const auto started = std::chrono::steady_clock::now();
  double backoff_s = 0;
  while (!g_stop) {
    auto polled = core.Poll(options.block_ms, UnixS());
    const AgentSnapshot s = core.Snapshot(UnixS());
    http.Publish(StatusJson(s).dump(1, ' ', false, nlohmann::ordered_json::error_handler_t::replace), MetricsText(s));
    if (!polled.ok()) {
      if (!options.quiet && backoff_s == 0)
        std::fprintf(stderr, "strata serve: %s (retrying)\n", polled.error().c_str());
      backoff_s = backoff_s == 0 ? 0.2 : std::min(backoff_s * 2, 5.0);
      std::this_thread::sleep_for(std::chrono::duration<double>(backoff_s));
    } else {
      backoff_s = 0;
    }
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    if (options.run_s > 0 && elapsed >= options.run_s) break;
  }
  http.Stop();
  return 0;
}

}  // namespace strata::agent
