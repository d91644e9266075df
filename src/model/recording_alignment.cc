// Alignment of a recording to a rank's trace clock by matching collectives (see recording_alignment.h).
#include "model/recording_alignment.h"

#include <algorithm>
#include <cstdlib>

#include "core/robust_stats.h"
#include "model/model_thresholds.h"

namespace strata::model {

namespace th = thresholds;

std::optional<RecordingAlignment> AlignRecording(const RecordedCollectiveTimes& calls,
                                                 const std::vector<std::pair<int64_t, int64_t>>& trace_collectives) {
  if (trace_collectives.size() < 2) return std::nullopt;
  // The rank's probed calls: blocking collectives when there are any (compare completions), else the
  // enqueue calls (compare starts).
  const bool by_end = !calls.blocking_ends.empty();
  std::vector<int64_t> recorded = by_end ? calls.blocking_ends : calls.enqueue_starts;
  std::sort(recorded.begin(), recorded.end());
  std::vector<int64_t> traced;
  for (const auto& [start, end] : trace_collectives) traced.push_back(by_end ? end : start);
  std::sort(traced.begin(), traced.end());
  constexpr size_t kMaxPairs = 4096;
  if (traced.size() > kMaxPairs) traced.resize(kMaxPairs);
  // Slide the shorter sequence along the longer one.
  const bool trace_shorter = traced.size() <= recorded.size();
  const std::vector<int64_t>& shorter = trace_shorter ? traced : recorded;
  const std::vector<int64_t>& longer = trace_shorter ? recorded : traced;
  if (shorter.size() < 2) return std::nullopt;
  // Best shift: the most pairs within th::kMaxAlignmentSpreadNs of the median offset, then the smallest total
  // deviation (a median alone tolerates too many wrong pairs when there are few).
  std::optional<RecordingAlignment> best;
  size_t best_inliers = 0;
  int64_t best_total = 0;
  std::pair<size_t, int64_t> runner_up{0, 0};  // the best other shift: (inliers, total deviation)
  std::vector<int64_t> offsets(shorter.size()), deviations(shorter.size());
  for (size_t k = 0; k + shorter.size() <= longer.size(); ++k) {
    for (size_t i = 0; i < shorter.size(); ++i) {
      const int64_t t = trace_shorter ? shorter[i] : longer[i + k];
      const int64_t r = trace_shorter ? longer[i + k] : shorter[i];
      offsets[i] = t - r;
    }
    const int64_t median = Median(offsets);
    size_t inliers = 0;
    int64_t total = 0;
    for (size_t i = 0; i < offsets.size(); ++i) {
      deviations[i] = std::llabs(offsets[i] - median);
      inliers += deviations[i] <= th::kMaxAlignmentSpreadNs;
      total += deviations[i];
    }
    const bool better = !best || inliers > best_inliers || (inliers == best_inliers && total < best_total);
    if (better && best) runner_up = {best_inliers, best_total};
    if (!better && (inliers > runner_up.first || (inliers == runner_up.first && total < runner_up.second)))
      runner_up = {inliers, total};
    if (better) {
      best = RecordingAlignment{median, Median(deviations), shorter.size()};
      best_inliers = inliers;
      best_total = total;
    }
  }
  // The share of the pairs that agree (a ratio of counts: exact against the threshold at any realistic size).
  auto agree = [&](size_t inliers) { return static_cast<double>(inliers) / static_cast<double>(best->matched); };
  if (!best || agree(best_inliers) < th::kAlignmentMinAgreeShare) return std::nullopt;
  // A loop so regular that another shift (whole steps earlier or later) fits about as well: ambiguous.
  if (agree(runner_up.first) >= th::kAlignmentMinAgreeShare &&
      static_cast<double>(runner_up.second) <=
          th::kAmbiguousTotalRatio * static_cast<double>(best_total) + static_cast<double>(th::kAmbiguousTotalSlackNs))
    return std::nullopt;
  return best;
}

std::map<std::pair<size_t, int32_t>, int64_t> AlignRecordedRanks(
    const RecordedLayers& layers,
    const std::map<int32_t, std::vector<std::pair<int64_t, int64_t>>>& trace_collectives) {
  std::map<std::pair<size_t, int32_t>, int64_t> out;
  for (size_t i = 0; i < layers.segments.size(); ++i)
    for (const auto& [rank, l] : layers.segments[i].ranks) {
      const auto calls = trace_collectives.find(rank);
      if (calls == trace_collectives.end()) continue;
      if (auto a = AlignRecording(l.collectives, calls->second)) out[{i, rank}] = a->trace_minus_recorded_ns;
    }
  return out;
}

}  // namespace strata::model
