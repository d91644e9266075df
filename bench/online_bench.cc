// Online detection at scale (issue 13, item 6, the detector's part): CPU time of OnlineDetector::AddStep
// for one step of N ranks' summaries, and the steps from a straggler's first slow step to its detection;
// then the same with 30 % of the ranks slower from step 10 (many late ranks at once: each late rank's
// reference must not cost O(ranks) of its own).
// usage: strata_bench_online [RANKS...]   (default 1000 10000 100000)
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include "analysis/online/online_detector.h"

namespace {

// `slow`: the one slow rank (-1: none); `slow_share`: besides it, ranks r with r % 10 < 10 × slow_share are slow.
std::vector<strata::online::RankStepSummary> Step(int64_t step, int ranks, int slow, std::mt19937& rng,
                                                  double slow_share = 0) {
  std::normal_distribution<double> jitter(0, 0.0005);
  std::vector<strata::online::RankStepSummary> out(static_cast<size_t>(ranks));
  for (int r = 0; r < ranks; ++r) {
    auto& s = out[static_cast<size_t>(r)];
    s.rank = r;
    s.step = step;
    s.step_s = 0.1;
    const bool slowed = r == slow || (slow >= 0 && r % 10 < static_cast<int>(10 * slow_share));
    const double work = 0.06 + jitter(rng) + (slowed ? 0.01 : 0);
    s.wait_s = s.step_s - work;
    s.oncpu_s = work;
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<int> sizes;
  for (int i = 1; i < argc; ++i) sizes.push_back(std::atoi(argv[i]));
  if (sizes.empty()) sizes = {1000, 10000, 100000};
  std::printf("%10s %10s %16s %16s %22s\n", "ranks", "slow", "ms/step (mean)", "ms/step (max)", "steps to detection");
  for (const double share : {0.0, 0.3})
    for (int ranks : sizes) {
      std::mt19937 rng(1);
      strata::online::OnlineDetector det;
      constexpr int kSteps = 20, kSlowFrom = 10;
      double total_ms = 0, max_ms = 0;
      int detected_at = -1;
      for (int s = 0; s < kSteps; ++s) {
        const auto step = Step(s, ranks, s >= kSlowFrom ? ranks / 2 : -1, rng, share);
        const auto t0 = std::chrono::steady_clock::now();
        const auto opened = det.AddStep(s, step, 0);
        const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
        total_ms += ms;
        max_ms = std::max(max_ms, ms);
        if (!opened.empty() && detected_at < 0) detected_at = s;
      }
      std::printf("%10d %10s %16.2f %16.2f %22d\n", ranks, share > 0 ? "30 %" : "1 rank", total_ms / kSteps, max_ms,
                  detected_at < 0 ? -1 : detected_at - kSlowFrom + 1);
    }
  return 0;
}
