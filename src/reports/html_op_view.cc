// The op-table parts of the HTML report's view (see html_op_view.h).
#include "reports/html_op_view.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>

#include "analysis/whatif/op_graph.h"
#include "core/robust_stats.h"
#include "reports/html_view.h"

namespace strata {

namespace {

using Json = nlohmann::ordered_json;

double OpViewMs(double ns) { return std::round(ns / 1e3) / 1e3; }

/// The op type of every interned name of op-table rows (nullopt: a type the what-if does not know), resolved
/// once per name.
class OpTypes {
 public:
  explicit OpTypes(const TraceStore& store) : store_(store) {}
  std::optional<whatif::OpType> Of(uint32_t row) {
    if (!(store_.slices.flags[row] & kSliceOpLayout)) return std::nullopt;
    const StringId name = store_.slices.name[row];
    auto [it, fresh] = cache_.try_emplace(name, std::nullopt);
    if (fresh) it->second = whatif::OpTypeFromName(store_.strings.view(name));
    return it->second;
  }
  bool IsCompute(uint32_t row) {
    const auto t = Of(row);
    return t && !whatif::IsCommunication(*t);
  }

 private:
  const TraceStore& store_;
  std::unordered_map<StringId, std::optional<whatif::OpType>> cache_;
};

/// One rank's ops of one step, as intervals (absolute ns) by kind, the culprit type's in start order.
struct RankOps {
  int64_t first = INT64_MAX, last = INT64_MIN;
  std::vector<std::pair<int64_t, int64_t>> compute, comm, same;
};

RankOps OpsInStep(const TraceStore& store, const SliceRows& rows, int64_t step, OpTypes& types, StringId culprit) {
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

/// The culprit op type's name: the top finding's op when it names a known op type, else the compute type the
/// `late` rank exceeds its peers' median in most in `step`.
StringId CulpritOp(const TraceStore& store, const std::vector<SliceRows>& rows_by_rank,
                   const diagnosis::DiagnosisResult& result, size_t late, const std::vector<size_t>& peers,
                   int64_t step, OpTypes& types) {
  const diagnosis::Finding* top = result.findings.empty() ? nullptr : &result.findings.front();
  if (top && top->op && whatif::OpTypeFromName(*top->op)) {
    const StringId id = store.strings.find(*top->op);
    if (id != static_cast<StringId>(-1)) return id;
  }
  std::map<StringId, std::vector<double>> sum_by_type;  // [0] the late rank, then the peers
  auto add = [&](size_t r, size_t slot) {
    for (const SliceId row : rows_by_rank[r]) {
      if (store.slices.step[row.value] != step || !types.IsCompute(row.value)) continue;
      auto& v = sum_by_type[store.slices.name[row.value]];
      v.resize(peers.size() + 1, 0.0);
      v[slot] += static_cast<double>(store.slices.dur_ns[row.value]);
    }
  };
  add(late, 0);
  for (size_t i = 0; i < peers.size(); ++i) add(peers[i], i + 1);
  StringId best = static_cast<StringId>(-1);
  double widest = -1;
  for (auto& [name, v] : sum_by_type) {
    v.resize(peers.size() + 1, 0.0);
    const double excess = v[0] - (peers.empty() ? 0.0 : Median(std::vector<double>(v.begin() + 1, v.end())));
    if (excess > widest) widest = excess, best = name;
  }
  return best;
}

/// The culprit rank index of the step: the top finding's rank, else the first straggler, else the rank with
/// the most compute in the step.
size_t LateRank(const TraceStore& store, const diagnosis::DiagnosisResult& result,
                const std::vector<std::vector<double>>& compute, size_t step_index) {
  std::map<int32_t, size_t> index_of;
  for (size_t r = 0; r < store.ranks.size(); ++r) index_of[store.ranks[r].rank] = r;
  const diagnosis::Finding* top = result.findings.empty() ? nullptr : &result.findings.front();
  if (top && top->rank && index_of.count(*top->rank)) return index_of[*top->rank];
  for (const auto& s : result.stragglers)
    if (index_of.count(s.rank)) return index_of[s.rank];
  size_t late = 0;
  for (size_t r = 1; r < compute.size(); ++r)
    if (!std::isnan(compute[r][step_index]) &&
        (std::isnan(compute[late][step_index]) || compute[r][step_index] > compute[late][step_index]))
      late = r;
  return late;
}

/// Whom the peers are compared as: a slow stage's ranks (the top finding names ranks but no single rank, as a
/// stage_imbalance does) against the ranks of the other stages, else a rank against the other dp ranks of its
/// pipeline stage, else against all other ranks.
enum class PeerKind { kOtherStages, kSameStage, kAllOthers };

/// The peers drawn beside `late` (see PeerKind) that have the step: all of them up to kMaxTimelineRows − 1
/// for a stage's peers, else the fastest, median and slowest; spread over the peers' compute times.
std::vector<size_t> PeersOf(const TraceStore& store, const diagnosis::DiagnosisResult& result,
                            const std::vector<std::vector<double>>& compute, size_t late, size_t step_index,
                            PeerKind* kind) {
  const diagnosis::Finding* top = result.findings.empty() ? nullptr : &result.findings.front();
  const std::vector<int32_t> group = top && !top->rank && top->ranks.size() > 1 ? top->ranks : std::vector<int32_t>{};
  auto in_group = [&](size_t r) { return std::count(group.begin(), group.end(), store.ranks[r].rank) > 0; };
  std::vector<std::pair<double, size_t>> others, stage_peers, outside;
  const int32_t stage = store.ranks[late].pp_stage;
  for (size_t r = 0; r < compute.size(); ++r) {
    if (r == late || std::isnan(compute[r][step_index])) continue;
    others.push_back({compute[r][step_index], r});
    if (stage >= 0 && store.ranks[r].pp_stage == stage) stage_peers.push_back({compute[r][step_index], r});
    if (!group.empty() && !in_group(r)) outside.push_back({compute[r][step_index], r});
  }
  *kind = !outside.empty() && in_group(late) ? PeerKind::kOtherStages
          : !stage_peers.empty()             ? PeerKind::kSameStage
                                             : PeerKind::kAllOthers;
  std::vector<std::pair<double, size_t>>& pool = *kind == PeerKind::kOtherStages ? outside
                                                 : *kind == PeerKind::kSameStage ? stage_peers
                                                                                 : others;
  std::sort(pool.begin(), pool.end());
  const size_t want = *kind == PeerKind::kAllOthers ? 3 : kMaxTimelineRows - 1;
  std::vector<size_t> out;
  if (pool.size() <= want) {
    for (const auto& p : pool) out.push_back(p.second);
  } else {
    for (size_t k = 0; k < want; ++k) out.push_back(pool[k * (pool.size() - 1) / (want - 1)].second);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::string PeersName(PeerKind kind, int32_t stage) {
  switch (kind) {
    case PeerKind::kOtherStages:
      return "the ranks of the other stages";
    case PeerKind::kSameStage:
      return "other dp ranks of stage " + std::to_string(stage);
    case PeerKind::kAllOthers:
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

/// The instance (order within the step) of the culprit op on `ops[0]` (the late rank) that exceeds the
/// peers' median duration of the same instance most; -1 when the late rank has none.
int64_t ChainInstance(const std::vector<RankOps>& ops, double* late_ns, double* peers_ns) {
  int64_t best = -1;
  double widest = -INFINITY;
  for (size_t k = 0; k < ops[0].same.size(); ++k) {
    std::vector<double> peer;
    for (size_t i = 1; i < ops.size(); ++i)
      if (k < ops[i].same.size()) peer.push_back(static_cast<double>(ops[i].same[k].second - ops[i].same[k].first));
    const double mine = static_cast<double>(ops[0].same[k].second - ops[0].same[k].first);
    const double med = peer.empty() ? 0.0 : Median(peer);
    if (mine - med > widest) widest = mine - med, best = static_cast<int64_t>(k), *late_ns = mine, *peers_ns = med;
  }
  return best;
}

}  // namespace

std::vector<std::vector<double>> OpTableComputeNs(const TraceStore& store, const std::vector<SliceRows>& rows_by_rank,
                                                  const model::JobModel& job) {
  OpTypes types(store);
  std::map<int64_t, size_t> step_index;
  for (size_t s = 0; s < job.steps.steps.size(); ++s) step_index[job.steps.steps[s]] = s;
  std::vector<std::vector<double>> out(store.ranks.size(), std::vector<double>(step_index.size(), std::nan("")));
  bool any = false;
  for (size_t r = 0; r < rows_by_rank.size() && r < out.size(); ++r) {
    for (const SliceId row : rows_by_rank[r]) {
      if (!types.IsCompute(row.value)) continue;
      auto it = step_index.find(store.slices.step[row.value]);
      if (it == step_index.end()) continue;
      double& cell = out[r][it->second];
      cell =
          (std::isnan(cell) ? 0.0 : cell) + static_cast<double>(std::max<int64_t>(0, store.slices.dur_ns[row.value]));
      any = true;
    }
  }
  if (!any) out.clear();
  return out;
}

Json OpTableKs(const TraceStore& store, const std::vector<SliceRows>& rows_by_rank) {
  const size_t ranks = store.ranks.size();
  if (ranks < 2) return nullptr;
  OpTypes types(store);
  std::vector<std::vector<double>> samples(ranks);
  for (size_t r = 0; r < ranks && r < rows_by_rank.size(); ++r) {
    for (const SliceId row : rows_by_rank[r])
      if (types.IsCompute(row.value)) samples[r].push_back(static_cast<double>(store.slices.dur_ns[row.value]));
    std::sort(samples[r].begin(), samples[r].end());
  }
  // The score per rank as the trace path defines it (straggler.h).
  std::vector<double> score(ranks, 0.0);
  if (ranks <= kMaxKsGroups) {
    for (size_t a = 0; a < ranks; ++a) {
      for (size_t b = 0; b < ranks; ++b)
        if (a != b) score[a] += KsDistanceSorted(samples[a], samples[b]);
      score[a] /= static_cast<double>(ranks - 1);
    }
  } else {
    std::vector<double> pooled;
    for (const auto& s : samples) pooled.insert(pooled.end(), s.begin(), s.end());
    std::sort(pooled.begin(), pooled.end());
    for (size_t a = 0; a < ranks; ++a) score[a] = KsDistanceSorted(samples[a], pooled);
  }
  // The matrix drawn: ranks, or consecutive ranks pooled into at most kMaxKsGroups groups.
  const size_t size = (ranks + kMaxKsGroups - 1) / kMaxKsGroups;
  std::vector<std::vector<double>> groups;
  Json labels = Json::array();
  for (size_t a = 0; a < ranks; a += size) {
    const size_t b = std::min(ranks, a + size);
    std::vector<double> g;
    for (size_t r = a; r < b; ++r) g.insert(g.end(), samples[r].begin(), samples[r].end());
    std::sort(g.begin(), g.end());
    groups.push_back(std::move(g));
    labels.push_back(b - a > 1 ? fmt::format("r{}–{}", store.ranks[a].rank, store.ranks[b - 1].rank)
                               : std::to_string(store.ranks[a].rank));
  }
  Json matrix = Json::array();
  for (size_t i = 0; i < groups.size(); ++i) {
    Json row = Json::array();
    for (size_t j = 0; j < groups.size(); ++j)
      row.push_back(i == j ? 0.0 : std::round(KsDistanceSorted(groups[i], groups[j]) * 1e4) / 1e4);
    matrix.push_back(std::move(row));
  }
  Json out;
  out["of"] = "compute op durations";
  out["group_size"] = size;
  out["labels"] = std::move(labels);
  out["matrix"] = std::move(matrix);
  Json scores = Json::array();
  for (double s : score) scores.push_back(std::round(s * 1e4) / 1e4);
  out["score"] = std::move(scores);
  return out;
}

Json OpTableTimeline(const TraceStore& store, const std::vector<SliceRows>& rows_by_rank, const model::JobModel& job,
                     const diagnosis::DiagnosisResult& result, const std::vector<std::vector<double>>& compute,
                     size_t step_index) {
  const int64_t step = job.steps.steps[step_index];
  const size_t late = LateRank(store, result, compute, step_index);
  PeerKind kind = PeerKind::kAllOthers;
  const std::vector<size_t> peers = PeersOf(store, result, compute, late, step_index, &kind);
  OpTypes types(store);
  const StringId culprit = CulpritOp(store, rows_by_rank, result, late, peers, step, types);
  std::vector<size_t> shown = {late};
  shown.insert(shown.end(), peers.begin(), peers.end());
  std::vector<RankOps> ops;
  int64_t t0 = INT64_MAX;
  for (size_t r : shown) {
    ops.push_back(OpsInStep(store, rows_by_rank[r], step, types, culprit));
    t0 = std::min(t0, ops.back().first);
  }
  if (t0 == INT64_MAX || ops[0].first == INT64_MAX) return nullptr;
  double late_ns = 0, peers_ns = 0;
  const int64_t k = ChainInstance(ops, &late_ns, &peers_ns);
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
  out["peers"] = PeersName(kind, store.ranks[late].pp_stage);
  if (k >= 0) out["chain_op"] = {{"index", k}, {"late_ms", OpViewMs(late_ns)}, {"peers_median_ms", OpViewMs(peers_ns)}};
  out["shown_of"] = store.ranks.size();
  out["rows"] = std::move(rows);
  return out;
}

}  // namespace strata
