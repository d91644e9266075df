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

#include "core/robust_stats.h"

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

/// The rows of modelled op types and the workers (one recorded rank per (dp rank, stage)) they belong to.
struct Collected {
  std::vector<Row> rows;
  std::vector<Worker> workers;
};

Expected<Collected> CollectRows(const TraceStore& store, OpTableView* view) {
  const SliceTable& sl = store.slices;
  Collected c;
  std::vector<int32_t> worker_of_rank(store.ranks.size(), -1);
  std::map<std::pair<int32_t, int32_t>, uint32_t> worker_at;
  std::unordered_map<StringId, int> type_of_name;  // op types by interned name, resolved once per name
  c.rows.reserve(sl.size());
  for (size_t i = 0; i < sl.size(); ++i) {
    if (!(sl.flags[i] & kSliceOpLayout)) continue;
    auto [it, inserted] = type_of_name.try_emplace(sl.name[i], -1);
    if (inserted) {
      if (auto t = OpTypeFromName(store.strings.view(sl.name[i]))) it->second = static_cast<int>(*t);
    }
    if (it->second < 0) {
      const std::string name(store.strings.view(sl.name[i]));
      ++view->ignored_op_types[name];
      view->ignored_op_ns[name] += std::max<int64_t>(0, sl.dur_ns[i]);
      continue;
    }
    view->known_op_ns += std::max<int64_t>(0, sl.dur_ns[i]);
    const uint32_t rank_index = store.track(sl.track[i]).rank;
    if (worker_of_rank[rank_index] < 0) {
      const RankInfo& r = store.ranks[rank_index];
      const int32_t dp = r.dp_rank >= 0 ? r.dp_rank : r.rank;
      const int32_t stage = r.pp_stage >= 0 ? r.pp_stage : 0;
      auto [w, fresh] = worker_at.try_emplace({dp, stage}, static_cast<uint32_t>(c.workers.size()));
      if (!fresh) {
        return Status::BadInput(
            fmt::format("what-if: ranks {} and {} are both dp rank {} stage {}; the model needs one recorded rank per "
                        "(dp rank, stage) (record one tensor-parallel rank per worker)",
                        c.workers[w->second].rank, r.rank, dp, stage));
      }
      c.workers.push_back(Worker{dp, stage, r.rank});
      worker_of_rank[rank_index] = static_cast<int32_t>(w->second);
    }
    const OpLayout* layout = sl.args[i] < store.op_layout.size() ? &store.op_layout[sl.args[i]] : nullptr;
    c.rows.push_back(Row{sl.step[i], static_cast<uint32_t>(worker_of_rank[rank_index]), static_cast<OpType>(it->second),
                         layout ? layout->seq_id : -1, layout ? layout->chunk : -1, sl.ts_ns[i],
                         sl.ts_ns[i] + sl.dur_ns[i]});
  }
  if (c.rows.empty()) {
    std::string seen;
    size_t listed = 0;
    for (const auto& [name, rows] : view->ignored_op_types)
      if (listed++ < 6) seen += fmt::format("{}{} ({} rows)", seen.empty() ? "" : ", ", name, rows);
    return Status::BadInput(fmt::format(
        "what-if: no op-table rows of a known op type (forward-compute, backward-compute, ...){}; the what-if "
        "analysis needs a per-op table with step, dp_rank and stage columns (map other names with --op-map "
        "FROM=TO)",
        seen.empty() ? std::string() : "; the table's op types are " + seen));
  }
  return c;
}

/// Numbers the ops of each (step, worker, type): the recorded seq_id when every row has one (it is the start
/// order), else by sorting on start time.
std::vector<int32_t> NumberOps(const std::vector<Row>& rows) {
  std::vector<int32_t> pos(rows.size());
  bool have_seq = true;
  for (const Row& r : rows) have_seq = have_seq && r.seq_id >= 0;
  if (have_seq) {
    for (size_t i = 0; i < rows.size(); ++i) pos[i] = rows[i].seq_id;
    return pos;
  }
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
  return pos;
}

/// Every (node, step, dp) slot of all recorded steps, slot = node * I_all + step * D + dp; why a step cannot
/// be used (`bad`), and how many of its slots are filled.
struct Slots {
  size_t N = 0, D = 0, S_all = 0, I_all = 0;
  std::vector<int64_t> start, end;
  std::vector<uint8_t> filled;
  std::vector<size_t> filled_per_step;
  std::vector<std::string> bad;
  size_t at(size_t n, size_t s, size_t d) const { return n * I_all + s * D + d; }
};

/// Places every row in its slot; a row the template lacks, or a second row for one slot, marks its step bad.
Slots PlaceRows(const Collected& c, const std::vector<int32_t>& pos, const std::vector<int32_t>& all_steps,
                const OpTableView& view) {
  Slots sl;
  sl.N = view.graph.nodes().size();
  sl.D = view.dp_ranks.size();
  sl.S_all = all_steps.size();
  sl.I_all = sl.S_all * sl.D;
  sl.start.resize(sl.N * sl.I_all);
  sl.end.resize(sl.N * sl.I_all);
  sl.filled.assign(sl.N * sl.I_all, 0);
  sl.filled_per_step.assign(sl.S_all, 0);
  sl.bad.resize(sl.S_all);
  for (size_t i = 0; i < c.rows.size(); ++i) {
    const Row& r = c.rows[i];
    const Worker& w = c.workers[r.worker];
    const auto s =
        static_cast<size_t>(std::lower_bound(all_steps.begin(), all_steps.end(), r.step) - all_steps.begin());
    const uint32_t node = view.graph.Find(w.stage, r.type, pos[i]);
    if (node == kNoNode) {
      if (sl.bad[s].empty())
        sl.bad[s] = fmt::format("dp rank {} stage {} has a {} op number {} that the template step lacks", w.dp_rank,
                                w.stage, OpTypeName(r.type), pos[i]);
      continue;
    }
    const size_t slot = sl.at(node, s, view.DpIndex(w.dp_rank));
    if (sl.filled[slot]) {
      if (sl.bad[s].empty())
        sl.bad[s] = fmt::format("dp rank {} stage {} has two {} ops numbered {}", w.dp_rank, w.stage,
                                OpTypeName(r.type), pos[i]);
      continue;
    }
    sl.start[slot] = r.start;
    sl.end[slot] = r.end;
    sl.filled[slot] = 1;
    ++sl.filled_per_step[s];
  }
  return sl;
}

/// Fills a few missing ops of a step (at most kMaxImputedShare of its slots) from the same op on the other dp
/// ranks of that step (their median start and end).
void ImputeHoles(const std::vector<int32_t>& all_steps, Slots* sl, OpTableView* view) {
  const size_t N = sl->N, D = sl->D;
  const auto max_holes = std::max<size_t>(1, static_cast<size_t>(kMaxImputedShare * static_cast<double>(N * D)));
  for (size_t s = 0; s < sl->S_all; ++s) {
    const size_t holes = N * D - std::min(N * D, sl->filled_per_step[s]);
    if (!sl->bad[s].empty() || holes == 0 || holes > max_holes) continue;
    std::vector<size_t> fill;
    for (size_t n = 0; n < N; ++n)
      for (size_t d = 0; d < D; ++d) {
        const size_t slot = sl->at(n, s, d);
        if (sl->filled[slot]) continue;
        std::vector<int64_t> starts, ends;
        for (size_t e = 0; e < D; ++e)
          if (sl->filled[sl->at(n, s, e)]) {
            starts.push_back(sl->start[sl->at(n, s, e)]);
            ends.push_back(sl->end[sl->at(n, s, e)]);
          }
        if (starts.empty()) continue;  // no dp rank has it: the step stays incomplete
        sl->start[slot] = Median(std::move(starts));
        sl->end[slot] = std::max(sl->start[slot], Median(std::move(ends)));
        fill.push_back(slot);
      }
    if (fill.size() != holes) continue;
    for (size_t slot : fill) sl->filled[slot] = 1;
    sl->filled_per_step[s] = N * D;
    view->imputed_ops += holes;
    view->imputed_steps.push_back(all_steps[s]);
  }
}

/// The steps whose every slot is filled; the others are skipped, the first with its reason.
std::vector<size_t> KeepCompleteSteps(const std::vector<int32_t>& all_steps, Slots* sl, OpTableView* view) {
  std::vector<size_t> kept;
  for (size_t s = 0; s < sl->S_all; ++s) {
    if (sl->bad[s].empty() && sl->filled_per_step[s] != sl->N * sl->D) {
      for (size_t n = 0; n < sl->N && sl->bad[s].empty(); ++n)
        for (size_t d = 0; d < sl->D; ++d)
          if (!sl->filled[sl->at(n, s, d)]) {
            sl->bad[s] =
                fmt::format("dp rank {} has no {}", view->dp_ranks[d], view->graph.NodeName(static_cast<uint32_t>(n)));
            break;
          }
    }
    if (sl->bad[s].empty()) {
      kept.push_back(s);
    } else {
      view->skipped_steps.push_back(all_steps[s]);
      if (view->skip_example.empty()) view->skip_example = fmt::format("step {}: {}", all_steps[s], sl->bad[s]);
    }
  }
  return kept;
}

/// Dense arrays of the kept steps, each op's times relative to its step's start.
void FillDense(const std::vector<int32_t>& all_steps, const std::vector<size_t>& kept, const Slots& sl,
               OpTableView* view) {
  const size_t N = sl.N, D = sl.D, S = kept.size(), I = S * D;
  view->steps.reserve(S);
  view->step_start_ns.assign(S, std::numeric_limits<int64_t>::max());
  std::vector<int64_t> step_last(S, std::numeric_limits<int64_t>::min());
  for (size_t k = 0; k < S; ++k) {
    view->steps.push_back(all_steps[kept[k]]);
    for (size_t n = 0; n < N; ++n)
      for (size_t d = 0; d < D; ++d) {
        const size_t slot = sl.at(n, kept[k], d);
        view->step_start_ns[k] = std::min(view->step_start_ns[k], sl.start[slot]);
        step_last[k] = std::max(step_last[k], sl.end[slot]);
      }
  }
  view->start.resize(N * I);
  view->end.resize(N * I);
  for (size_t n = 0; n < N; ++n)
    for (size_t k = 0; k < S; ++k)
      for (size_t d = 0; d < D; ++d) {
        const size_t from = sl.at(n, kept[k], d);
        const size_t to = n * I + k * D + d;
        view->start[to] = static_cast<double>(sl.start[from] - view->step_start_ns[k]);
        view->end[to] = static_cast<double>(sl.end[from] - view->step_start_ns[k]);
      }
  view->recorded_step_ns.resize(S);
  for (size_t k = 0; k < S; ++k) view->recorded_step_ns[k] = static_cast<double>(step_last[k] - view->step_start_ns[k]);
}

}  // namespace

size_t OpTableView::DpIndex(int32_t dp) const {
  return static_cast<size_t>(std::lower_bound(dp_ranks.begin(), dp_ranks.end(), dp) - dp_ranks.begin());
}

// The steps of the layout: collect rows, number ops, build the graph from the template step, place every row
// in its (node, step, dp) slot, fill a few holes, keep the complete steps, and lay them out densely.
Expected<OpTableView> BuildOpTableView(const TraceStore& store, const OpGraphOptions& options) {
  OpTableView view;
  auto collected = CollectRows(store, &view);
  if (!collected.ok()) return collected.status();
  const Collected& c = collected.value();
  const std::vector<int32_t> pos = NumberOps(c.rows);
  std::vector<int32_t> all_steps;
  for (const Row& r : c.rows)
    if (all_steps.empty() || all_steps.back() != r.step) all_steps.push_back(r.step);
  std::sort(all_steps.begin(), all_steps.end());
  all_steps.erase(std::unique(all_steps.begin(), all_steps.end()), all_steps.end());
  for (const Worker& w : c.workers) view.dp_ranks.push_back(w.dp_rank);
  std::sort(view.dp_ranks.begin(), view.dp_ranks.end());
  view.dp_ranks.erase(std::unique(view.dp_ranks.begin(), view.dp_ranks.end()), view.dp_ranks.end());
  std::tie(view.template_step, view.template_dp_rank) = ChooseTemplate(c.rows, c.workers);

  // The model, from the template step of the template dp rank.
  std::vector<TemplateOp> tmpl;
  for (size_t i = 0; i < c.rows.size(); ++i) {
    const Row& r = c.rows[i];
    const Worker& w = c.workers[r.worker];
    if (r.step != view.template_step || w.dp_rank != view.template_dp_rank) continue;
    tmpl.push_back(TemplateOp{w.stage, r.type, pos[i], r.chunk, r.start, r.end});
  }
  auto graph = BuildOpGraph(tmpl, options);
  if (!graph.ok()) {
    return graph.status().Reworded(
        fmt::format("{} (template: step {}, dp rank {})", graph.error(), view.template_step, view.template_dp_rank));
  }
  view.graph = std::move(graph).value();
  view.num_stages = view.graph.num_stages();

  Slots slots = PlaceRows(c, pos, all_steps, view);
  ImputeHoles(all_steps, &slots, &view);
  const std::vector<size_t> kept = KeepCompleteSteps(all_steps, &slots, &view);
  if (kept.empty())
    return Status::BadInput(fmt::format("what-if: no step has the ops of the template step ({})", view.skip_example));
  FillDense(all_steps, kept, slots, &view);
  view.worker_rank.assign(view.dp_ranks.size() * static_cast<size_t>(view.num_stages), -1);
  for (const Worker& w : c.workers)
    if (w.stage < view.num_stages) view.worker_rank[view.DpIndex(w.dp_rank) * view.num_stages + w.stage] = w.rank;
  return view;
}

}  // namespace strata::whatif
