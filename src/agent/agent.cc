// `strata agent`: the watch loop and its HTTP endpoints (see agent.h).
#include "agent/agent.h"

#include <signal.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <thread>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "agent/deep_tracing.h"
#include "agent/discovery.h"
#include "agent/flight_recorder.h"
#include "agent/http_front.h"
#include "agent/live_diagnosis.h"
#include "agent/online_job.h"
#include "agent/request_listener.h"
#include "agent/status_render.h"
#include "agent/stream_publisher.h"

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

// The longest of the node's ranks' latest steps (s; 0 before any was summarized): the flight recorder's
// handover is counted in the job's steps.
double LatestStepS(const JobState& state) {
  double step_s = 0;
  if (state.online)
    for (const auto& [rank, s] : state.online->last_summary) step_s = std::max(step_s, s.step_s);
  return step_s;
}

std::string SafeName(const std::string& job) {
  std::string out;
  for (char c : job) out += (std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.') ? c : '_';
  return out.empty() ? std::string("job") : out;
}

class Agent {
 public:
  explicit Agent(const AgentOptions& o) : options_(o), live_(o.window_s) {}

  Status Run() {
    // Before any thread or recorder starts: they inherit it (Linux's niceness is per thread).
    if (options_.nice != 0 && setpriority(PRIO_PROCESS, 0, options_.nice) != 0)
      return Status::Resource(fmt::format("--nice {}: {}", options_.nice, std::strerror(errno)));
    std::error_code ec;
    std::filesystem::create_directories(options_.dir, ec);
    if (ec) return Status::Resource(fmt::format("cannot create {}: {}", options_.dir, ec.message()));
    if (options_.same_netns) {
      const uint64_t netns = NetworkNamespaceOf("/proc", "self");
      if (netns == 0) return Status::Resource("--same-netns: cannot read /proc/self/ns/net");
      discovery_.OnlyNetworkNamespace(netns);
    }
    if (Status st = StartPublisher(); !st.ok()) return st;
    if (Status st = SetUpControl(); !st.ok()) return st;
    if (!options_.listen.empty())
      if (Status st = StartHttp(); !st.ok()) return st;
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
    if (publisher_) publisher_->Flush(static_cast<double>(MonoNs()) / 1e9);
    http_.Stop();
    return Status::Ok();
  }

 private:
  void Say(const std::string& line) const {
    if (options_.on_message) options_.on_message(line);
  }

  Status StartHttp() {
    Publish(UnixS());  // before the first round (which may take seconds on a busy machine): a status, no job yet
    if (Status st = http_.Start(options_.listen); !st.ok()) return st;
    Say(fmt::format("listening on http://{}/", options_.listen));
    return Status::Ok();
  }

  // POST /api/v1/deep: the HTTP thread checks the caller and the job, and queues the request for the next
  // round (OpenRequestedWindows).
  Status SetUpControl() {
    ControlAccess access;
    if (!options_.control_token.empty()) {
      auto read = ControlAccess::FromTokenFile(options_.control_token);
      if (!read.ok()) return read.status();
      access = std::move(read).value();
    }
    http_.SetDeepControl(std::move(access), [this](const std::string& job, std::optional<double> seconds) {
      const double s = std::min(seconds.value_or(options_.deep_request_s), kMaxDeepS);
      std::lock_guard<std::mutex> lock(control_mutex_);
      if (!known_jobs_.count(job))
        return ControlReply{404,
                            nlohmann::json{{"error", "no job '" + job + "' on this node (see /api/v1/status)"}}.dump()};
      deep_requests_.emplace_back(job, s);
      return ControlReply{202,
                          nlohmann::json{{"job", job}, {"seconds", s}, {"sample_hz", options_.deep_sample_hz}}.dump()};
    });
    return Status::Ok();
  }

  // The deep windows asked for over HTTP since the last round, for jobs still found this round (a job that
  // ended since its request gets no schedule).
  void OpenRequestedWindows(double now_s, double now_unix) {
    std::vector<std::pair<std::string, double>> requests;
    {
      std::lock_guard<std::mutex> lock(control_mutex_);
      requests.swap(deep_requests_);
      std::erase_if(requests, [&](const auto& r) { return !known_jobs_.count(r.first); });
    }
    for (const auto& [job, seconds] : requests) OpenDeep(job, now_s, now_unix, seconds, "requested over HTTP", false);
  }

  // `detection`: asked by an online detection (kept out of a window's refractory time), else by hand.
  void OpenDeep(const std::string& job, double now_s, double now_unix, double seconds, const std::string& reason,
                bool detection) {
    DeepSchedule& deep = deep_[job];
    const bool was = deep.Active(now_s);
    const bool moved = detection ? deep.RequestOnDetection(now_s, now_unix, seconds, reason)
                                 : deep.Request(now_s, now_unix, seconds, reason);
    if (moved && !was)
      Say(fmt::format("job {}: deep tracing for {:g} s ({}): stacks at {} Hz", job, std::min(seconds, kMaxDeepS),
                      reason, options_.deep_sample_hz));
  }

  // The job's deep window as the status shows it; says when one closed.
  void NoteDeep(const std::string& job, double now_s, const FlightRecorder& flight, JobState* state) {
    const DeepSchedule& deep = deep_[job];
    const bool active = flight.newest_deep();
    if (state->deep.active && !active) Say(fmt::format("job {}: deep tracing ended", job));
    state->deep = {active,
                   deep.Active(now_s),
                   deep.Pending(now_s),
                   active ? options_.deep_sample_hz : options_.sample_hz,
                   deep.until_unix(),
                   deep.began_unix(),
                   deep.reason(),
                   deep.opened()};
  }

  Status StartPublisher() {
    if (options_.redis.empty()) return Status::Ok();
    auto address = ParseRedisUrl(options_.redis);
    if (!address.ok()) return address.status();
    PublisherOptions po;
    po.buffer_max = options_.redis_buffer;
    po.maxlen = options_.redis_maxlen;
    publisher_ = std::make_unique<StreamPublisher>(address.value(), po);
    requests_ = std::make_unique<RequestListener>(address.value(), po.timeout_s);
    return Status::Ok();
  }

  void Round() {
    const auto jobs = discovery_.Scan();
    const double now_unix = UnixS();
    const double now_s = static_cast<double>(MonoNs()) / 1e9;
    {
      std::lock_guard<std::mutex> lock(control_mutex_);
      known_jobs_.clear();
      for (const auto& [job, found] : jobs) known_jobs_.insert(job);
    }
    OpenRequestedWindows(now_s, now_unix);
    for (const auto& [job, found] : jobs) {
      JobState& state = states_[job];
      if (state.job.empty()) Say(fmt::format("found job {} ({} processes)", job, found.rank_of_pid.size()));
      state.job = job;
      state.rank_of_pid = found.rank_of_pid;
      auto& flight = flights_[job];
      if (!flight) {
        FlightOptions fo{self_,
                         options_.rotate_s,
                         options_.retain_s,
                         options_.retain_mb,
                         options_.sample_hz,
                         options_.deep_sample_hz};
        flight = std::make_unique<FlightRecorder>((std::filesystem::path(options_.dir) / SafeName(job)).string(), fo);
      }
      std::set<int> pids;
      for (const auto& [pid, rank] : found.rank_of_pid) pids.insert(pid);
      flight->set_handover_s(HandoverSeconds(LatestStepS(state)));
      flight->Update(pids, now_s, MayBeStalled(state, now_unix), deep_[job].Active(now_s));
      if (flight->current_deep()) deep_[job].Begin(now_s, now_unix);  // its seconds count from here
      NoteDeep(job, now_s, *flight, &state);
      if (!flight->current_chunk().empty()) {
        std::vector<online::RankStepSummary> summaries;
        live_.Round(flight->current_chunk(), MonoNs(), now_unix, &state, &summaries);
        // Detections are dated when judged, after the round read the chunk's tail: its summaries may hold
        // steps that ended after the round began (a round under load takes seconds), and a detection dated
        // at the round's start could precede the slowdown it names.
        FeedOnline(job, summaries, UnixS(), &state);
        if (publisher_)
          for (const diagnosis::RankInflight& r : state.inflight)
            publisher_->Enqueue(job, EncodeInflight(r, host_, now_unix));
      }
    }
    for (auto it = states_.begin(); it != states_.end();) {
      if (jobs.count(it->first)) {
        ++it;
        continue;
      }
      FlightRecorder& flight = *flights_[it->first];
      flight.Update({}, now_s);  // reaps the recorder that ended with the job
      if (!it->second.ended && flight.current_finished()) {
        // Its last chunk is complete: diagnosed once more as a finished recording, so the status says how
        // the job ended (a hang to its end, a mismatch, ranks that died) instead of going inconclusive.
        std::vector<online::RankStepSummary> ignored;
        live_.Round(flight.current_chunk(), MonoNs(), now_unix, &it->second, &ignored, /*ended=*/true);
        if (!it->second.ended) it->second.ended = true;  // a round that could not read it still ends it
      }
      if (now_unix - it->second.analysed_at > options_.retain_s) {
        flights_.erase(it->first);
        online_.erase(it->first);
        deep_.erase(it->first);
        it = states_.erase(it);
      } else {
        it->second.rank_of_pid.clear();
        ++it;
      }
    }
    ++rounds_;
    if (publisher_) publisher_->Flush(now_s);
    Publish(now_unix);
  }

  // The round's new step summaries go to the job's online detection and, with --redis, to its stream with
  // the detections they open.
  void FeedOnline(const std::string& job, const std::vector<online::RankStepSummary>& summaries, double now_unix,
                  JobState* state) {
    OnlineJob& online = online_[job];
    for (const online::RankStepSummary& s : summaries) {
      online.Add(s);
      if (publisher_) publisher_->Enqueue(job, EncodeSummary(s, host_));
    }
    for (const online::Detection& d : online.Advance(now_unix)) {
      Say(fmt::format("job {}: rank {} late since step {} ({})", job, d.rank, d.first_step,
                      diagnosis::CauseName(d.cause)));
      if (options_.deep_s > 0)
        OpenDeep(job, static_cast<double>(MonoNs()) / 1e9, now_unix, options_.deep_s,
                 fmt::format("detection: rank {} {}", d.rank, diagnosis::CauseName(d.cause)), true);
      if (publisher_) publisher_->Enqueue(job, EncodeFinding(d, host_));
    }
    if (online.view().summaries > 0) state->online = online.view();
    if (requests_) AnswerRequests(job, *state);
  }

  // serve asked for the flight-recorder windows of some ranks: the ones on this node answer with the findings
  // of the window diagnosis this round ran (a rank whose window shows nothing sends nothing).
  void AnswerRequests(const std::string& job, const JobState& state) {
    auto requests = requests_->Poll(job, static_cast<double>(MonoNs()) / 1e9);
    if (!requests.ok()) return;  // the publisher counts Redis failures; requests wait in the stream
    std::set<int> here;
    for (const auto& [pid, rank] : state.rank_of_pid) here.insert(rank);
    for (const WindowRequest& r : requests.value())
      for (int32_t rank : r.ranks)
        if (here.count(rank))
          for (const OpenFinding& f : state.open)
            if (f.finding.rank == RankNumber(rank))
              publisher_->Enqueue(
                  job, EncodeWindowFinding({rank, std::string(diagnosis::CauseName(f.finding.cause)), f.finding.summary,
                                            host_, f.finding.impact_pct, f.finding.confidence, f.detected_at}));
  }

  void Publish(double now_unix) {
    AgentSnapshot s;
    s.host = host_;
    s.now = now_unix;
    s.rounds = rounds_;
    for (const auto& [job, f] : flights_) s.recorder_restarts += f->restarts();
    for (const auto& [job, state] : states_) s.jobs.push_back(state);
    if (publisher_) s.publisher = publisher_->counters();
    http_.Publish(StatusJson(s).dump(1, ' ', false, nlohmann::ordered_json::error_handler_t::replace), MetricsText(s));
  }

  AgentOptions options_;
  std::string self_ = std::filesystem::read_symlink("/proc/self/exe").string();
  Discovery discovery_;
  LiveDiagnosis live_;
  std::map<std::string, JobState> states_;
  std::map<std::string, std::unique_ptr<FlightRecorder>> flights_;
  std::map<std::string, OnlineJob> online_;
  std::map<std::string, DeepSchedule> deep_;
  std::mutex control_mutex_;  // guards the two below (the HTTP thread's control requests)
  std::set<std::string> known_jobs_;
  std::vector<std::pair<std::string, double>> deep_requests_;
  std::string host_ = [] {
    char host[256] = {};
    gethostname(host, sizeof host - 1);
    return std::string(host);
  }();
  uint64_t rounds_ = 0;
  HttpFront http_{"strata agent"};
  std::unique_ptr<StreamPublisher> publisher_;
  std::unique_ptr<RequestListener> requests_;
};

}  // namespace

Status RunAgent(const AgentOptions& options) { return Agent(options).Run(); }

}  // namespace strata::agent
