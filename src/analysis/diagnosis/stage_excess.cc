// A stage's excess over the balanced level of the stages (see stage_excess.h).
#include "analysis/diagnosis/stage_excess.h"

#include <algorithm>
#include <numeric>

namespace strata::diagnosis {

namespace {

double MeanOf(const std::vector<double>& v) {
  return v.empty() ? 0.0 : std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
}

}  // namespace

StepStageExcess MeasureStageExcess(const StageWork& work) {
  StepStageExcess out;
  out.stage.assign(work.size(), 0.0);
  for (const auto& members : work) out.member.emplace_back(members.size(), 0.0);
  if (work.size() < 2) return out;
  std::vector<double> stage_work;
  for (const auto& members : work) stage_work.push_back(MeanOf(members));
  const double balanced = MeanOf(stage_work);
  for (size_t s = 0; s < work.size(); ++s) {
    out.stage[s] = std::max(0.0, stage_work[s] - balanced);
    for (size_t k = 0; k < work[s].size(); ++k) out.member[s][k] = std::max(0.0, work[s][k] - balanced);
  }
  return out;
}

double MeanShareOfStep(const std::vector<double>& excess_ns, const std::vector<double>& step_ns) {
  if (excess_ns.empty()) return 0.0;
  double sum = 0;
  for (size_t i = 0; i < excess_ns.size() && i < step_ns.size(); ++i)
    if (step_ns[i] > 0) sum += excess_ns[i] / step_ns[i];
  return sum / static_cast<double>(excess_ns.size());
}

MemberSpread SpreadOfMembers(const std::vector<double>& member_excess_sums) {
  if (member_excess_sums.empty()) return {};
  const auto [lo, hi] = std::minmax_element(member_excess_sums.begin(), member_excess_sums.end());
  return {*lo, *hi};
}

}  // namespace strata::diagnosis
