// ComputeWhatIf: view -> recorded inputs -> recorded / no-delay / ideal replays -> attributions.
#include "analysis/whatif/whatif.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "analysis/whatif/op_table_view.h"
#include "analysis/whatif/replay.h"
#include "core/robust_stats.h"

namespace strata::whatif {

namespace {

constexpr double kNsPerMs = 1e6;

/// Replays restored from the ideal: a fresh cost array each time, so calls are independent.
class Attributor {
 public:
  Attributor(const OpTableView& view, const Replayer& replayer, const std::vector<double>& recorded_cost,
             const std::vector<double>& ideal_cost, const std::vector<double>& ideal_steps)
      : view_(view),
        replayer_(replayer),
        recorded_(recorded_cost),
        ideal_(ideal_cost),
        ideal_steps_(ideal_steps),
        ideal_mean_(Mean(ideal_steps)) {}

  /// Restores the nodes for which `pick(node)` holds, on dp index `dp` only (or all when dp < 0).
  template <typename Pick>
  Attribution Restore(Pick pick, int dp) const {
    std::vector<double> cost = ideal_;
    const size_t I = view_.instances();
    const size_t D = view_.num_dp();
    const auto& nodes = view_.graph.nodes();
    for (size_t n = 0; n < nodes.size(); ++n) {
      if (!pick(nodes[n])) continue;
      const size_t base = n * I;
      if (dp < 0) {
        std::copy(recorded_.begin() + base, recorded_.begin() + base + I, cost.begin() + base);
      } else {
        for (size_t i = static_cast<size_t>(dp); i < I; i += D) cost[base + i] = recorded_[base + i];
      }
    }
    const std::vector<double> steps = replayer_.Run(cost, {});
    Attribution a;
    const double mean = Mean(steps);
    a.ratio = ideal_mean_ > 0 ? mean / ideal_mean_ : 1.0;
    a.excess_ms = (mean - ideal_mean_) / kNsPerMs;
    a.step_ratio.reserve(steps.size());
    for (size_t s = 0; s < steps.size(); ++s)
      a.step_ratio.push_back(ideal_steps_[s] > 0 ? steps[s] / ideal_steps_[s] : 1.0);
    return a;
  }

 private:
  const OpTableView& view_;
  const Replayer& replayer_;
  const std::vector<double>& recorded_;
  const std::vector<double>& ideal_;
  const std::vector<double>& ideal_steps_;
  double ideal_mean_;
};

}  // namespace

Expected<WhatIfResult> ComputeWhatIf(const TraceStore& store, const WhatIfOptions& options) {
  auto built = BuildOpTableView(store, options.graph);
  if (!built.ok()) return built.status();
  const OpTableView& view = built.value();
  const OpGraph& graph = view.graph;
  const Replayer replayer(graph, view.steps.size(), view.num_dp());
  const RecordedInputs rec = replayer.Derive(view.start, view.end);
  const size_t I = view.instances();
  const size_t N = graph.nodes().size();

  WhatIfResult r;
  r.num_dp = static_cast<int32_t>(view.num_dp());
  r.num_stages = view.num_stages;
  r.num_chunks = graph.num_chunks();
  r.ops_per_step = N * view.num_dp();
  r.comm_groups = graph.groups().size();
  r.template_step = view.template_step;
  r.skipped_steps = view.skipped_steps;
  r.skip_example = view.skip_example;
  r.imputed_ops = view.imputed_ops;
  r.imputed_steps = view.imputed_steps;
  r.ignored_op_types = view.ignored_op_types;
  r.ignored_op_ns = view.ignored_op_ns;
  r.known_op_ns = view.known_op_ns;
  r.negative_launch_delays = rec.negative_delays;
  r.most_negative_launch_delay_ms = rec.most_negative_delay / kNsPerMs;
  r.negative_transfers = rec.negative_transfers;
  r.most_negative_transfer_ms = rec.most_negative_transfer / kNsPerMs;

  // The ideal: mean duration per compute type, median transfer per communication type.
  std::vector<std::vector<double>> by_type(kNumOpTypes);
  for (size_t n = 0; n < N; ++n) {
    auto& v = by_type[static_cast<int>(graph.nodes()[n].type)];
    v.insert(v.end(), rec.cost.begin() + n * I, rec.cost.begin() + (n + 1) * I);
  }
  std::vector<double> type_cost(kNumOpTypes, 0.0);
  for (int t = 0; t < kNumOpTypes; ++t) {
    if (by_type[t].empty()) continue;
    const OpType type = static_cast<OpType>(t);
    const bool median = IsCommunication(type) || options.compute_median;
    type_cost[t] = median ? Median(std::move(by_type[t])) : Mean(by_type[t]);
    r.ideal_cost_ms[std::string(OpTypeName(type))] = type_cost[t] / kNsPerMs;
  }
  std::vector<double> ideal_cost(rec.cost.size());
  for (size_t n = 0; n < N; ++n)
    std::fill(ideal_cost.begin() + n * I, ideal_cost.begin() + (n + 1) * I,
              type_cost[static_cast<int>(graph.nodes()[n].type)]);

  const std::vector<double> replayed = replayer.Run(rec.cost, rec.delay);
  const std::vector<double> no_delay = replayer.Run(rec.cost, {});
  const std::vector<double> ideal = replayer.Run(ideal_cost, {});
  for (size_t s = 0; s < view.steps.size(); ++s) {
    StepTimes st;
    st.step = view.steps[s];
    st.recorded_ms = view.recorded_step_ns[s] / kNsPerMs;
    st.replayed_ms = replayed[s] / kNsPerMs;
    st.no_delay_ms = no_delay[s] / kNsPerMs;
    st.ideal_ms = ideal[s] / kNsPerMs;
    if (st.recorded_ms > 0)
      r.max_replay_error = std::max(r.max_replay_error, std::abs(st.replayed_ms - st.recorded_ms) / st.recorded_ms);
    r.steps.push_back(st);
  }
  r.recorded_step_ms = Mean(view.recorded_step_ns) / kNsPerMs;
  r.replayed_step_ms = Mean(replayed) / kNsPerMs;
  r.no_delay_step_ms = Mean(no_delay) / kNsPerMs;
  r.ideal_step_ms = Mean(ideal) / kNsPerMs;
  r.slowdown = r.ideal_step_ms > 0 ? r.no_delay_step_ms / r.ideal_step_ms : 1.0;
  r.waste = r.slowdown > 0 ? 1.0 - 1.0 / r.slowdown : 0.0;
  r.launch_slowdown = r.no_delay_step_ms > 0 ? r.recorded_step_ms / r.no_delay_step_ms : 1.0;
  if (!options.attribution) return r;

  const Attributor attr(view, replayer, rec.cost, ideal_cost, ideal);
  auto all = [](const OpNode&) { return true; };
  for (size_t d = 0; d < view.num_dp(); ++d) r.by_rank[view.dp_ranks[d]] = attr.Restore(all, static_cast<int>(d));
  for (int32_t s = 0; s < view.num_stages; ++s)
    r.by_stage[s] = attr.Restore([s](const OpNode& n) { return n.stage == s; }, -1);
  std::vector<bool> present(kNumOpTypes, false);
  for (const OpNode& n : graph.nodes()) present[static_cast<int>(n.type)] = true;
  for (int t = 0; t < kNumOpTypes; ++t) {
    if (!present[t]) continue;
    const OpType type = static_cast<OpType>(t);
    r.by_op_type[std::string(OpTypeName(type))] = attr.Restore([type](const OpNode& n) { return n.type == type; }, -1);
  }
  for (int t = 0; t < kNumOpTypes; ++t) {
    if (!present[t]) continue;
    const std::string_view group = OpGroupName(static_cast<OpType>(t));
    if (r.by_op_group.count(std::string(group))) continue;
    r.by_op_group[std::string(group)] =
        attr.Restore([group](const OpNode& n) { return OpGroupName(n.type) == group; }, -1);
  }
  if (options.per_worker) {
    for (size_t d = 0; d < view.num_dp(); ++d)
      for (int32_t s = 0; s < view.num_stages; ++s) {
        WorkerAttribution w;
        w.dp_rank = view.dp_ranks[d];
        w.stage = s;
        w.rank = view.worker_rank[d * view.num_stages + s];
        w.attribution = attr.Restore([s](const OpNode& n) { return n.stage == s; }, static_cast<int>(d));
        r.by_worker.push_back(std::move(w));
      }
  }
  return r;
}

Expected<std::vector<StepTimes>> ReplayRecordedSteps(const TraceStore& store, const OpGraphOptions& options) {
  auto built = BuildOpTableView(store, options);
  if (!built.ok()) return built.status();
  const OpTableView& view = built.value();
  const Replayer replayer(view.graph, view.steps.size(), view.num_dp());
  const RecordedInputs rec = replayer.Derive(view.start, view.end);
  const std::vector<double> replayed = replayer.Run(rec.cost, rec.delay);
  std::vector<StepTimes> out;
  for (size_t s = 0; s < view.steps.size(); ++s) {
    StepTimes st;
    st.step = view.steps[s];
    st.recorded_ms = view.recorded_step_ns[s] / kNsPerMs;
    st.replayed_ms = replayed[s] / kNsPerMs;
    out.push_back(st);
  }
  return out;
}

std::vector<RankedAttribution> RankAttributions(const WhatIfResult& result) {
  std::vector<RankedAttribution> out;
  auto add = [&](AttributionKind kind, std::string key, const Attribution& a) {
    out.push_back(RankedAttribution{kind, std::move(key), a.ratio, a.excess_ms});
  };
  for (const auto& w : result.by_worker)
    add(AttributionKind::kWorker, fmt::format("dp{}/stage{}", w.dp_rank, w.stage), w.attribution);
  for (const auto& [dp, a] : result.by_rank) add(AttributionKind::kDpRank, std::to_string(dp), a);
  for (const auto& [s, a] : result.by_stage) add(AttributionKind::kStage, std::to_string(s), a);
  for (const auto& [t, a] : result.by_op_type) add(AttributionKind::kOpType, t, a);
  std::stable_sort(out.begin(), out.end(),
                   [](const RankedAttribution& a, const RankedAttribution& b) { return a.excess_ms > b.excess_ms; });
  return out;
}

}  // namespace strata::whatif
