// strata_bench_host_counters: the cost of one HostCounterSampler::Sample() (and of one SampleLinks()) on this
// machine's real /proc and /sys with N traced processes of T threads each (default 8 x 20, idle threads blocked
// in pause()).
// Not a test: a command that prints numbers. Usage: strata_bench_host_counters [PIDS] [THREADS] [SAMPLES]
// Reports the sampling thread's CPU time per Sample() (CLOCK_THREAD_CPUTIME_ID: user + kernel time spent
// reading /proc), wall time, and the share of one core at the recorder's default 10 Hz.
#include <fmt/format.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <thread>
#include <vector>

#include "core/robust_stats.h"
#include "recorder/host/host_counters.h"

namespace {

uint64_t NowNs(clockid_t clock) {
  timespec ts;
  clock_gettime(clock, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000u + static_cast<uint64_t>(ts.tv_nsec);
}

// A child with `threads` threads in all; it lives until the parent closes the pipe's write end.
pid_t SpawnChild(int threads, int ready_fd, int hold_fd, int hold_write_fd) {
  const pid_t pid = fork();
  if (pid != 0) return pid;
  close(hold_write_fd);  // else the child itself keeps the pipe open
  for (int i = 1; i < threads; ++i) std::thread([] { pause(); }).detach();
  const char ok = 1;
  if (write(ready_fd, &ok, 1) != 1) _exit(1);
  char c;
  while (read(hold_fd, &c, 1) > 0) {
  }
  _exit(0);
}

}  // namespace

int main(int argc, char** argv) {
  const int pids = argc > 1 ? std::atoi(argv[1]) : 8;
  const int threads = argc > 2 ? std::atoi(argv[2]) : 20;
  const int samples = argc > 3 ? std::atoi(argv[3]) : 300;
  int ready[2], hold[2];
  if (pipe(ready) != 0 || pipe(hold) != 0) return 1;
  std::vector<int> children;
  for (int i = 0; i < pids; ++i) children.push_back(SpawnChild(threads, ready[1], hold[0], hold[1]));
  close(hold[0]);
  for (int i = 0; i < pids; ++i) {
    char c;
    if (read(ready[0], &c, 1) != 1) return 1;
  }

  strata::recorder::HostCounterSampler sampler({});
  sampler.SetPids(children);
  std::vector<strata::recorder::CounterSample> out;
  for (int i = 0; i < 5; ++i) sampler.Sample(NowNs(CLOCK_MONOTONIC), &out);  // discovery, first-touch
  std::vector<double> cpu_us, wall_us;
  size_t values = 0;
  for (int i = 0; i < samples; ++i) {
    out.clear();
    const uint64_t c0 = NowNs(CLOCK_THREAD_CPUTIME_ID), w0 = NowNs(CLOCK_MONOTONIC);
    sampler.Sample(w0, &out);
    cpu_us.push_back(static_cast<double>(NowNs(CLOCK_THREAD_CPUTIME_ID) - c0) / 1e3);
    wall_us.push_back(static_cast<double>(NowNs(CLOCK_MONOTONIC) - w0) / 1e3);
    values = out.size();
  }
  // The links alone (SampleLinks, the recorder's --link-hz samples between full ones).
  std::vector<double> link_cpu_us;
  size_t link_values = 0;
  for (int i = 0; i < samples; ++i) {
    out.clear();
    const uint64_t c0 = NowNs(CLOCK_THREAD_CPUTIME_ID);
    sampler.SampleLinks(NowNs(CLOCK_MONOTONIC), &out);
    link_cpu_us.push_back(static_cast<double>(NowNs(CLOCK_THREAD_CPUTIME_ID) - c0) / 1e3);
    link_values = out.size();
  }
  close(hold[1]);
  for (const int pid : children) waitpid(pid, nullptr, 0);

  auto mean = [](const std::vector<double>& v) {
    double s = 0;
    for (double x : v) s += x;
    return s / static_cast<double>(v.size());
  };
  fmt::print("traced: {} pids x {} threads; {} samples; {} values/sample; {} series\n", pids, threads, samples, values,
             sampler.series().size());
  fmt::print("Sample() CPU time: median {:.0f} us, mean {:.0f} us; wall: median {:.0f} us\n", strata::Median(cpu_us),
             mean(cpu_us), strata::Median(wall_us));
  fmt::print("at 10 Hz: {:.2f} % of one core\n", mean(cpu_us) * 10 / 1e4);
  fmt::print("SampleLinks() CPU time: median {:.0f} us, mean {:.0f} us, {} values; at 50 Hz: {:.2f} % of one core\n",
             strata::Median(link_cpu_us), mean(link_cpu_us), link_values, mean(link_cpu_us) * 50 / 1e4);
  for (const auto& w : sampler.TakeWarnings()) fmt::print("warning: {}\n", w);
  const auto& s = sampler.stats();
  fmt::print("stats: missing {} unreadable {} malformed {} threads_exited {}\n", s.files_missing, s.files_unreadable,
             s.malformed, s.threads_exited);
  return 0;
}
