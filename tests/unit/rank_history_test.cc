// RankHistory's self baseline (analysis/online/rank_history.h), kept sorted as steps are learned: its median,
// usual step and MAD equal those computed naively (sort the last kOnlineSelfWindow learned values) after every
// step, with ties, a window that wraps many times, and steps not learned (late ones) left out.
#include "analysis/online/rank_history.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <deque>
#include <random>
#include <vector>

#include "analysis/diagnosis/thresholds.h"

namespace strata::online {
namespace {

namespace th = diagnosis::thresholds;

double NaiveMedian(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

TEST(RankHistory, TheSortedBaselineEqualsTheNaiveOneAfterEveryStep) {
  std::mt19937 rng(11);
  std::uniform_int_distribution<int> coarse(0, 6);  // few distinct values: many ties
  std::normal_distribution<double> fine(0.06, 0.004);
  std::bernoulli_distribution late(0.1);
  RankHistory h;
  std::deque<std::pair<float, float>> learned;  // (work, step), the last kOnlineSelfWindow learned
  for (int64_t s = 0; s < 400; ++s) {
    RankStepSummary x;
    x.rank = 0;
    x.step = s;
    x.step_s = s % 3 ? 0.1 + 0.001 * coarse(rng) : 0.1;
    const double work = s < 200 ? 0.05 + 0.002 * coarse(rng) : std::max(0.0, fine(rng));
    x.wait_s = x.step_s - work;
    x.oncpu_s = work;
    const bool learn = !late(rng);
    h.Record(x, !learn, false, false, 0, learn);
    if (learn && !h.ChangeInProgress()) {
      learned.emplace_back(static_cast<float>(x.own_work_s()), static_cast<float>(x.step_s));
      if (learned.size() > th::kOnlineSelfWindow) learned.pop_front();
    }
    const SelfScore score = h.Score(x);
    ASSERT_EQ(score.history, learned.size()) << "step " << s;
    if (learned.empty()) continue;
    std::vector<double> work_v, step_v;
    for (const auto& [w, st] : learned) {
      work_v.push_back(w);
      step_v.push_back(st);
    }
    const double baseline = NaiveMedian(work_v), usual = NaiveMedian(step_v);
    std::vector<double> dev;
    for (double w : work_v) dev.push_back(std::abs(w - baseline));
    ASSERT_DOUBLE_EQ(score.baseline_s, baseline) << "step " << s;
    ASSERT_DOUBLE_EQ(score.usual_step_s, usual) << "step " << s;
    ASSERT_DOUBLE_EQ(score.spread_s, std::max(NaiveMedian(dev), th::kOnlineMadFloorShare * usual)) << "step " << s;
  }
}

}  // namespace
}  // namespace strata::online
