// Per-rank view of a job for the HTML report (see html_view.h).
#include "reports/html_view.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "analysis/diagnosis/group_diagnosis.h"
#include "analysis/job_summary.h"
#include "core/robust_stats.h"
#include "model/job_model.h"
#include "reports/html_op_view.h"

namespace strata {

namespace {

using Json = nlohmann::ordered_json;

double ViewMs(int64_t ns) { return std::round(static_cast<double>(ns) / 1e3) / 1e3; }

/// matrix[rank index][step index] of a per-window quantity; null where the rank lacks the step.
struct StepMatrices {
  Json step_ms = Json::array(), busy_ms = Json::array();
  std::vector<std::vector<double>> busy;  // NaN where missing
};

StepMatrices BuildMatrices(const model::JobModel& job, size_t ranks) {
  StepMatrices m;
  const std::vector<int64_t>& steps = job.steps.steps;
  for (size_t r = 0; r < ranks; ++r) {
    std::map<int64_t, int64_t> coll_ns;
    if (r < job.collectives.calls.size())
      for (const model::CollectiveCall& c : job.collectives.calls[r]) coll_ns[c.step] += c.end_ns - c.start_ns;
    std::map<int64_t, int64_t> span;
    if (r < job.steps.by_rank.size())
      for (const model::StepWindow& w : job.steps.by_rank[r]) span[w.step] = w.end_ns - w.start_ns;
    Json row = Json::array(), busy_row = Json::array();
    std::vector<double> busy(steps.size(), std::nan(""));
    for (size_t s = 0; s < steps.size(); ++s) {
      auto it = span.find(steps[s]);
      if (it == span.end()) {
        row.push_back(nullptr);
        busy_row.push_back(nullptr);
        continue;
      }
      const int64_t b = std::max<int64_t>(0, it->second - coll_ns[steps[s]]);
      row.push_back(ViewMs(it->second));
      busy_row.push_back(ViewMs(b));
      busy[s] = static_cast<double>(b);
    }
    m.step_ms.push_back(std::move(row));
    m.busy_ms.push_back(std::move(busy_row));
    m.busy.push_back(std::move(busy));
  }
  return m;
}

/// matrix[rank index][step index] in ms, null where NaN.
Json NsMatrix(const std::vector<std::vector<double>>& ns) {
  Json out = Json::array();
  for (const auto& row : ns) {
    Json r = Json::array();
    for (double x : row)
      r.push_back(std::isnan(x) ? Json(nullptr) : Json(ViewMs(static_cast<int64_t>(std::llround(x)))));
    out.push_back(std::move(r));
  }
  return out;
}

/// The step index whose busy time spreads most over ranks (max − median); 0 when all are alike.
size_t WorstStep(const std::vector<std::vector<double>>& busy, size_t steps) {
  size_t worst = 0;
  double widest = -1;
  for (size_t s = 0; s < steps; ++s) {
    std::vector<double> v;
    for (const auto& row : busy)
      if (!std::isnan(row[s])) v.push_back(row[s]);
    if (v.empty()) continue;
    const double spread = *std::max_element(v.begin(), v.end()) - Median(v);
    if (spread > widest) widest = spread, worst = s;
  }
  return worst;
}

/// Rank indices drawn on the timeline: all up to kMaxTimelineRows, else the stragglers, their neighbours
/// and the fastest, median and slowest ranks of the step, in rank order.
std::vector<size_t> TimelineRows(const std::vector<size_t>& stragglers, const std::vector<std::vector<double>>& busy,
                                 size_t step, size_t ranks) {
  std::set<size_t> rows;
  if (ranks <= kMaxTimelineRows) {
    for (size_t r = 0; r < ranks; ++r) rows.insert(r);
    return {rows.begin(), rows.end()};
  }
  for (size_t i = 0; i < stragglers.size() && i < 4; ++i) {
    rows.insert(stragglers[i]);
    if (stragglers[i] > 0) rows.insert(stragglers[i] - 1);
    if (stragglers[i] + 1 < ranks) rows.insert(stragglers[i] + 1);
  }
  std::vector<std::pair<double, size_t>> by_busy;
  for (size_t r = 0; r < ranks; ++r)
    if (!std::isnan(busy[r][step])) by_busy.push_back({busy[r][step], r});
  std::sort(by_busy.begin(), by_busy.end());
  if (!by_busy.empty()) {
    const size_t n = by_busy.size();
    for (size_t q : {size_t{0}, n / 4, n / 2, 3 * n / 4, n - 1}) rows.insert(by_busy[q].second);
  }
  for (size_t r = 0; rows.size() < kMaxTimelineRows / 2 && r < ranks; ++r) rows.insert(r);
  std::vector<size_t> out(rows.begin(), rows.end());
  if (out.size() > kMaxTimelineRows) out.resize(kMaxTimelineRows);
  return out;
}

/// The matched collective of `step` that rank index `late` arrived last at by the widest margin, or -1.
int64_t ChainCollective(const model::JobModel& job, int64_t step, size_t late) {
  int64_t best = -1;
  int64_t widest = 0;
  const auto& offsets = job.clocks.offset_ns;
  auto aligned = [&](size_t r, int64_t t) { return t - (r < offsets.size() ? offsets[r] : 0); };
  for (size_t i = 0; i < job.collectives.matched.size(); ++i) {
    const model::MatchedCollective& m = job.collectives.matched[i];
    if (m.step != step || late >= m.call.size() || m.call[late] < 0 || m.present < 2) continue;
    const int64_t mine = aligned(late, job.collectives.calls[late][m.call[late]].start_ns);
    int64_t second = INT64_MIN;
    for (size_t r = 0; r < m.call.size(); ++r)
      if (r != late && m.call[r] >= 0)
        second = std::max(second, aligned(r, job.collectives.calls[r][m.call[r]].start_ns));
    if (second != INT64_MIN && mine - second > widest) widest = mine - second, best = static_cast<int64_t>(i);
  }
  return best;
}

/// The late rank's busy time in the step against its peers' median: the other ranks of its pipeline stage
/// when `stages` (StagesOf) knows them, else all other ranks; null when no peer has the step.
Json LateAgainstPeers(const std::vector<std::vector<double>>& busy, const Json& stages, size_t late,
                      size_t step_index) {
  std::vector<double> peers;
  for (size_t r = 0; r < busy.size(); ++r)
    if (r != late && !std::isnan(busy[r][step_index]) && (stages.is_null() || stages[r] == stages[late]))
      peers.push_back(busy[r][step_index]);
  if (peers.empty() || std::isnan(busy[late][step_index])) return nullptr;
  Json out;
  out["of"] = "time outside collectives";
  out["peers"] = stages.is_null() ? std::string("the other ranks")
                                  : "the other ranks of stage " + std::to_string(stages[late].get<int32_t>());
  out["peer_count"] = peers.size();
  out["late_ms"] = ViewMs(std::llround(busy[late][step_index]));
  out["peers_median_ms"] = ViewMs(std::llround(Median(peers)));
  return out;
}

Json BuildTimeline(const TraceStore& store, const std::vector<SliceRows>& rows_by_rank, const model::JobModel& job,
                   const diagnosis::DiagnosisResult& result, const std::vector<std::vector<double>>& busy,
                   const Json& stages, size_t step_index) {
  const size_t ranks = store.ranks.size();
  const int64_t step = job.steps.steps[step_index];
  std::map<int32_t, size_t> index_of;
  for (size_t r = 0; r < ranks; ++r) index_of[store.ranks[r].rank] = r;
  std::vector<size_t> stragglers;
  for (const auto& s : result.stragglers)
    if (index_of.count(s.rank)) stragglers.push_back(index_of[s.rank]);
  const std::vector<size_t> shown = TimelineRows(stragglers, busy, step_index, ranks);
  auto offset = [&](size_t r) { return r < job.clocks.offset_ns.size() ? job.clocks.offset_ns[r] : 0; };
  const model::StepWindow* windows[kMaxTimelineRows * 2] = {};
  int64_t t0 = INT64_MAX;
  for (size_t i = 0; i < shown.size(); ++i)
    for (const model::StepWindow& w : job.steps.by_rank[shown[i]])
      if (w.step == step) windows[i] = &w, t0 = std::min(t0, w.start_ns - offset(shown[i]));
  if (t0 == INT64_MAX) return nullptr;
  // The culprit: the top finding's op on its rank (its slices in the step, longest first).
  const diagnosis::Finding* top = result.findings.empty() ? nullptr : &result.findings.front();
  const StringId culprit_name = top && top->op ? store.strings.find(*top->op) : static_cast<StringId>(-1);
  const int32_t culprit_rank =
      top && top->rank ? *top->rank : (stragglers.empty() ? -1 : store.ranks[stragglers[0]].rank);
  const size_t late = index_of.count(culprit_rank) ? index_of[culprit_rank] : ranks;
  const int64_t chain = late < ranks ? ChainCollective(job, step, late) : -1;
  Json rows = Json::array();
  for (size_t i = 0; i < shown.size(); ++i) {
    const size_t r = shown[i];
    if (!windows[i]) continue;
    const int64_t off = offset(r) + t0;
    Json row;
    row["rank"] = store.ranks[r].rank;
    row["window"] = {ViewMs(windows[i]->start_ns - off), ViewMs(windows[i]->end_ns - off)};
    Json coll = Json::array();
    for (const model::CollectiveCall& c : job.collectives.calls[r])
      if (c.step == step && coll.size() < kMaxIntervals)
        coll.push_back({ViewMs(c.start_ns - off), ViewMs(c.end_ns - off)});
    row["collectives"] = std::move(coll);
    Json culprit = Json::array();
    if (r == late && culprit_name != static_cast<StringId>(-1)) {
      const SliceTable& sl = store.slices;
      for (const SliceId row_index : rows_by_rank[r]) {
        if (sl.name[row_index.value] != culprit_name) continue;
        const int64_t ts = sl.ts_ns[row_index.value];
        if (ts < windows[i]->start_ns || ts >= windows[i]->end_ns || culprit.size() >= kMaxIntervals) continue;
        culprit.push_back({ViewMs(ts - off), ViewMs(ts + sl.dur_ns[row_index.value] - off)});
      }
    }
    row["culprit"] = std::move(culprit);
    if (chain >= 0) {
      const model::MatchedCollective& m = job.collectives.matched[static_cast<size_t>(chain)];
      if (r < m.call.size() && m.call[r] >= 0) {
        const model::CollectiveCall& c = job.collectives.calls[r][m.call[r]];
        row["chain_call"] = {ViewMs(c.start_ns - off), ViewMs(c.end_ns - off)};
      }
    }
    rows.push_back(std::move(row));
  }
  Json out;
  out["step"] = step;
  out["late_rank"] = late < ranks ? Json(store.ranks[late].rank) : Json(nullptr);
  out["op"] = top && top->op ? Json(*top->op) : Json(nullptr);
  if (late < ranks) out["compare"] = LateAgainstPeers(busy, stages, late, step_index);
  if (chain >= 0)
    out["collective"] = std::string(store.strings.view(job.collectives.matched[static_cast<size_t>(chain)].key));
  out["shown_of"] = ranks;
  out["rows"] = std::move(rows);
  return out;
}

/// Pipeline stage per rank index: the op table's stage column, else the send/recv chains of a job with
/// pipeline stages; null when there is one stage or it is unknown.
Json StagesOf(const TraceStore& store, const model::JobModel& job, const diagnosis::DiagnosisResult& result) {
  std::vector<int32_t> stages;
  for (const RankInfo& r : store.ranks) stages.push_back(r.pp_stage);
  if (std::find(stages.begin(), stages.end(), -1) != stages.end()) {
    if (!result.layout.pipeline_stages) return nullptr;
    stages = diagnosis::PipelineStages(store, job.collectives, store.ranks.size());
  }
  if (std::set<int32_t>(stages.begin(), stages.end()).size() < 2) return nullptr;
  return stages;
}

}  // namespace

nlohmann::ordered_json BuildReportView(const TraceStore& store, const diagnosis::DiagnosisResult& result) {
  Json view;
  const std::vector<SliceRows> rows = SlicesByRank(store);
  const model::JobModel job = model::BuildJobModel(store, rows);
  const size_t ranks = store.ranks.size();
  view["ranks"] = store.RankNumbers();
  view["steps"] = job.steps.steps;
  const Json stages = StagesOf(store, job, result);
  view["stages"] = stages;
  StepMatrices m = BuildMatrices(job, ranks);
  view["step_ms"] = std::move(m.step_ms);
  // An op table has no collective calls of the trace kind: its "time outside collectives" is the step time.
  // Its ranks are compared by compute time (the sum of their compute ops) and op durations instead.
  const std::vector<std::vector<double>> compute = OpTableComputeNs(store, rows, job);
  if (compute.empty()) {
    view["busy_ms"] = std::move(m.busy_ms);
  } else {
    view["compute_ms"] = NsMatrix(compute);
    view["ks"] = OpTableKs(store, rows);
  }
  if (!result.lateness_vs_peers_ms.empty()) {
    Json late = Json::array();
    for (const RankInfo& r : store.ranks) {
      Json row = Json::array();
      auto it = result.lateness_vs_peers_ms.find(r.rank);
      for (int64_t s : job.steps.steps) {
        if (it == result.lateness_vs_peers_ms.end() || !it->second.count(s)) {
          row.push_back(nullptr);
        } else {
          row.push_back(std::round(it->second.at(s) * 1e3) / 1e3);
        }
      }
      late.push_back(std::move(row));
    }
    view["lateness_ms"] = std::move(late);
  }
  if (job.steps.steps.empty() || ranks == 0) {
    view["timeline"] = nullptr;
  } else if (!compute.empty()) {
    view["timeline"] = OpTableTimeline(store, rows, job, result, compute, WorstStep(compute, job.steps.steps.size()));
  } else {
    view["timeline"] =
        BuildTimeline(store, rows, job, result, m.busy, stages, WorstStep(m.busy, job.steps.steps.size()));
  }
  return view;
}

}  // namespace strata
