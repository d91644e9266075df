// Per-rank view of a job for the HTML report (see html_view.h).
#include "reports/html_view.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "analysis/job_summary.h"
#include "model/job_model.h"
#include "reports/evidence_json.h"
#include "reports/html_ks_view.h"
#include "reports/html_op_view.h"

namespace strata {

namespace {

using Json = nlohmann::ordered_json;

double ViewMs(int64_t ns) { return std::round(static_cast<double>(ns) / 1e3) / 1e3; }

/// matrix[rank index][step index] of the step window's length; null where the rank lacks the step.
Json StepMs(const model::JobModel& job, size_t ranks) {
  Json out = Json::array();
  for (size_t r = 0; r < ranks; ++r) {
    std::map<int64_t, int64_t> span;
    if (r < job.steps.by_rank.size())
      for (const model::StepWindow& w : job.steps.by_rank[r]) span[w.step] = w.end_ns - w.start_ns;
    Json row = Json::array();
    for (const int64_t step : job.steps.steps) {
      auto it = span.find(step);
      row.push_back(it == span.end() ? Json(nullptr) : Json(ViewMs(it->second)));
    }
    out.push_back(std::move(row));
  }
  return out;
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

/// Rank indices drawn on the timeline: all up to kMaxTimelineRows, else the stragglers, their neighbours
/// and the fastest, median and slowest ranks of the step, in rank order. For drawing only: which rows to draw
/// (no figure the report shows comes of this order).
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

/// The late rank's busy time against its peers' median, as the diagnosis measured it (TimelineFacts).
Json Compare(const diagnosis::PeerComparison& c, const std::vector<int32_t>& stages, size_t late) {
  Json out;
  out["of"] = "time outside collectives";
  out["peers"] =
      stages.empty() ? std::string("the other ranks") : "the other ranks of stage " + std::to_string(stages[late]);
  out["peer_count"] = c.peer_count;
  out["late_ms"] = ViewMs(std::llround(c.late_ns));
  out["peers_median_ms"] = ViewMs(std::llround(c.peers_median_ns));
  return out;
}

/// The diagnosis's lateness against peers at collectives, [rank index][step index] in ms, null where it has none.
Json LatenessMs(const TraceStore& store, const model::JobModel& job, const diagnosis::DiagnosisResult& result) {
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
  return late;
}

Json BuildTimeline(const TraceStore& store, const std::vector<SliceRows>& rows_by_rank, const model::JobModel& job,
                   const diagnosis::DiagnosisResult& result, const diagnosis::TimelineFacts& facts) {
  const size_t ranks = store.ranks.size();
  const size_t step_index = facts.step_index;
  const int64_t step = job.steps.steps[step_index];
  std::map<int32_t, size_t> index_of;
  for (size_t r = 0; r < ranks; ++r) index_of[store.ranks[r].rank] = r;
  std::vector<size_t> stragglers;
  for (const auto& s : result.stragglers)
    if (index_of.count(s.rank.value())) stragglers.push_back(index_of[s.rank.value()]);
  const std::vector<size_t> shown = TimelineRows(stragglers, result.drawn.busy_ns, step_index, ranks);
  auto offset = [&](size_t r) { return r < job.clocks.offset_ns.size() ? job.clocks.offset_ns[r] : 0; };
  const model::StepWindow* windows[kMaxTimelineRows * 2] = {};
  int64_t t0 = INT64_MAX;
  for (size_t i = 0; i < shown.size(); ++i)
    for (const model::StepWindow& w : job.steps.by_rank[shown[i]])
      if (w.step == step) windows[i] = &w, t0 = std::min(t0, w.start_ns - offset(shown[i]));
  if (t0 == INT64_MAX) return nullptr;
  // The culprit: the top finding's op on the late rank the diagnosis names (its slices in the step).
  const diagnosis::Finding* top = result.findings.empty() ? nullptr : &result.findings.front();
  const StringId culprit_name = top && top->op ? store.strings.find(*top->op) : static_cast<StringId>(-1);
  const size_t late = facts.late_rank.value_or(ranks);
  const int64_t chain = facts.chain_collective ? static_cast<int64_t>(*facts.chain_collective) : -1;
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
  if (facts.busy_vs_peers) out["compare"] = Compare(*facts.busy_vs_peers, result.drawn.stages, late);
  if (chain >= 0)
    out["collective"] = std::string(store.strings.view(job.collectives.matched[static_cast<size_t>(chain)].key));
  out["shown_of"] = ranks;
  out["rows"] = std::move(rows);
  return out;
}

}  // namespace

nlohmann::ordered_json BuildReportView(const TraceStore& store, const diagnosis::DiagnosisResult& result) {
  Json view;
  const std::vector<SliceRows> rows = SlicesByRank(store);
  const model::JobModel job = model::BuildJobModel(store, rows);
  const diagnosis::DrawnFacts& facts = result.drawn;
  const size_t ranks = store.ranks.size();
  view["ranks"] = store.RankNumbers();
  view["steps"] = job.steps.steps;
  view["stages"] = facts.stages.empty() ? Json(nullptr) : Json(facts.stages);
  view["step_ms"] = StepMs(job, ranks);
  // The busy matrix as the diagnosis measured it (NaN everywhere when it measured none: a result of
  // Flight Recorder dumps alone). An op table has no collective calls of the trace kind: its ranks are
  // compared by compute time (the sum of their compute ops) and op durations instead.
  const std::vector<std::vector<double>> busy =
      facts.busy_ns.size() == ranks
          ? facts.busy_ns
          : std::vector<std::vector<double>>(ranks, std::vector<double>(job.steps.steps.size(), std::nan("")));
  view[facts.busy_is_compute ? "compute_ms" : "busy_ms"] = NsMatrix(busy);
  view["ks"] = KsView(store, facts.ks);
  view["layers"] = facts.layers ? Json{{"finding", facts.layers->finding},
                                       {"peers_median", RankLayerMetricsJson(facts.layers->peers_median)}}
                                : Json(nullptr);
  if (!result.lateness_vs_peers_ms.empty()) view["lateness_ms"] = LatenessMs(store, job, result);
  if (!facts.timeline || job.steps.steps.empty() || ranks == 0) {
    view["timeline"] = nullptr;
  } else if (facts.busy_is_compute) {
    view["timeline"] = OpTableTimeline(store, rows, job, *facts.timeline);
  } else {
    view["timeline"] = BuildTimeline(store, rows, job, result, *facts.timeline);
  }
  return view;
}

}  // namespace strata
