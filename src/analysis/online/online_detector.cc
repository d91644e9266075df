// Online straggler detection per step (see online_detector.h).
#include "analysis/online/online_detector.h"

#include <algorithm>
#include <bit>
#include <cmath>

#include "analysis/diagnosis/cause_choice.h"
#include "analysis/diagnosis/thresholds.h"

namespace strata::online {
namespace {

namespace th = diagnosis::thresholds;

// Groups up to this size compare each rank with the median of the others; larger ones with the group's
// median (the rank's own value moves it by at most one position).
constexpr size_t kExactPeersUpTo = 64;

// Median of `v` in O(n) (v is reordered); the mean of the two middle values for an even size.
double MedianInPlace(std::vector<double>& v) {
  if (v.empty()) return 0;
  const auto mid = v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2);
  std::nth_element(v.begin(), mid, v.end());
  if (v.size() % 2) return *mid;
  return (*mid + *std::max_element(v.begin(), mid)) / 2;
}

// Median of field(peer) over the group without `self` (for small groups), else over the whole group.
template <typename Field>
double PeerMedian(const std::vector<const RankStepSummary*>& group, const RankStepSummary* self, Field field) {
  std::vector<double> v;
  v.reserve(group.size());
  const bool exclude = group.size() <= kExactPeersUpTo;
  for (const RankStepSummary* p : group)
    if (!exclude || p != self) v.push_back(field(*p));
  return MedianInPlace(v);
}

// NameCause (cause_choice.h) over the summary's classes: each class's excess over the peers' median is a
// candidate for its cause, the largest is named when it covers kMinExplainedShare of `late_s`, and the
// confidence is the share it covers. Sets d's cause, excess_s, explained and confidence.
void ChooseCauseOf(const RankStepSummary& r, const std::vector<const RankStepSummary*>& group, double late_s,
                   Detection* d) {
  std::vector<diagnosis::CauseCandidate> candidates;
  for (size_t c = 0; c < kSummaryClasses.size(); ++c) {
    const double excess =
        ClassValues(r)[c] - PeerMedian(group, &r, [c](const RankStepSummary& p) { return ClassValues(p)[c]; });
    candidates.push_back({kSummaryCauses[c].cause, kSummaryCauses[c].layer, excess});
  }
  const diagnosis::CauseChoice choice = diagnosis::NameCause(diagnosis::ProfileEvidence{candidates, late_s});
  d->cause = choice.cause;
  d->excess_s = std::max(0.0, choice.excess);
  d->explained = choice.explained;
  d->confidence = choice.confidence;
}

}  // namespace

OnlineDetector::OnlineDetector(OnlineOptions options) : options_(options) {}

std::vector<Detection> OnlineDetector::AddStep(int64_t step, const std::vector<RankStepSummary>& ranks, double now) {
  std::map<int32_t, std::vector<const RankStepSummary*>> groups;
  for (const RankStepSummary& r : ranks)
    if (r.step == step && r.rank >= 0) groups[r.group].push_back(&r);
  std::vector<Detection> opened;
  for (const auto& [group, members] : groups) Judge(members, step, now, &opened);
  return opened;
}

void OnlineDetector::Judge(const std::vector<const RankStepSummary*>& group, int64_t step, double now,
                           std::vector<Detection>* opened) {
  std::vector<double> work, steps;
  for (const RankStepSummary* r : group) {
    work.push_back(r->own_work_s());
    steps.push_back(r->step_s);
  }
  const double step_median = MedianInPlace(steps);
  const double median = MedianInPlace(work);
  for (double& w : work) w = std::abs(w - median);
  const double mad = std::max(MedianInPlace(work), th::kOnlineMadFloorShare * step_median);
  const uint32_t window_mask = (1u << th::kOnlineWindow) - 1;
  const uint32_t long_mask = (1u << th::kOnlineLongWindow) - 1;
  const bool small = group.size() <= kExactPeersUpTo;
  for (const RankStepSummary* r : group) {
    const double reference =
        small ? PeerMedian(group, r, [](const RankStepSummary& p) { return p.own_work_s(); }) : median;
    const double late_s = r->own_work_s() - reference;
    double spread = mad;
    if (small) {  // the peers' own spread: the rank under test must not widen its own yardstick
      std::vector<double> dev;
      for (const RankStepSummary* p : group)
        if (p != r) dev.push_back(std::abs(p->own_work_s() - reference));
      spread = std::max(MedianInPlace(dev), th::kOnlineMadFloorShare * step_median);
    }
    const bool late = group.size() >= 2 && late_s >= options_.min_effect * step_median && spread > 0 &&
                      0.6745 * late_s / spread >= th::kOnlineMinZ;
    const bool clear = late && late_s >= th::kOnlineClearFactor * options_.min_effect * step_median;
    RankState& st = state_[r->rank];
    st.late_bits = ((st.late_bits << 1) | (late ? 1u : 0u)) & long_mask;
    st.clear_bits = ((st.clear_bits << 1) | (clear ? 1u : 0u)) & window_mask;
    if (late && st.first_late < 0) st.first_late = step;
    if ((st.late_bits & window_mask) == 0) {
      st.first_late = -1;
      open_.erase(r->rank);
      continue;
    }
    const bool persists = static_cast<size_t>(std::popcount(st.clear_bits)) >= th::kOnlinePersist ||
                          static_cast<size_t>(std::popcount(st.late_bits)) >= th::kOnlineLongPersist;
    if (late && persists && !open_.count(r->rank)) {
      Detection d;
      d.rank = r->rank;
      d.step = step;
      d.first_step = st.first_late;
      d.detected_at = now;
      d.late_s = late_s;
      d.step_s = step_median;
      ChooseCauseOf(*r, group, late_s, &d);
      open_[r->rank] = d;
      opened->push_back(d);
    }
  }
}

}  // namespace strata::online
