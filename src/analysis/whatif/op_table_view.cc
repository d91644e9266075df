// OpTableView construction: collect op-table rows, number ops of each (step, rank, type) by seq_id (or start
// order), build the graph from the template step, then place every row in its (node, step, dp) slot.
#include "analysis/whatif/op_table_view.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <map>
#include <numeric>
#include <tuple>
#include <unordered_map>

namespace strata::whatif {

namespace {

/// One op-table row of a modelled op type.
struct Row {
  int32_t step;
  uint32_t worker;  // index into the worker list
  OpType type;
  int32_t seq_id;  // recorded seq_id, -1 when absent
  int32_t chunk;
  int64_t start;
  int64_t end;
};

/// One recorded rank: its place in the layout.
struct Worker {
  int32_t dp_rank;
  int32_t stage;
  int32_t rank;
};

/// The template (step, dp rank): the first whose op counts per (stage, op type) are the most common ones.
std::pair<int32_t, int32_t> ChooseTemplate(const std::vector<Row>& rows, const std::vector<Worker>& workers) {
  using Signature = std::map<std::pair<int32_t, int>, int32_t>;  // (stage, type) -> ops
  std::map<std::pair<int32_t, int32_t>, Signature> by_step_dp;   // (step, dp rank) -> its signature
  for (const Row& r : rows) {
    const Worker& w = workers[r.worker];
    ++by_step_dp[{r.step, w.dp_rank}][{w.stage, static_cast<int>(r.type)}];
  }
  std::map<Signature, size_t> frequency;
  for (const auto& [key, sig] : by_step_dp) ++frequency[sig];
  const Signature* mode = nullptr;
  size_t most = 0;
  for (const auto& [sig, n] : frequency)
    if (n > most) most = n, mode = &sig;
  for (const auto& [key, sig] : by_step_dp)  // ordered by (step, dp rank): the first complete one
    if (sig == *mode) return key;
  return by_step_dp.begin()->first;
}

}  // namespace

Expected<OpTableView> BuildOpTableView(const TraceStore& store, const OpGraphOptions& options) {
  OpTableView view;
  const SliceTable& sl = store.slices;

  // Workers: one recorded rank per (dp rank, stage).
  std::vector<int32_t> worker_of_rank(store.ranks.size(), -1);
  std::vector<Worker> workers;
  std::map<std::pair<int32_t, int32_t>, uint32_t> worker_at;

  // Op types by interned name, resolved once per name.
  std::unordered_map<StringId, int> type_of_name;
  std::vector<Row> rows;
  rows.reserve(sl.size());
  for (size_t i = 0; i < sl.size(); ++i) {
    if (!(sl.flags[i] & kSliceOpLayout)) continue;
    auto [it, inserted] = type_of_name.try_emplace(sl.name[i], -1);
    if (inserted) {
      if (auto t = OpTypeFromName(store.strings.view(sl.name[i]))) it->second = static_cast<int>(*t);
    }
    if (it->second < 0) {
      ++view.ignored_op_types[std::string(store.strings.view(sl.name[i]))];
      continue;
    }
    const uint32_t rank_index = store.tracks[sl.track[i]].rank;
    if (worker_of_rank[rank_index] < 0) {
      const RankInfo& r = store.ranks[rank_index];
      const int32_t dp = r.dp_rank >= 0 ? r.dp_rank : r.rank;
      const int32_t stage = r.pp_stage >= 0 ? r.pp_stage : 0;
      auto [w, fresh] = worker_at.try_emplace({dp, stage}, static_cast<uint32_t>(workers.size()));
      if (!fresh) {
        return Status::Error(
            fmt::format("what-if: ranks {} and {} are both dp rank {} stage {}; the model needs one recorded rank per "
                        "(dp rank, stage) (record one tensor-parallel rank per worker)",
                        workers[w->second].rank, r.rank, dp, stage));
      }
      workers.push_back(Worker{dp, stage, r.rank});
      worker_of_rank[rank_index] = static_cast<int32_t>(w->second);
    }
    const OpLayout* layout = sl.args[i] < store.op_layout.size() ? &store.op_layout[sl.args[i]] : nullptr;
    rows.push_back(Row{sl.step[i], static_cast<uint32_t>(worker_of_rank[rank_index]), static_cast<OpType>(it->second),
                       layout ? layout->seq_id : -1, layout ? layout->chunk : -1, sl.ts_ns[i],
                       sl.ts_ns[i] + sl.dur_ns[i]});
  }
  if (rows.empty()) {
    return Status::Error(
        "what-if: no op-table rows of a known op type (forward-compute, backward-compute, ...); the what-if "
        "analysis needs a per-op table with step, dp_rank and stage columns");
  }

  // Number the ops of each (step, worker, type): the recorded seq_id when every row has one (it is the
  // start order), else by sorting on start time.
  std::vector<int32_t> pos(rows.size());
  bool have_seq = true;
  for (const Row& r : rows) have_seq = have_seq && r.seq_id >= 0;
  if (have_seq) {
    for (size_t i = 0; i < rows.size(); ++i) pos[i] = rows[i].seq_id;
  } else {
    std::vector<uint32_t> order(rows.size());
    std::iota(order.begin(), order.end(), 0u);
    std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
      const Row& x = rows[a];
      const Row& y = rows[b];
      return std::tie(x.step, x.worker, x.type, x.start, x.seq_id) <
             std::tie(y.step, y.worker, y.type, y.start, y.seq_id);
    });
    for (size_t k = 0; k < order.size(); ++k) {
      const Row& r = rows[order[k]];
      const bool same = k > 0 && rows[order[k - 1]].step == r.step && rows[order[k - 1]].worker == r.worker &&
                        rows[order[k - 1]].type == r.type;
      pos[order[k]] = same ? pos[order[k - 1]] + 1 : 0;
    }
  }

  // Steps and dp ranks.
  std::vector<int32_t> all_steps;
  for (const Row& r : rows)
    if (all_steps.empty() || all_steps.back() != r.step) all_steps.push_back(r.step);
  std::sort(all_steps.begin(), all_steps.end());
  all_steps.erase(std::unique(all_steps.begin(), all_steps.end()), all_steps.end());
  for (const Worker& w : workers) view.dp_ranks.push_back(w.dp_rank);
  std::sort(view.dp_ranks.begin(), view.dp_ranks.end());
  view.dp_ranks.erase(std::unique(view.dp_ranks.begin(), view.dp_ranks.end()), view.dp_ranks.end());
  auto dp_index = [&](int32_t dp) {
    return static_cast<size_t>(std::lower_bound(view.dp_ranks.begin(), view.dp_ranks.end(), dp) -
                               view.dp_ranks.begin());
  };
  std::tie(view.template_step, view.template_dp_rank) = ChooseTemplate(rows, workers);

  // The model, from the template step of the template dp rank.
  std::vector<TemplateOp> tmpl;
  for (size_t i = 0; i < rows.size(); ++i) {
    const Row& r = rows[i];
    const Worker& w = workers[r.worker];
    if (r.step != view.template_step || w.dp_rank != view.template_dp_rank) continue;
    tmpl.push_back(TemplateOp{w.stage, r.type, pos[i], r.chunk, r.start, r.end});
  }
  auto graph = BuildOpGraph(tmpl, options);
  if (!graph.ok()) {
    return Status::Error(
        fmt::format("{} (template: step {}, dp rank {})", graph.error(), view.template_step, view.template_dp_rank));
  }
  view.graph = std::move(graph).value();
  view.num_stages = view.graph.num_stages();
  const size_t N = view.graph.nodes().size();
  const size_t D = view.dp_ranks.size();
  const size_t S_all = all_steps.size();
  const size_t I_all = S_all * D;

  // Place rows; a step is usable when every (node, dp) slot is filled exactly once.
  std::vector<int64_t> slot_start(N * I_all), slot_end(N * I_all);
  std::vector<uint8_t> filled(N * I_all, 0);
  std::vector<size_t> filled_per_step(S_all, 0);
  std::vector<std::string> bad(S_all);
  auto step_index = [&](int32_t step) {
    return static_cast<size_t>(std::lower_bound(all_steps.begin(), all_steps.end(), step) - all_steps.begin());
  };
  for (size_t i = 0; i < rows.size(); ++i) {
    const Row& r = rows[i];
    const Worker& w = workers[r.worker];
    const size_t s = step_index(r.step);
    const uint32_t node = view.graph.Find(w.stage, r.type, pos[i]);
    if (node == kNoNode) {
      if (bad[s].empty())
        bad[s] = fmt::format("dp rank {} stage {} has a {} op number {} that the template step lacks", w.dp_rank,
                             w.stage, OpTypeName(r.type), pos[i]);
      continue;
    }
    const size_t slot = node * I_all + s * D + dp_index(w.dp_rank);
    if (filled[slot]) {
      if (bad[s].empty())
        bad[s] = fmt::format("dp rank {} stage {} has two {} ops numbered {}", w.dp_rank, w.stage, OpTypeName(r.type),
                             pos[i]);
      continue;
    }
    slot_start[slot] = r.start;
    slot_end[slot] = r.end;
    filled[slot] = 1;
    ++filled_per_step[s];
  }
  // Fill a few missing ops of a step from the same op on the other dp ranks of that step.
  const auto max_holes = std::max<size_t>(1, static_cast<size_t>(kMaxImputedShare * static_cast<double>(N * D)));
  for (size_t s = 0; s < S_all; ++s) {
    const size_t holes = N * D - std::min(N * D, filled_per_step[s]);
    if (!bad[s].empty() || holes == 0 || holes > max_holes) continue;
    std::vector<size_t> fill;
    for (size_t n = 0; n < N; ++n)
      for (size_t d = 0; d < D; ++d) {
        const size_t slot = n * I_all + s * D + d;
        if (filled[slot]) continue;
        std::vector<int64_t> starts, ends;
        for (size_t e = 0; e < D; ++e)
          if (filled[n * I_all + s * D + e]) {
            starts.push_back(slot_start[n * I_all + s * D + e]);
            ends.push_back(slot_end[n * I_all + s * D + e]);
          }
        if (starts.empty()) continue;  // no dp rank has it: the step stays incomplete
        auto median = [](std::vector<int64_t>& v) {
          std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
          return v[v.size() / 2];
        };
        slot_start[slot] = median(starts);
        slot_end[slot] = std::max(slot_start[slot], median(ends));
        fill.push_back(slot);
      }
    if (fill.size() != holes) continue;
    for (size_t slot : fill) filled[slot] = 1;
    filled_per_step[s] = N * D;
    view.imputed_ops += holes;
    view.imputed_steps.push_back(all_steps[s]);
  }

  std::vector<size_t> kept;
  for (size_t s = 0; s < S_all; ++s) {
    if (bad[s].empty() && filled_per_step[s] != N * D) {
      for (size_t n = 0; n < N && bad[s].empty(); ++n)
        for (size_t d = 0; d < D; ++d)
          if (!filled[n * I_all + s * D + d]) {
            bad[s] =
                fmt::format("dp rank {} has no {}", view.dp_ranks[d], view.graph.NodeName(static_cast<uint32_t>(n)));
            break;
          }
    }
    if (bad[s].empty()) {
      kept.push_back(s);
    } else {
      view.skipped_steps.push_back(all_steps[s]);
      if (view.skip_example.empty()) view.skip_example = fmt::format("step {}: {}", all_steps[s], bad[s]);
    }
  }
  if (kept.empty()) {
    return Status::Error(fmt::format("what-if: no step has the ops of the template step ({})", view.skip_example));
  }

  // Dense arrays of the kept steps, relative to each step's start.
  const size_t S = kept.size();
  const size_t I = S * D;
  view.steps.reserve(S);
  view.step_start_ns.assign(S, std::numeric_limits<int64_t>::max());
  std::vector<int64_t> step_last(S, std::numeric_limits<int64_t>::min());
  for (size_t k = 0; k < S; ++k) {
    view.steps.push_back(all_steps[kept[k]]);
    for (size_t n = 0; n < N; ++n)
      for (size_t d = 0; d < D; ++d) {
        const size_t slot = n * I_all + kept[k] * D + d;
        view.step_start_ns[k] = std::min(view.step_start_ns[k], slot_start[slot]);
        step_last[k] = std::max(step_last[k], slot_end[slot]);
      }
  }
  view.start.resize(N * I);
  view.end.resize(N * I);
  for (size_t n = 0; n < N; ++n)
    for (size_t k = 0; k < S; ++k)
      for (size_t d = 0; d < D; ++d) {
        const size_t from = n * I_all + kept[k] * D + d;
        const size_t to = n * I + k * D + d;
        view.start[to] = static_cast<double>(slot_start[from] - view.step_start_ns[k]);
        view.end[to] = static_cast<double>(slot_end[from] - view.step_start_ns[k]);
      }
  view.recorded_step_ns.resize(S);
  for (size_t k = 0; k < S; ++k) view.recorded_step_ns[k] = static_cast<double>(step_last[k] - view.step_start_ns[k]);

  view.worker_rank.assign(D * static_cast<size_t>(view.num_stages), -1);
  for (const Worker& w : workers)
    if (w.stage < view.num_stages) view.worker_rank[dp_index(w.dp_rank) * view.num_stages + w.stage] = w.rank;
  return view;
}

}  // namespace strata::whatif
