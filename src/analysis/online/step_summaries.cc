// StepSummaries (see step_summaries.h).
#include "analysis/online/step_summaries.h"

#include <algorithm>

#include "analysis/diagnosis/cross_layer.h"
#include "analysis/diagnosis/window_profile.h"
#include "analysis/job_summary.h"
#include "model/job_model.h"
#include "store/recorded_layers.h"

namespace strata::online {
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

const model::StepWindow* StepWindowOf(const std::vector<model::StepWindow>& windows, int64_t step) {
  for (const model::StepWindow& w : windows)
    if (w.step == step) return &w;
  return nullptr;
}

// Counter samples this long before the new steps are kept for the interpolation at a span's start (the
// recorder samples host counters at 10 Hz by default).
constexpr uint64_t kCounterMarginNs = 2'000'000'000;

// The recording's layers of every rank over its span of step `step` (cross_layer.h).
std::map<int32_t, diagnosis::RankLayerMetrics> StepLayers(const TraceStore& store, const RecordedLayers& layers,
                                                          const model::JobModel& job, int64_t step) {
  return diagnosis::MeasureRankLayers(layers, [&](size_t, int32_t rank) {
    std::vector<RecordedSpan> spans;  // none: the rank has no such step, nothing is measured
    for (size_t ri = 0; ri < store.ranks.size() && ri < job.steps.by_rank.size(); ++ri) {
      const model::StepWindow* w = store.ranks[ri].rank == rank ? StepWindowOf(job.steps.by_rank[ri], step) : nullptr;
      if (w != nullptr && w->start_ns >= 0 && w->end_ns > w->start_ns)
        spans.push_back({static_cast<uint64_t>(w->start_ns), static_cast<uint64_t>(w->end_ns)});
    }
    return std::optional<std::vector<RecordedSpan>>(std::move(spans));
  });
}

// The classes of one rank's step: its thread's profile, with the recording's run-queue, throttling and GC
// time moved out of the classes that hold them (GC runs on the CPU; run-queue waits are off it).
void FillClasses(const diagnosis::WindowProfile& p, const diagnosis::RankLayerMetrics* layers, RankStepSummary* s) {
  s->oncpu_s = p.compute_ns / 1e9;
  s->io_s = p.data_ns / 1e9;
  s->offcpu_other_s = p.host_gap_ns / 1e9;
  if (layers == nullptr || layers->window_s <= 0) return;
  const double w = layers->window_s;
  s->runq_s = layers->runq_foreign_share * w;
  s->throttled_s = layers->throttled_share * w;
  s->gc_s = layers->gc_share * w;
  s->oncpu_s = std::max(0.0, s->oncpu_s - s->gc_s);
  s->offcpu_other_s = std::max(0.0, s->offcpu_other_s - layers->runq_share * w);
}

}  // namespace

std::vector<RankStepSummary> SummarizeNewSteps(const TraceStore& store, StepCursor* cursor) {
  std::vector<RankStepSummary> out;
  const auto rows = SlicesByRank(store);
  const model::JobModel job = model::BuildJobModel(store, rows);
  const std::vector<int64_t>& common = job.steps.steps;  // steps every rank has, matched by the model
  if (store.ranks.empty() || job.steps.by_rank.size() < store.ranks.size() || common.size() < 2) return out;
  const diagnosis::TrackIndex index(store, rows);
  const RecordedLayers& recorded = store.recorded_layers;
  const int64_t realtime_offset_ns = recorded.empty() ? 0 : recorded.segments[0].realtime_minus_monotonic_ns;
  // The last common step may still be running; the first, in the job's first round, may have begun before
  // the diagnosis window did.
  const size_t first = cursor->emitted_end_ns == INT64_MIN ? 1 : 0;
  // Steps not yet emitted start after the cursor (a step's ranks start within ms of each other; 1 s spare).
  constexpr int64_t kSpareNs = 1'000'000'000;
  const int64_t new_from = cursor->emitted_end_ns == INT64_MIN ? 0 : cursor->emitted_end_ns - kSpareNs;
  // Measuring each new step on the part of the layers it can touch instead of the whole window keeps a
  // round's cost near one pass over the window.
  const RecordedLayers part =
      LayersFrom(recorded, static_cast<uint64_t>(std::max<int64_t>(0, new_from)), kCounterMarginNs);
  for (size_t i = first; i + 1 < common.size(); ++i) {
    const model::StepWindow* ref = StepWindowOf(job.steps.by_rank[0], common[i]);
    // A step was emitted already when most of it lies before the last emitted end: each round finds the
    // boundaries anew from the window's rhythm, and they may move by microseconds, which must not drop a step.
    if (ref == nullptr || ref->start_ns + (ref->end_ns - ref->start_ns) / 2 < cursor->emitted_end_ns) continue;
    const int64_t step = cursor->next_step++;
    cursor->emitted_end_ns = ref->end_ns;
    const auto layers = StepLayers(store, part, job, common[i]);
    for (size_t ri = 0; ri < store.ranks.size(); ++ri) {
      const model::StepWindow* win = StepWindowOf(job.steps.by_rank[ri], common[i]);
      if (store.ranks[ri].rank < 0 || win == nullptr || win->end_ns <= win->start_ns) continue;
      const TrackId track = win->main_track != kNoTrack ? win->main_track : model::MainThreadTrack(store, rows[ri]);
      RankStepSummary s;
      s.rank = store.ranks[ri].rank;
      s.step = step;
      if (realtime_offset_ns != 0) s.start_unix = static_cast<double>(win->start_ns + realtime_offset_ns) / 1e9;
      s.step_s = static_cast<double>(win->end_ns - win->start_ns) / 1e9;
      const auto& calls =
          ri < job.collectives.calls.size() ? job.collectives.calls[ri] : std::vector<model::CollectiveCall>{};
      s.wait_s = std::min(s.step_s, CollectiveSeconds(calls, win->start_ns, win->end_ns));
      const auto l = layers.find(s.rank);
      FillClasses(diagnosis::ProfileWindow(store, index, ri, track, win->start_ns, win->end_ns),
                  l != layers.end() ? &l->second : nullptr, &s);
      out.push_back(s);
    }
  }
  return out;
}

}  // namespace strata::online
