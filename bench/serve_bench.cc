// How many step summaries `strata serve` ingests per second from a Redis or a Redis Cluster on this machine
// (issue 13 item 4; issue 49 item 5: through several serves, on one Redis and on a cluster). Publishes JOBS jobs
// of RANKS × STEPS summaries each through the agent's StreamPublisher (timed too), then lets SERVES fresh
// ServeCores (each its own consumer name, one thread each, as several `strata serve` sharing the jobs) consume,
// decode, align, judge and acknowledge them all, and prints the rates with serve's CPU time per step of a job.
// usage: strata_bench_serve redis://[USER:PASSWORD@]HOST:PORT[,HOST:PORT...] [RANKS=1000] [STEPS=50] [SERVES=1]
//        [JOBS=SERVES]
// Job k's id is picked so that its slot lies in the k-th of JOBS equal parts of the slot space: on a cluster
// made by `redis-cli --cluster create` (masters own equal slot ranges) jobs spread evenly over the masters.
// Job k's lease is written for serve k mod SERVES before the serves start (what a serve restarted under that
// name finds), so each serve judges its share of the jobs: the figure is the shared steady state, not the race
// for free leases. Every key the bench wrote (streams, groups, leases, judged records, job set members) is
// deleted at the end, so each figure is one whole pass.
// Invariants: the ingest rate counts only acknowledged summaries; the wall time ends when the last serve has
// acknowledged its share.
#include <sys/resource.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "agent/job_commit.h"
#include "agent/job_lease.h"
#include "agent/redis_slots.h"
#include "agent/serve_core.h"
#include "agent/stream_publisher.h"

namespace {

using namespace strata::agent;

struct Setup {
  RedisAddress address;
  int ranks = 1000, steps = 50, serves = 1, jobs = 1;
};

double CpuSeconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

double Since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

/// JOBS job ids, job k's slot in the k-th of JOBS equal parts of the slot space.
std::vector<std::string> SpreadJobs(int jobs) {
  std::vector<std::string> ids;
  const std::string base = "bench-" + std::to_string(getpid()) + "-";
  for (int n = 0; static_cast<int>(ids.size()) < jobs; ++n) {
    const std::string id = base + std::to_string(n);
    const int part = KeySlot(id) * jobs / kRedisSlots;
    if (part == static_cast<int>(ids.size())) ids.push_back(id);
  }
  return ids;
}

std::string ServeName(int k) { return "bench-serve-" + std::to_string(k); }

/// Publishes every job's summaries; returns the publish wall time, or a negative value after an error.
double Publish(const Setup& s, const std::vector<std::string>& jobs) {
  PublisherOptions po;
  po.buffer_max = static_cast<size_t>(s.ranks) * static_cast<size_t>(s.steps) * jobs.size() + 1;
  po.maxlen = po.buffer_max;
  StreamPublisher pub(s.address, po);
  std::mt19937 rng(1);
  std::normal_distribution<double> jitter(0, 0.0005);
  const auto t0 = std::chrono::steady_clock::now();
  for (int step = 0; step < s.steps; ++step) {
    for (const std::string& job : jobs) {
      for (int r = 0; r < s.ranks; ++r) {
        strata::online::RankStepSummary x;
        x.rank = r;
        x.step = step;
        x.step_s = 0.1;
        x.oncpu_s = 0.06 + jitter(rng);
        x.wait_s = x.step_s - x.oncpu_s;
        pub.Enqueue(job, EncodeSummary(x, "bench"));
      }
    }
    pub.Flush(0);
  }
  const double took = Since(t0);
  const uint64_t total = static_cast<uint64_t>(s.ranks) * static_cast<uint64_t>(s.steps) * jobs.size();
  if (pub.counters().published != total) {
    std::fprintf(stderr, "published %llu of %llu: %s\n", static_cast<unsigned long long>(pub.counters().published),
                 static_cast<unsigned long long>(total), pub.counters().last_error.c_str());
    return -1;
  }
  return took;
}

/// One serve: polls until it has acknowledged `share` summaries; its wall time, or a negative value on error.
double RunServe(const Setup& s, const std::string& group, int k, uint64_t share, std::atomic<bool>* failed) {
  ConsumerOptions co;
  co.group = group;
  co.consumer = ServeName(k);
  ServeCore core(s.address, co);
  const auto t0 = std::chrono::steady_clock::now();
  while (core.counters().acked < share && !failed->load()) {
    auto polled = core.Poll(100, 0);
    if (!polled.ok()) {
      std::fprintf(stderr, "serve %d: %s\n", k, polled.error().c_str());
      failed->store(true);
      return -1;
    }
  }
  return Since(t0);
}

void Cleanup(RedisConnection* admin, const std::vector<std::string>& jobs) {
  for (const std::string& job : jobs) {
    for (const std::string& key : {StepsStreamKey(job), LeaseKey(job), JudgedKey(job)})
      (void)admin->Command({"DEL", key});
    (void)admin->Command({"SREM", kJobSetKey, job});
  }
}

int Run(const Setup& s) {
  RedisConnection admin;
  if (auto st = admin.Connect(s.address, 2); !st.ok()) {
    std::fprintf(stderr, "%s\n", st.message().c_str());
    return 1;
  }
  const std::vector<std::string> jobs = SpreadJobs(s.jobs);
  for (size_t j = 0; j < jobs.size(); ++j) {  // job j to serve j mod SERVES
    auto set = admin.Command({"SET", LeaseKey(jobs[j]), ServeName(static_cast<int>(j) % s.serves), "PX", "600000"});
    if (!set.ok()) {
      std::fprintf(stderr, "writing %s's lease: %s\n", jobs[j].c_str(), set.error().c_str());
      Cleanup(&admin, jobs);
      return 1;
    }
  }
  const double publish_s = Publish(s, jobs);
  if (publish_s < 0) {
    Cleanup(&admin, jobs);
    return 1;
  }
  const uint64_t per_job = static_cast<uint64_t>(s.ranks) * static_cast<uint64_t>(s.steps);
  std::vector<double> walls(static_cast<size_t>(s.serves), 0);
  std::atomic<bool> failed{false};
  const double cpu0 = CpuSeconds();
  const auto t1 = std::chrono::steady_clock::now();
  std::vector<std::thread> threads;
  for (int k = 0; k < s.serves; ++k) {
    const uint64_t share = per_job * static_cast<uint64_t>((s.jobs - k + s.serves - 1) / s.serves);
    threads.emplace_back([&, k, share] { walls[static_cast<size_t>(k)] = RunServe(s, jobs[0], k, share, &failed); });
  }
  for (auto& t : threads) t.join();
  const double ingest_s = Since(t1);
  const double cpu_s = CpuSeconds() - cpu0;
  Cleanup(&admin, jobs);
  if (failed.load()) return 1;
  const uint64_t total = per_job * jobs.size();
  std::printf("%s: %s, ranks %d, steps %d, jobs %d, serves %d, summaries %llu\n", s.address.Text().c_str(),
              admin.cluster() ? "cluster" : "one server", s.ranks, s.steps, s.jobs, s.serves,
              static_cast<unsigned long long>(total));
  std::printf("publish (agent side): %.0f summaries/s\n", static_cast<double>(total) / publish_s);
  std::printf("serve ingest: %.0f summaries/s through %d serve(s) (wall %.2f s;", static_cast<double>(total) / ingest_s,
              s.serves, ingest_s);
  for (int k = 0; k < s.serves; ++k) std::printf(" serve %d %.2f s", k, walls[static_cast<size_t>(k)]);
  std::printf("; CPU %.2f s of the serves = %.1f ms per step of %d ranks)\n", cpu_s,
              1e3 * cpu_s / (static_cast<double>(s.steps) * s.jobs), s.ranks);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr,
                 "usage: strata_bench_serve redis://[USER:PASSWORD@]HOST:PORT[,HOST:PORT...] [RANKS=1000] [STEPS=50] "
                 "[SERVES=1] [JOBS=SERVES]\n");
    return 2;
  }
  auto address = ParseRedisUrl(argv[1]);
  if (!address.ok()) {
    std::fprintf(stderr, "%s\n", address.error().c_str());
    return 2;
  }
  Setup s;
  s.address = address.value();
  s.ranks = argc > 2 ? std::atoi(argv[2]) : 1000;
  s.steps = argc > 3 ? std::atoi(argv[3]) : 50;
  s.serves = argc > 4 ? std::atoi(argv[4]) : 1;
  s.jobs = argc > 5 ? std::atoi(argv[5]) : s.serves;
  if (s.ranks < 1 || s.steps < 1 || s.serves < 1 || s.jobs < s.serves) {
    std::fprintf(stderr, "RANKS, STEPS and SERVES must be at least 1 and JOBS at least SERVES\n");
    return 2;
  }
  return Run(s);
}
