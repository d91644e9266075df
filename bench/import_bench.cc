// strata_bench_import: loads a job (files or directories) the way `strata summary` does and prints
// throughput (MB/s of decompressed JSON, events/s), the store's size and the process's peak RSS.
// Usage: strata_bench_import [--repeat N] [--threads N] PATH...
#include <fmt/format.h>
#include <sys/resource.h>

#include <chrono>
#include <cstdlib>
#include <string>
#include <vector>

#include "core/allocator_tuning.h"
#include "importers/job_loader.h"

int main(int argc, char** argv) {
  strata::TuneAllocatorForLoading();
  std::vector<std::string> paths;
  int repeat = 1;
  strata::LoadOptions options;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--repeat" && i + 1 < argc) {
      repeat = std::atoi(argv[++i]);
    } else if (arg == "--threads" && i + 1 < argc) {
      options.threads = static_cast<unsigned>(std::atoi(argv[++i]));
    } else {
      paths.push_back(arg);
    }
  }
  if (paths.empty()) {
    fmt::print(stderr, "usage: strata_bench_import [--repeat N] [--threads N] PATH...\n");
    return 2;
  }
  double best = 1e30;
  uint64_t content = 0, input = 0, events = 0, slices = 0, store_bytes = 0;
  for (int r = 0; r < repeat; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    auto job = strata::LoadJob(paths, options);
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (!job.ok()) {
      fmt::print(stderr, "strata_bench_import: {}\n", job.error());
      return 1;
    }
    best = std::min(best, secs);
    content = job.value().content_bytes;
    input = job.value().input_bytes;
    events = 0;
    for (const auto& in : job.value().store.inputs) events += in.events;
    slices = job.value().store.slices.size();
    store_bytes = job.value().store.memory_bytes();
  }
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  const double peak_mb = usage.ru_maxrss / 1024.0;
  const double json_mb = content / 1e6;
  fmt::print("inputs: {} path(s), {:.1f} MB read, {:.1f} MB JSON/CSV content\n", paths.size(), input / 1e6, json_mb);
  fmt::print("best of {}: {:.3f} s  ->  {:.0f} MB/s of content, {:.2f} M events/s ({} events, {} slices)\n", repeat,
             best, json_mb / best, events / best / 1e6, events, slices);
  fmt::print("store: {:.1f} MB ({:.1f} bytes/slice incl. strings)\n", store_bytes / 1e6,
             slices ? static_cast<double>(store_bytes) / slices : 0.0);
  fmt::print("peak RSS: {:.1f} MB = {:.1f}% of the content size\n", peak_mb, 100.0 * peak_mb * 1.048576 / json_mb);
  return 0;
}
