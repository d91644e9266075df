// `strata serve`: the loop around ServeCore (see serve.h).
#include "agent/serve.h"

#include <signal.h>
#include <time.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <thread>

#include <fmt/format.h>

#include "agent/http_front.h"
#include "agent/serve_core.h"

namespace strata::agent {
namespace {

std::atomic<bool> g_serve_stop{false};
void OnServeSignal(int) { g_serve_stop = true; }

double ServeUnixS() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

}  // namespace

Status RunServe(const ServeOptions& options) {
  auto say = [&](const std::string& line) {
    if (options.on_message) options.on_message(line);
  };
  auto address = ParseRedisUrl(options.redis);
  if (!address.ok()) return address.status();
  HttpFront http("strata serve");
  ServeCore core(address.value(), options.consumer, {}, options.lease);
  const auto publish = [&] {
    const AgentSnapshot s = core.Snapshot(ServeUnixS());
    http.Publish(StatusJson(s).dump(1, ' ', false, nlohmann::ordered_json::error_handler_t::replace), MetricsText(s));
    http.PublishNodes(NodesJson(s).dump(1, ' ', false, nlohmann::ordered_json::error_handler_t::replace));
  };
  publish();  // before the first poll (which may wait on Redis): the first answer is a status, with no job yet
  if (Status st = http.Start(options.listen); !st.ok()) return st;
  say(fmt::format("reading {}, listening on http://{}/", address.value().Text(), options.listen));
  struct sigaction action {};
  action.sa_handler = OnServeSignal;
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
  const auto started = std::chrono::steady_clock::now();
  double backoff_s = 0;
  while (!g_serve_stop) {
    auto polled = core.Poll(options.block_ms, ServeUnixS());
    publish();
    if (!polled.ok()) {
      if (backoff_s == 0) say(polled.error() + " (retrying)");
      backoff_s = backoff_s == 0 ? 0.2 : std::min(backoff_s * 2, 5.0);
      std::this_thread::sleep_for(std::chrono::duration<double>(backoff_s));
    } else {
      backoff_s = 0;
    }
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    if (options.run_s > 0 && elapsed >= options.run_s) break;
  }
  if (Status st = core.Release(); !st.ok()) say("leases not given up (they expire): " + st.message());
  http.Stop();
  return Status::Ok();
}

}  // namespace strata::agent
