// strata_bench_whatif: times the what-if analysis (ComputeWhatIf) on op-table jobs after loading them,
// and prints its figures (S, ideal step, replay error, top attributions). Not a test: a command that
// prints numbers. Usage: strata_bench_whatif [--repeat N] [--threads N] [TRACE.csv.gz ...]
// (default: the AR, ST and SE jobs of ../shared/datasets/straggler-whatif/, AR timed).
// Invariant: the analysis is timed on an already loaded store; load time is reported separately.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "analysis/whatif/whatif.h"
#include "core/robust_stats.h"
#include "importers/job_loader.h"

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
    fmt::print(stderr, "{}\n", job.error());
    return 1;
  }
  const strata::TraceStore& store = job.value().store;
  std::vector<double> times;
  strata::Expected<strata::whatif::WhatIfResult> result = strata::Status::Internal("not run");
  for (int i = 0; i < repeat; ++i) {
    const auto a = Clock::now();
    result = strata::whatif::ComputeWhatIf(store);
    times.push_back(Seconds(a, Clock::now()));
    if (!result.ok()) {
      fmt::print(stderr, "{}\n", result.error());
      return 1;
    }
  }
  strata::whatif::WhatIfOptions quick;
  quick.attribution = false;
  const auto q0 = Clock::now();
  auto s_only = strata::whatif::ComputeWhatIf(store, quick);
  const double s_only_s = Seconds(q0, Clock::now());
  const auto& r = result.value();
  fmt::print("{}\n", path);
  fmt::print(
      "  load {:.3f} s ({} slices); ComputeWhatIf median {:.1f} ms, min {:.1f} ms over {} runs; "
      "S and step replays only {:.1f} ms\n",
      Seconds(t0, t1), store.slices.size(), 1e3 * strata::Median(times),
      1e3 * *std::min_element(times.begin(), times.end()), repeat, 1e3 * s_only_s);
  fmt::print("  layout dp {} x stages {} (chunks {}), {} steps analysed ({} skipped), {} ops per step\n", r.num_dp,
             r.num_stages, r.num_chunks, r.steps.size(), r.skipped_steps.size(), r.ops_per_step);
  fmt::print("  S = {:.4f} (waste {:.1f} %), launch slowdown {:.4f}\n", r.slowdown, 100 * r.waste, r.launch_slowdown);
  fmt::print("  mean step: recorded {:.2f} ms, replayed {:.2f} ms, no delay {:.2f} ms, ideal {:.2f} ms\n",
             r.recorded_step_ms, r.replayed_step_ms, r.no_delay_step_ms, r.ideal_step_ms);
  fmt::print(
      "  replay error: worst step {:.4f} %; {} negative launch delays clamped (min {:.3f} ms), "
      "{} negative transfers (min {:.3f} ms)\n",
      100 * r.max_replay_error, r.negative_launch_delays, r.most_negative_launch_delay_ms, r.negative_transfers,
      r.most_negative_transfer_ms);
  auto print_map = [](const char* what, const auto& m) {
    std::vector<std::pair<std::string, double>> v;
    for (const auto& [k, a] : m) v.emplace_back(fmt::format("{}", k), a.ratio);
    std::sort(v.begin(), v.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
    std::string line;
    for (size_t i = 0; i < v.size() && i < 8; ++i) line += fmt::format(" {}={:.4f}", v[i].first, v[i].second);
    fmt::print("  {}:{}\n", what, line);
  };
  print_map("by dp rank", r.by_rank);
  print_map("by stage", r.by_stage);
  print_map("by op type", r.by_op_type);
  print_map("by op group", r.by_op_group);
  std::vector<const strata::whatif::WorkerAttribution*> w;
  for (const auto& x : r.by_worker) w.push_back(&x);
  std::sort(w.begin(), w.end(), [](auto a, auto b) { return a->attribution.ratio > b->attribution.ratio; });
  std::string line;
  for (size_t i = 0; i < w.size() && i < 5; ++i)
    line += fmt::format(" dp{}/stage{}={:.4f}", w[i]->dp_rank, w[i]->stage, w[i]->attribution.ratio);
  fmt::print("  by worker:{}\n", line);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  int repeat = 5;
  unsigned threads = 0;
  std::vector<std::string> paths;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--repeat" && i + 1 < argc) {
      repeat = std::max(1, std::atoi(argv[++i]));
    } else if (a == "--threads" && i + 1 < argc) {
      threads = static_cast<unsigned>(std::atoi(argv[++i]));
    } else if (a == "-h" || a == "--help") {
      fmt::print("usage: strata_bench_whatif [--repeat N] [--threads N] [TRACE.csv.gz ...]\n");
      return 0;
    } else {
      paths.push_back(a);
    }
  }
  if (paths.empty()) {
    // The shared folder sits beside the repository: $STRATA_SHARED_DIR, else <repo>/../shared.
    const char* env = std::getenv("STRATA_SHARED_DIR");
    const std::filesystem::path shared =
        env && *env ? std::filesystem::path(env)
                    : std::filesystem::path(__FILE__).parent_path().parent_path().parent_path() / "shared";
    const std::string dir = (shared / "datasets" / "straggler-whatif").string() + "/";
    for (const char* name : {"AR", "ST", "SE"}) paths.push_back(dir + "trace-" + name + ".csv.gz");
  }
  int rc = 0;
  for (const auto& p : paths) rc |= Run(p, repeat, threads);
  return rc;
}
