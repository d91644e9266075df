// StepSummaries (see step_summaries.h).
#include "agent/step_summaries.h"

#include <algorithm>

#include "analysis/diagnosis/window_profile.h"
#include "analysis/job_summary.h"
#include "model/job_model.h"

namespace strata::agent {
namespace {

// Time the rank's collective calls cover in [start, end) (calls are in start order and do not nest).
double CollectiveSeconds(const std::vector<model::CollectiveCall>& calls, int64_t start, int64_t end) {
  int64_t ns = 0;
  for (const model::CollectiveCall& c : calls) {
    if (c.start_ns >= end) break;
    ns += std::max<int64_t>(0, std::min(c.end_ns, end) - std::max(c.start_ns, start));
  }
  return static_cast<double>(ns) / 1e9;
}

const model::StepWindow* WindowOf(const std::vector<model::StepWindow>& windows, int64_t step) {
  for (const model::StepWindow& w : windows)
    if (w.step == step) return &w;
  return nullptr;
}

}  // namespace

std::vector<online::RankStepSummary> SummarizeNewSteps(const TraceStore& store, StepCursor* cursor,
                                                       int64_t realtime_minus_monotonic_ns) {
  std::vector<online::RankStepSummary> out;
  const auto rows = SlicesByRank(store);
  const model::JobModel job = model::BuildJobModel(store, rows);
  const std::vector<int64_t>& common = job.steps.steps;  // steps every rank has, matched by the model
  if (store.ranks.empty() || job.steps.by_rank.size() < store.ranks.size() || common.size() < 2) return out;
  const diagnosis::TrackIndex index(store, rows);
  // The last common step may still be running; the first, in the job's first round, may have begun before
  // the diagnosis window did.
  const size_t first = cursor->emitted_end_ns == INT64_MIN ? 1 : 0;
  for (size_t i = first; i + 1 < common.size(); ++i) {
    const model::StepWindow* ref = WindowOf(job.steps.by_rank[0], common[i]);
    // A step was emitted already when most of it lies before the last emitted end: each round finds the
    // boundaries anew from the window's rhythm, and they may move by microseconds, which must not drop a step.
    if (ref == nullptr || ref->start_ns + (ref->end_ns - ref->start_ns) / 2 < cursor->emitted_end_ns) continue;
    const int64_t step = cursor->next_step++;
    cursor->emitted_end_ns = ref->end_ns;
    for (size_t ri = 0; ri < store.ranks.size(); ++ri) {
      const model::StepWindow* win = WindowOf(job.steps.by_rank[ri], common[i]);
      if (store.ranks[ri].rank < 0 || win == nullptr || win->end_ns <= win->start_ns) continue;
      const uint32_t track = win->main_track != UINT32_MAX ? win->main_track : model::MainThreadTrack(store, rows[ri]);
      const diagnosis::WindowProfile p = diagnosis::ProfileWindow(store, index, ri, track, win->start_ns, win->end_ns);
      online::RankStepSummary s;
      s.rank = store.ranks[ri].rank;
      s.step = step;
      if (realtime_minus_monotonic_ns != 0)
        s.start_unix = static_cast<double>(win->start_ns + realtime_minus_monotonic_ns) / 1e9;
      s.step_s = static_cast<double>(win->end_ns - win->start_ns) / 1e9;
      const auto& calls =
          ri < job.collectives.calls.size() ? job.collectives.calls[ri] : std::vector<model::CollectiveCall>{};
      s.wait_s = std::min(s.step_s, CollectiveSeconds(calls, win->start_ns, win->end_ns));
      s.oncpu_s = p.compute_ns / 1e9;
      s.io_s = p.data_ns / 1e9;
      s.offcpu_other_s = p.host_gap_ns / 1e9;
      out.push_back(s);
    }
  }
  return out;
}

}  // namespace strata::agent
