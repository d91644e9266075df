// How many step summaries one `strata serve` ingests per second from a Redis on this machine (issue 13,
// item 4): publishes RANKS × STEPS summaries of one job through the agent's StreamPublisher (timed too),
// then lets a fresh ServeCore consume, decode, align, judge and acknowledge them all, and prints both rates
// with serve's CPU time per step of the job.
// usage: strata_bench_serve redis://HOST:PORT [RANKS=1000] [STEPS=50]
// The job's stream and consumer group are deleted first, so the figure is one whole pass.
#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>

#include "agent/serve_core.h"
#include "agent/stream_publisher.h"

namespace {

double CpuSeconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace strata::agent;
  if (argc < 2) {
    std::fprintf(stderr, "usage: strata_bench_serve redis://HOST:PORT [RANKS=1000] [STEPS=50]\n");
    return 2;
  }
  auto address = ParseRedisUrl(argv[1]);
  if (!address.ok()) {
    std::fprintf(stderr, "%s\n", address.error().c_str());
    return 2;
  }
  const int ranks = argc > 2 ? std::atoi(argv[2]) : 1000;
  const int steps = argc > 3 ? std::atoi(argv[3]) : 50;
  const std::string job = "bench-" + std::to_string(getpid());
  RedisConnection admin;
  if (auto st = admin.Connect(address.value(), 2); !st.ok()) {
    std::fprintf(stderr, "%s\n", st.message().c_str());
    return 1;
  }
  PublisherOptions po;
  po.buffer_max = static_cast<size_t>(ranks) * static_cast<size_t>(steps) + 1;
  po.maxlen = po.buffer_max;
  StreamPublisher pub(address.value(), po);
  std::mt19937 rng(1);
  std::normal_distribution<double> jitter(0, 0.0005);
  const auto t0 = std::chrono::steady_clock::now();
  for (int s = 0; s < steps; ++s) {
    for (int r = 0; r < ranks; ++r) {
      strata::online::RankStepSummary x;
      x.rank = r;
      x.step = s;
      x.step_s = 0.1;
      x.oncpu_s = 0.06 + jitter(rng);
      x.wait_s = x.step_s - x.oncpu_s;
      pub.Enqueue(job, EncodeSummary(x, "bench"));
    }
    pub.Flush(0);
  }
  const double publish_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const uint64_t total = static_cast<uint64_t>(ranks) * static_cast<uint64_t>(steps);
  if (pub.counters().published != total) {
    std::fprintf(stderr, "published %llu of %llu: %s\n", static_cast<unsigned long long>(pub.counters().published),
                 static_cast<unsigned long long>(total), pub.counters().last_error.c_str());
    return 1;
  }
  ConsumerOptions co;
  co.group = job;
  ServeCore core(address.value(), co);
  const double cpu0 = CpuSeconds();
  const auto t1 = std::chrono::steady_clock::now();
  while (core.counters().acked < total) {
    auto polled = core.Poll(100, 0);
    if (!polled.ok()) {
      std::fprintf(stderr, "%s\n", polled.error().c_str());
      return 1;
    }
  }
  const double ingest_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t1).count();
  const double cpu_s = CpuSeconds() - cpu0;
  (void)admin.Command({"DEL", StepsStreamKey(job)});
  (void)admin.Command({"SREM", kJobSetKey, job});
  std::printf("ranks %d, steps %d, summaries %llu\n", ranks, steps, static_cast<unsigned long long>(total));
  std::printf("publish (agent side): %.0f summaries/s\n", static_cast<double>(total) / publish_s);
  std::printf("serve ingest: %.0f summaries/s (wall %.2f s, CPU %.2f s of serve = %.1f ms per step of %d ranks)\n",
              static_cast<double>(total) / ingest_s, ingest_s, cpu_s, 1e3 * cpu_s / steps, ranks);
  return 0;
}
