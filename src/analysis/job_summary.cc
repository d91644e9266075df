// JobSummary computation (see job_summary.h).
#include "analysis/job_summary.h"

#include <algorithm>
#include <set>
#include <unordered_map>

#include "analysis/diagnosis/cross_layer.h"
#include "analysis/step_compute.h"
#include "analysis/whatif/op_graph.h"
#include "core/decimal.h"
#include "model/collectives.h"

namespace strata {

std::vector<SliceRows> SlicesByRank(const TraceStore& store) {
  std::vector<SliceRows> by_rank(store.ranks.size());
  std::vector<size_t> counts(store.ranks.size(), 0);
  for (TrackId track : store.slices.track) ++counts[store.track(track).rank];
  for (size_t r = 0; r < by_rank.size(); ++r) by_rank[r].reserve(counts[r]);
  for (uint32_t row = 0; row < store.slices.size(); ++row) {
    by_rank[store.track(store.slices.track[row]).rank].push_back(SliceId(row));
  }
  return by_rank;
}

namespace {

std::vector<int64_t> ProfilerSteps(const TraceStore& store, const SliceRows& rows) {
  // Decide per distinct name once: names are interned.
  std::vector<int8_t> is_step(store.strings.size(), -1);
  std::vector<int64_t> number(store.strings.size(), 0);
  std::set<int64_t> steps;
  for (const SliceId row : rows) {
    if (store.slices.flags[row.value] & kSliceGpu) continue;
    const StringId name = store.slices.name[row.value];
    if (is_step[name.value] < 0) {
      const std::string_view text = store.strings.view(name);
      int64_t n = 0;
      is_step[name.value] =
          text.substr(0, 13) == "ProfilerStep#" && ParseInt64(text.substr(13), &n) == NumberParse::kOk;
      number[name.value] = n;
    }
    if (is_step[name.value]) steps.insert(number[name.value]);
  }
  return {steps.begin(), steps.end()};
}

/// An op table's compute and communication time per step of one rank (rows of known op types only).
void OpTableTimes(const TraceStore& store, const SliceRows& rows, size_t steps, RankSummary* rs) {
  if (steps == 0) return;
  double compute = 0, comm = 0;
  bool any = false;
  std::unordered_map<StringId, std::optional<whatif::OpType>> type_of_name;  // names are interned: once each
  for (const SliceId row : rows) {
    if (!(store.slices.flags[row.value] & kSliceOpLayout)) continue;
    const StringId name = store.slices.name[row.value];
    auto it = type_of_name.find(name);
    if (it == type_of_name.end())
      it = type_of_name.emplace(name, whatif::OpTypeFromName(store.strings.view(name))).first;
    const std::optional<whatif::OpType> type = it->second;
    if (!type) continue;
    any = true;
    (whatif::IsCommunication(*type) ? comm : compute) +=
        static_cast<double>(std::max<int64_t>(0, store.slices.dur_ns[row.value]));
  }
  if (!any) return;
  rs->op_compute_ms_per_step = compute / 1e6 / static_cast<double>(steps);
  rs->op_comm_ms_per_step = comm / 1e6 / static_cast<double>(steps);
}

/// HTA's analyses of the rank's GPU rows, all from the same kept rows.
void HtaAnalyses(const TraceStore& store, const SliceRows& slice_rows, const InputInfo& input,
                 const BreakdownOptions& options, const KernelSequenceOptions& sequences, RankSummary* rs) {
  const std::optional<HtaRows> rows = KeptHtaRows(store, slice_rows, input, options.include_last_step);
  if (!rows) return;
  rs->gpu = ComputeGpuBreakdown(store, *rows, options);
  if (rs->gpu->gpu_events == 0) return;
  rs->idle = ComputeIdleTime(store, *rows);
  rs->launches = ComputeLaunchStats(store, *rows);
  rs->queues = ComputeQueueLength(store, *rows);
  rs->memory_bandwidth = ComputeMemoryBandwidth(store, *rows);
  rs->sequences = FrequentKernelSequences(store, *rows, sequences);
}

/// A job without step markers (a recording, a trace without ProfilerStep): each rank's steps as the diagnosis
/// finds them, from the collectives' period or rhythm (model/collectives.h); unchanged when none is found.
void DetectedSteps(const TraceStore& store, const std::vector<SliceRows>& by_rank, JobSummary* job) {
  for (const RankSummary& rs : job->ranks)
    if (!rs.steps.empty()) return;
  model::StepModel steps = model::FindSteps(store, by_rank);
  model::MatchCollectives(store, by_rank, &steps);
  if (steps.source != model::StepSource::kDetectedPeriod && steps.source != model::StepSource::kDetectedRhythm) return;
  std::set<int64_t> all;
  for (RankSummary& rs : job->ranks) {
    for (const model::StepWindow& w : steps.by_rank[rs.rank_index]) rs.steps.push_back(w.step);
    if (!rs.steps.empty()) rs.step_source = steps.source;
    all.insert(rs.steps.begin(), rs.steps.end());
  }
  job->steps.assign(all.begin(), all.end());
}

}  // namespace

JobSummary Summarize(const TraceStore& store, const BreakdownOptions& options, const KernelSequenceOptions& sequences) {
  JobSummary job;
  job.include_last_step = options.include_last_step;
  job.sequences_operator = sequences.operator_name;
  const auto by_rank = SlicesByRank(store);
  std::vector<uint32_t> order(store.ranks.size());
  for (uint32_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](uint32_t a, uint32_t b) { return store.ranks[a].rank < store.ranks[b].rank; });
  std::set<int64_t> all_steps;
  const std::map<int32_t, diagnosis::RankLayerMetrics> recorded = diagnosis::MeasureRankLayers(store.recorded_layers);
  for (uint32_t r : order) {
    const RankInfo& info = store.ranks[r];
    const auto& rows = by_rank[r];
    RankSummary rs;
    rs.rank_index = r;
    rs.events = info.events;
    job.events += info.events;
    rs.steps = ProfilerSteps(store, rows);
    rs.step_source = rs.steps.empty() ? model::StepSource::kNone : model::StepSource::kProfilerStep;
    if (rs.steps.empty()) {
      std::set<int64_t> steps;
      for (const SliceId row : rows)
        if (store.slices.step[row.value] >= 0) steps.insert(store.slices.step[row.value]);
      if (!steps.empty()) {
        rs.steps.assign(steps.begin(), steps.end());
        rs.step_source = model::StepSource::kOpTable;
      }
    }
    all_steps.insert(rs.steps.begin(), rs.steps.end());
    for (const SliceId row : rows) {
      const int64_t start = store.slices.ts_ns[row.value];
      const int64_t end = start + store.slices.dur_ns[row.value];
      if (!rs.has_span) {
        rs.span_start_ns = start;
        rs.span_end_ns = end;
        rs.has_span = true;
      } else {
        rs.span_start_ns = std::min(rs.span_start_ns, start);
        rs.span_end_ns = std::max(rs.span_end_ns, end);
      }
    }
    HtaAnalyses(store, rows, store.inputs[info.input], options, sequences, &rs);
    if (rs.step_source == model::StepSource::kOpTable) OpTableTimes(store, rows, rs.steps.size(), &rs);
    if (!rs.gpu && rs.step_source == model::StepSource::kProfilerStep)
      rs.cpu_compute_ms_per_step = CpuComputePerStepMs(store, rows);
    if (const auto it = recorded.find(info.rank); it != recorded.end()) rs.recorded = it->second;
    job.ranks.push_back(std::move(rs));
  }
  job.steps.assign(all_steps.begin(), all_steps.end());
  DetectedSteps(store, by_rank, &job);
  std::vector<int32_t> numbers;
  for (const RankSummary& rs : job.ranks) {
    job.metrics.push_back(MeasureSummaryMetrics(rs));
    numbers.push_back(store.ranks[rs.rank_index].rank);
  }
  job.spread = SpreadOverRanks(job.metrics);
  job.outliers = FindSummaryOutliers(job.metrics, numbers);
  return job;
}

}  // namespace strata
