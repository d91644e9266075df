// The one step that measures what the reports draw (see report_facts.h).
#include "analysis/diagnosis/report_facts.h"

#include <cmath>
#include <map>

#include "analysis/diagnosis/cross_layer.h"
#include "analysis/diagnosis/latest_arrival.h"
#include "analysis/diagnosis/op_timeline_facts.h"
#include "analysis/diagnosis/timeline_facts.h"
#include "analysis/diagnosis/trace_ks.h"
#include "analysis/op_table_ks.h"
#include "analysis/rank_step_busy.h"

namespace strata::diagnosis {

namespace {

/// Each rank index's clock offset in ns as the result states it (aligned = time − offset).
std::vector<int64_t> OffsetsNs(const TraceStore& store, const DiagnosisResult& result) {
  std::vector<int64_t> out(store.ranks.size(), 0);
  for (size_t r = 0; r < store.ranks.size(); ++r)
    if (auto it = result.clock_offsets_us.find(store.ranks[r].rank); it != result.clock_offsets_us.end())
      out[r] = std::llround(it->second * 1000.0);
  return out;
}

/// The latest arrivals of every rank a finding or a straggler names.
std::map<int32_t, std::map<int64_t, size_t>> NamedRanksArrivals(const TraceStore& store, const model::JobModel& job,
                                                                const DiagnosisResult& result) {
  std::map<int32_t, size_t> index_of;
  for (size_t r = 0; r < store.ranks.size(); ++r) index_of[store.ranks[r].rank] = r;
  std::vector<int32_t> named;
  for (const Finding& f : result.findings)
    if (f.rank) named.push_back(f.rank->value());
  for (const Straggler& s : result.stragglers) named.push_back(s.rank.value());
  const std::vector<int64_t> offsets = OffsetsNs(store, result);
  std::map<int32_t, std::map<int64_t, size_t>> out;
  for (const int32_t rank : named) {
    auto at = index_of.find(rank);
    if (at != index_of.end() && !out.count(rank)) out[rank] = LatestArrivals(job, at->second, offsets);
  }
  return out;
}

/// The layers panel's finding and its peers' median of each layer metric; none without a layer comparison.
std::optional<LayersFacts> LayersOf(const DiagnosisResult& result) {
  for (size_t i = 0; i < result.findings.size(); ++i)
    if (const auto& c = result.findings[i].evidence.cross_layer) return LayersFacts{i, PeersMedianMetrics(c->peers)};
  return std::nullopt;
}

}  // namespace

DrawnFacts MeasureDrawnFacts(const TraceStore& store, const std::vector<SliceRows>& rows_by_rank,
                             const model::JobModel& job, const DiagnosisResult& result) {
  DrawnFacts facts;
  facts.latest_arrival = NamedRanksArrivals(store, job, result);
  facts.layers = LayersOf(result);
  facts.busy_ns = OpTableComputeNs(store, rows_by_rank, job);
  facts.busy_is_compute = !facts.busy_ns.empty();
  if (!facts.busy_is_compute) facts.busy_ns = BusyNsByStep(job, store.ranks.size());
  facts.stages = RankStages(store, job, result);
  facts.ks = facts.busy_is_compute ? OpTableKs(store, rows_by_rank, facts.stages)
                                   : TraceKs(job, result, facts, store.ranks.size());
  if (job.steps.steps.empty() || store.ranks.empty()) return facts;
  facts.timeline = MeasureTimeline(store, job, result, facts);
  if (facts.busy_is_compute) MeasureOpTimeline(store, rows_by_rank, job, result, facts, &*facts.timeline);
  return facts;
}

}  // namespace strata::diagnosis
