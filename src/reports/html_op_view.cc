// The op-table parts of the HTML report's view (see html_op_view.h).
#include "reports/html_op_view.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>

#include "analysis/rank_step_busy.h"
#include "reports/html_view.h"

namespace strata {

namespace {

using Json = nlohmann::ordered_json;

double OpViewMs(double ns) { return std::round(ns / 1e3) / 1e3; }

/// One rank's ops of one step, as intervals (absolute ns) by kind, the culprit type's in start order.
struct RankOps {
  int64_t first = INT64_MAX, last = INT64_MIN;
  std::vector<std::pair<int64_t, int64_t>> compute, comm, same;
};

RankOps OpsInStep(const TraceStore& store, const SliceRows& rows, int64_t step, OpTableTypes& types, StringId culprit) {
  RankOps out;
  const SliceTable& sl = store.slices;
  for (const SliceId row : rows) {
    if (sl.step[row.value] != step) continue;
    const auto type = types.Of(row.value);
    if (!type) continue;
    const int64_t s = sl.ts_ns[row.value], e = s + std::max<int64_t>(0, sl.dur_ns[row.value]);
    out.first = std::min(out.first, s);
    out.last = std::max(out.last, e);
    if (sl.name[row.value] == culprit) {
      out.same.push_back({s, e});
    } else {
      (whatif::IsCommunication(*type) ? out.comm : out.compute).push_back({s, e});
    }
  }
  std::sort(out.same.begin(), out.same.end());
  return out;
}

std::string PeersName(diagnosis::TimelinePeers kind, int32_t stage) {
  switch (kind) {
    case diagnosis::TimelinePeers::kOtherStages:
      return "the ranks of the other stages";
    case diagnosis::TimelinePeers::kSameStage:
      return "other dp ranks of stage " + std::to_string(stage);
    case diagnosis::TimelinePeers::kAllOthers:
      break;
  }
  return "fastest, median and slowest other ranks";
}

Json Intervals(const std::vector<std::pair<int64_t, int64_t>>& v, int64_t t0) {
  Json out = Json::array();
  for (const auto& [s, e] : v) {
    if (out.size() >= kMaxIntervals) break;
    out.push_back({OpViewMs(static_cast<double>(s - t0)), OpViewMs(static_cast<double>(e - t0))});
  }
  return out;
}

}  // namespace

Json OpTableTimeline(const TraceStore& store, const std::vector<SliceRows>& rows_by_rank, const model::JobModel& job,
                     const diagnosis::TimelineFacts& facts) {
  // The diagnosis names no late rank (a healthy job): nothing to draw a rank beside its peers for.
  if (!facts.late_rank) return nullptr;
  const int64_t step = job.steps.steps[facts.step_index];
  const size_t late = *facts.late_rank;
  const std::vector<size_t>& peers = facts.peers;
  OpTableTypes types(store);
  const StringId culprit = facts.culprit_op ? store.strings.find(*facts.culprit_op) : static_cast<StringId>(-1);
  std::vector<size_t> shown = {late};
  shown.insert(shown.end(), peers.begin(), peers.end());
  std::vector<RankOps> ops;
  int64_t t0 = INT64_MAX;
  for (size_t r : shown) {
    ops.push_back(OpsInStep(store, rows_by_rank[r], step, types, culprit));
    t0 = std::min(t0, ops.back().first);
  }
  if (t0 == INT64_MAX || ops[0].first == INT64_MAX) return nullptr;
  const int64_t k = facts.chain_op ? static_cast<int64_t>(facts.chain_op->index) : -1;
  Json rows = Json::array();
  for (size_t i = 0; i < shown.size(); ++i) {
    const RankOps& o = ops[i];
    if (o.first == INT64_MAX) continue;
    Json row;
    row["rank"] = store.ranks[shown[i]].rank;
    row["window"] = {OpViewMs(static_cast<double>(o.first - t0)), OpViewMs(static_cast<double>(o.last - t0))};
    row["compute"] = Intervals(o.compute, t0);
    row["collectives"] = Intervals(o.comm, t0);
    row["culprit"] = i == 0 ? Intervals(o.same, t0) : Json::array();
    row["same_op"] = i == 0 ? Json::array() : Intervals(o.same, t0);
    if (k >= 0 && static_cast<size_t>(k) < o.same.size())
      row["chain_op"] = Intervals({o.same[static_cast<size_t>(k)]}, t0)[0];
    rows.push_back(std::move(row));
  }
  Json out;
  out["kind"] = "op_table";
  out["step"] = step;
  out["late_rank"] = store.ranks[late].rank;
  out["op"] = culprit == static_cast<StringId>(-1) ? Json(nullptr) : Json(std::string(store.strings.view(culprit)));
  out["peers"] = PeersName(facts.peer_kind, store.ranks[late].pp_stage);
  if (facts.chain_op)
    out["chain_op"] = {{"index", k},
                       {"late_ms", OpViewMs(facts.chain_op->duration.late_ns)},
                       {"peers_median_ms", OpViewMs(facts.chain_op->duration.peers_median_ns)}};
  out["shown_of"] = store.ranks.size();
  out["rows"] = std::move(rows);
  return out;
}

}  // namespace strata
