// `strata agent`: the watch loop and its HTTP endpoints (see agent.h).
#include "agent/agent.h"

#include <httplib.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <thread>

#include <fmt/format.h>

#include "agent/discovery.h"
#include "agent/flight_recorder.h"
#include "agent/live_diagnosis.h"
#include "agent/status_render.h"

namespace strata::agent {
namespace {

std::atomic<bool> g_stop{false};
void OnSignal(int) { g_stop = true; }

uint64_t MonoNs() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

double UnixS() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

std::string SafeName(const std::string& job) {
  std::string out;
  for (char c : job) out += (std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.') ? c : '_';
  return out.empty() ? std::string("job") : out;
}

// The live page: the status, refreshed every second by the browser (no external resources).
constexpr const char* kPage = R"(<!doctype html><html><head><meta charset="utf-8"><title>strata agent</title>
<style>body{font:14px monospace;margin:1em}td,th{padding:2px 8px;text-align:left}.bad{color:#b00}</style></head>
<body><h3>strata agent</h3><div id="s">loading...</div><script>
async function tick(){try{const r=await fetch('/api/v1/status');const s=await r.json();let h='';
for(const j of s.jobs){h+=`<h4>job ${j.job}: ${j.status||'?'} (ranks ${j.ranks.join(', ')}, step ${j.step_time_median_ms||'?'} ms)</h4>`;
h+='<table><tr><th>rank</th><th>cause</th><th>detected</th><th>summary</th></tr>';
for(const f of j.findings){h+=`<tr class="bad"><td>${f.rank}</td><td>${f.cause}</td><td>${new Date(f.detected_at*1000).toLocaleTimeString()}</td><td>${f.summary}</td></tr>`;}
h+='</table>';}
document.getElementById('s').innerHTML=h||'no training job on this node';}catch(e){}}
setInterval(tick,1000);tick();</script></body></html>)";

class Agent {
 public:
  explicit Agent(const AgentOptions& o) : options_(o), live_(o.window_s) {}

  int Run() {
    std::error_code ec;
    std::filesystem::create_directories(options_.dir, ec);
    if (ec) {
      std::fprintf(stderr, "strata agent: cannot create %s: %s\n", options_.dir.c_str(), ec.message().c_str());
      return 2;
    }
    if (!options_.listen.empty() && !StartHttp()) return 2;
    struct sigaction action {};
    action.sa_handler = OnSignal;
    sigaction(SIGINT, &action, nullptr);
    sigaction(SIGTERM, &action, nullptr);
    const auto started = std::chrono::steady_clock::now();
    while (!g_stop) {
      Round();
      const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
      if (options_.run_s > 0 && elapsed >= options_.run_s) break;
      for (int i = 0; i < 10 && !g_stop; ++i)
        std::this_thread::sleep_for(std::chrono::duration<double>(options_.interval_s / 10));
    }
    for (auto& [job, f] : flights_) f->Stop();
    if (server_) server_->stop();
    if (http_.joinable()) http_.join();
    return 0;
  }

 private:
  bool StartHttp() {
    const size_t colon = options_.listen.rfind(':');
    const std::string host = colon == std::string::npos ? "127.0.0.1" : options_.listen.substr(0, colon);
    const int port = std::atoi(options_.listen.substr(colon == std::string::npos ? 0 : colon + 1).c_str());
    server_ = std::make_unique<httplib::Server>();
    server_->Get("/metrics", [this](const httplib::Request&, httplib::Response& res) {
      std::lock_guard<std::mutex> lock(mutex_);
      res.set_content(metrics_, "text/plain; version=0.0.4; charset=utf-8");
    });
    server_->Get("/api/v1/status", [this](const httplib::Request&, httplib::Response& res) {
      std::lock_guard<std::mutex> lock(mutex_);
      res.set_content(status_, "application/json");
    });
    server_->Get("/", [](const httplib::Request&, httplib::Response& res) { res.set_content(kPage, "text/html"); });
    if (port <= 0 || !server_->bind_to_port(host.c_str(), port)) {
      std::fprintf(stderr, "strata agent: cannot listen on %s\n", options_.listen.c_str());
      return false;
    }
    http_ = std::thread([this] { server_->listen_after_bind(); });
    if (!options_.quiet) std::fprintf(stderr, "strata agent: listening on http://%s/\n", options_.listen.c_str());
    return true;
  }

  void Round() {
    const auto jobs = discovery_.Scan();
    const double now_unix = UnixS();
    const double now_s = static_cast<double>(MonoNs()) / 1e9;
    for (const auto& [job, found] : jobs) {
      JobState& state = states_[job];
      if (state.job.empty() && !options_.quiet)
        std::fprintf(stderr, "strata agent: found job %s (%zu processes)\n", job.c_str(), found.rank_of_pid.size());
      state.job = job;
      state.rank_of_pid = found.rank_of_pid;
      auto& flight = flights_[job];
      if (!flight) {
        FlightOptions fo{self_, options_.rotate_s, options_.retain_s, options_.retain_mb, options_.sample_hz};
        flight = std::make_unique<FlightRecorder>((std::filesystem::path(options_.dir) / SafeName(job)).string(), fo);
      }
      std::set<int> pids;
      for (const auto& [pid, rank] : found.rank_of_pid) pids.insert(pid);
      flight->Update(pids, now_s);
      if (!flight->current_chunk().empty()) live_.Round(flight->current_chunk(), MonoNs(), now_unix, &state);
    }
    for (auto it = states_.begin(); it != states_.end();) {
      if (jobs.count(it->first)) {
        ++it;
        continue;
      }
      flights_[it->first]->Update({}, now_s);  // reaps the recorder that ended with the job
      if (now_unix - it->second.analysed_at > options_.retain_s) {
        flights_.erase(it->first);
        it = states_.erase(it);
      } else {
        it->second.rank_of_pid.clear();
        ++it;
      }
    }
    ++rounds_;
    Publish(now_unix);
  }

  void Publish(double now_unix) {
    AgentSnapshot s;
    char host[256] = {};
    gethostname(host, sizeof host - 1);
    s.host = host;
    s.now = now_unix;
    s.rounds = rounds_;
    for (const auto& [job, f] : flights_) s.recorder_restarts += f->restarts();
    for (const auto& [job, state] : states_) s.jobs.push_back(state);
    std::string status = StatusJson(s).dump(1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
    std::string metrics = MetricsText(s);
    std::lock_guard<std::mutex> lock(mutex_);
    status_ = std::move(status);
    metrics_ = std::move(metrics);
  }

  AgentOptions options_;
  std::string self_ = std::filesystem::read_symlink("/proc/self/exe").string();
  Discovery discovery_;
  LiveDiagnosis live_;
  std::map<std::string, JobState> states_;
  std::map<std::string, std::unique_ptr<FlightRecorder>> flights_;
  uint64_t rounds_ = 0;
  std::mutex mutex_;
  std::string status_ = "{}", metrics_;
  std::unique_ptr<httplib::Server> server_;
  std::thread http_;
};

}  // namespace

int RunAgent(const AgentOptions& options) { return Agent(options).Run(); }

}  // namespace strata::agent
