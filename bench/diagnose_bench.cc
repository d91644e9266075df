// strata_bench_diagnose: times the diagnosis (diagnosis::Diagnose, every pass, no report) of jobs already
// loaded, and prints its median and minimum; the load is timed apart. Not a test: a command that prints
// numbers (issue 50 item 7: diagnosis at 5,000 and 20,000 ranks). Usage:
//   strata_bench_diagnose [--repeat N] [--threads N] DIR...
// e.g. strata synth -o /tmp/s5k --ranks 5000 && strata_bench_diagnose --repeat 5 /tmp/s5k
// bench/diagnose_ab compares two builds' whole `strata diagnose` runs side by side (old builds lack this bench).
// Invariant: the diagnosis is timed on an already loaded store; the result of the last run is checked to be
// the same as the first (the pass is deterministic), so a timing never hides a changed answer.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <string>
#include <vector>

#include "analysis/diagnosis/diagnose.h"
#include "core/robust_stats.h"
#include "importers/job_loader.h"
#include "reports/diagnosis_report.h"

namespace {

using Clock = std::chrono::steady_clock;

double Seconds(Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double>(b - a).count(); }

int Run(const std::string& path, int repeat, unsigned threads) {
  strata::LoadOptions load;
  load.threads = threads;
  const auto t0 = Clock::now();
  auto job = strata::LoadJob({path}, load);
  const auto t1 = Clock::now();
  if (!job.ok()) {
    fmt::print(stderr, "strata_bench_diagnose: {}\n", job.error());
    return 1;
  }
  const strata::TraceStore& store = job.value().store;
  // Progress, and the moment to attach a profiler to the diagnosis alone (perf record -p PID).
  fmt::print(stderr, "strata_bench_diagnose: {} loaded in {:.1f} s; diagnosing it {} times\n", path, Seconds(t0, t1),
             repeat);
  std::vector<double> times;
  std::string first, last;
  for (int i = 0; i < repeat; ++i) {
    const auto a = Clock::now();
    const strata::diagnosis::DiagnosisResult result = strata::diagnosis::Diagnose(store, {});
    times.push_back(Seconds(a, Clock::now()));
    (i == 0 ? first : last) = strata::DiagnosisToJson(result).dump();
  }
  if (repeat > 1 && first != last) {
    fmt::print(stderr, "strata_bench_diagnose: {}: the diagnosis changed between runs\n", path);
    return 1;
  }
  std::sort(times.begin(), times.end());
  fmt::print("{}: {} ranks, {} slices; load {:.2f} s; Diagnose median {:.3f} s, min {:.3f} s over {} runs\n", path,
             store.ranks.size(), store.slices.size(), Seconds(t0, t1),
             strata::MedianOfSorted(times.size(), [&](size_t k) { return times[k]; }), times.front(), repeat);
  return 0;
}

constexpr const char* kUsage =
    "usage: strata_bench_diagnose [--repeat N] [--threads N] DIR...\n"
    "times diagnosis::Diagnose on each loaded job (median and minimum of N runs, default 5)\n";

}  // namespace

int main(int argc, char** argv) {
  long repeat = 5, threads = 0;
  std::vector<std::string> dirs;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "-h" || a == "--help") {
      fmt::print("{}", kUsage);
      return 0;
    }
    if ((a == "--repeat" || a == "--threads") && i + 1 < argc) {
      char* end = nullptr;
      const long v = std::strtol(argv[++i], &end, 10);
      const long least = a == "--repeat" ? 1 : 0;
      if (*end != '\0' || v < least || v > 4096) {
        fmt::print(stderr, "strata_bench_diagnose: {} {}: expected a whole number from {} to 4096\n", a, argv[i],
                   least);
        return 2;
      }
      (a == "--repeat" ? repeat : threads) = v;
    } else if (a.rfind("-", 0) == 0) {
      fmt::print(stderr, "strata_bench_diagnose: unknown option {}\n{}", a, kUsage);
      return 2;
    } else {
      dirs.push_back(a);
    }
  }
  if (dirs.empty()) {
    fmt::print(stderr, "{}", kUsage);
    return 2;
  }
  for (const std::string& dir : dirs)
    if (int rc = Run(dir, static_cast<int>(repeat), static_cast<unsigned>(threads))) return rc;
  return 0;
}
