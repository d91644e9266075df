// One rank's memory in the online detector (see rank_history.h).
#include "analysis/online/rank_history.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <vector>

#include "core/robust_stats.h"

namespace strata::online {
namespace {

namespace th = diagnosis::thresholds;

constexpr int kHistoryBits = 32;

// Removes `old` (when given) from the sorted first `n` values of `v` and inserts `value`, keeping them
// sorted: O(N) moves, no allocation.
template <size_t N>
void ReplaceSorted(std::array<float, N>& v, size_t n, const float* old, float value) {
  if (old) {
    const auto end = v.begin() + static_cast<std::ptrdiff_t>(n);
    const auto at = std::lower_bound(v.begin(), end, *old);
    std::copy(at + 1, end, at);  // `old` is among them: the window holds exactly the sorted values
    --n;
  }
  const auto end = v.begin() + static_cast<std::ptrdiff_t>(n);
  const auto at = std::upper_bound(v.begin(), end, value);
  std::copy_backward(at, end, end + 1);
  *at = value;
}

// A run of late steps, by age (0: the last recorded step): `oldest` >= `newest`.
struct Run {
  int oldest = 0, newest = 0;
};

// The runs of set bits among the last `n` (oldest first); one on-time step between two late ones does not
// split a run (jitter at the threshold inside a lasting slowdown), two or more do.
std::vector<Run> Runs(uint32_t bits, int n) {
  std::vector<Run> runs;
  for (int age = n - 1; age >= 0; --age) {
    if (((bits >> age) & 1u) == 0) continue;
    if (!runs.empty() && runs.back().newest - age <= 2)
      runs.back().newest = age;
    else
      runs.push_back({age, age});
  }
  return runs;
}

}  // namespace

SelfScore RankHistory::Score(const RankStepSummary& s) const {
  SelfScore out;
  out.history = count_;
  if (count_ == 0) return out;
  // Kept sorted as steps are learned: Score runs for every rank every step (strata_bench_online at 100k ranks).
  auto work = [this](size_t k) { return sorted_work_[k]; };
  out.baseline_s = MedianOfSorted(count_, work);
  out.usual_step_s = MedianOfSorted(count_, [this](size_t k) { return sorted_step_[k]; });
  out.spread_s =
      std::max(MedianDeviationOfSorted(count_, work, out.baseline_s), th::kOnlineMadFloorShare * out.usual_step_s);
  out.ready = count_ >= th::kOnlineSelfMinHistory && out.spread_s > 0;
  if (!out.ready) return out;
  out.late_s = s.own_work_s() - out.baseline_s;
  out.z = 0.6745 * out.late_s / out.spread_s;
  return out;
}

void RankHistory::Record(const RankStepSummary& s, bool late, bool clear, bool pause, double deciding_z, bool learn) {
  late_bits_ = (late_bits_ << 1) | (late ? 1u : 0u);
  clear_bits_ = (clear_bits_ << 1) | (clear ? 1u : 0u);
  pause_bits_ = (pause_bits_ << 1) | (pause ? 1u : 0u);
  // Steps it did not report have no start.
  for (int64_t skipped = std::max(last_step_ + 1, s.step - kHistoryBits + 1); skipped < s.step; ++skipped)
    starts_[static_cast<size_t>(skipped % kHistoryBits)] = 0;
  last_step_ = s.step;
  starts_[static_cast<size_t>(s.step % kHistoryBits)] = s.start_unix;
  const double before = cusum_;
  cusum_ = std::clamp(cusum_ + std::min(deciding_z, th::kOnlineCusumMaxStepZ) - th::kOnlineCusumDrift, 0.0,
                      th::kOnlineCusumMax);
  if (before == 0 && cusum_ > 0) cusum_start_ = s.step;
  if (!learn || ChangeInProgress()) return;
  const Learned learned{static_cast<float>(s.own_work_s()), static_cast<float>(s.step_s)};
  const bool full = count_ == window_.size();
  const Learned evicted = window_[next_];
  ReplaceSorted(sorted_work_, count_, full ? &evicted.work : nullptr, learned.work);
  ReplaceSorted(sorted_step_, count_, full ? &evicted.step : nullptr, learned.step);
  window_[next_] = learned;
  next_ = (next_ + 1) % window_.size();
  count_ = std::min(count_ + 1, window_.size());
  const std::array<double, 6> values = ClassValues(s);
  for (size_t c = 0; c < values.size(); ++c)
    class_mean_[c] += (values[c] - class_mean_[c]) / static_cast<double>(count_);
}

size_t RankHistory::OnTimeRun() const {
  return late_bits_ == 0 ? kHistoryBits : static_cast<size_t>(std::countr_zero(late_bits_));
}

double RankHistory::StartOf(int64_t step) const {
  if (step < 0 || step > last_step_ || last_step_ - step >= kHistoryBits) return 0;
  return starts_[static_cast<size_t>(step % kHistoryBits)];
}

Persistence RankHistory::PersistenceSince(int64_t onset, bool pauses) const {
  const int n = static_cast<int>(std::clamp<int64_t>(last_step_ - onset + 1, 1, kHistoryBits));
  if (pauses) {  // a run of late steps still going over kOnlineLongWindow steps is a lasting slowdown, paused or not
    const std::vector<Run> late = Runs(late_bits_, n);
    if (!late.empty() && late.back().newest == 0 &&
        static_cast<size_t>(late.back().oldest) + 1 >= th::kOnlineLongWindow)
      return Persistence::kLasting;
  }
  const std::vector<Run> runs = Runs(pauses ? pause_bits_ : late_bits_, n);
  if (runs.size() >= 2) return Persistence::kRecurring;
  if (runs.empty()) return Persistence::kOneOff;
  const size_t length = static_cast<size_t>(runs[0].oldest - runs[0].newest + 1);
  if (runs[0].newest == 0) return length >= th::kOnlinePersist ? Persistence::kLasting : Persistence::kOneOff;
  return length <= th::kOnlineOneOffMaxSteps ? Persistence::kOneOff : Persistence::kLasting;
}

int64_t RankHistory::RecurringOnset() const {
  if ((clear_bits_ & 1u) == 0) return -1;
  const std::vector<Run> runs = Runs(clear_bits_, static_cast<int>(th::kOnlineRecurringWindow));
  if (runs.size() < th::kOnlineRecurringRuns) return -1;
  const size_t first = runs.size() - th::kOnlineRecurringRuns;
  int shortest = kHistoryBits, longest = 0;
  for (size_t i = first; i + 1 < runs.size(); ++i) {
    const int interval = runs[i].oldest - runs[i + 1].oldest;
    shortest = std::min(shortest, interval);
    longest = std::max(longest, interval);
  }
  if (longest - shortest > 1) return -1;
  return last_step_ - runs[first].oldest;
}

}  // namespace strata::online
