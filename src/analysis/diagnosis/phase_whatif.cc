// Phase what-if replay (see phase_whatif.h).
#include "analysis/diagnosis/phase_whatif.h"

#include <algorithm>
#include <numeric>

#include "core/robust_stats.h"

namespace strata::diagnosis {

namespace {

/// Costs of one step in a replay: seg[k][r], transfer[k], tail[r].
struct StepCosts {
  std::vector<std::vector<double>> seg;
  std::vector<double> transfer;
  std::vector<double> tail;
};

/// One rank's costs in one step: seg[k] and tail (what a replay needs to swap one rank in, O(phases)).
struct RankPhases {
  std::vector<double> seg;
  double tail = 0;
};

RankPhases PhasesOf(const StepCosts& c, size_t r) {
  RankPhases out;
  out.seg.reserve(c.seg.size());
  for (const auto& row : c.seg) out.seg.push_back(row[r]);
  out.tail = c.tail[r];
  return out;
}

/// Largest and second-largest value of a row with the index of the largest, so the maximum without any
/// one rank is O(1).
struct Top2 {
  double first = 0, second = 0;
  size_t arg = 0;
  double Without(size_t r) const { return r == arg ? second : first; }
};

Top2 TopTwo(const std::vector<double>& v) {
  Top2 t;
  t.first = t.second = -1e300;
  for (size_t r = 0; r < v.size(); ++r) {
    if (v[r] > t.first) {
      t.second = t.first;
      t.first = v[r];
      t.arg = r;
    } else if (v[r] > t.second) {
      t.second = v[r];
    }
  }
  if (v.size() == 1) t.second = -1e300;
  return t;
}

/// Since every rank leaves collective k at the same time, a replay is closed-form:
/// step = sum_k (max_r seg[k][r] + transfer[k]) + max_r tail[r].
struct StepReplay {
  std::vector<Top2> seg;
  Top2 tail;
  double transfer_sum = 0;

  explicit StepReplay(const StepCosts& c) : tail(TopTwo(c.tail)) {
    for (size_t k = 0; k < c.transfer.size(); ++k) {
      seg.push_back(TopTwo(c.seg[k]));
      transfer_sum += c.transfer[k];
    }
  }
  double Time() const {
    double t = transfer_sum + tail.first;
    for (const Top2& s : seg) t += s.first;
    return t;
  }
  /// Step time when rank r's phases are replaced by `own` (its compute phases and tail in this step).
  double TimeWithRank(size_t r, const RankPhases& own) const {
    double t = transfer_sum + std::max(tail.Without(r), own.tail);
    for (size_t k = 0; k < seg.size(); ++k) t += std::max(seg[k].Without(r), own.seg[k]);
    return t;
  }
};

/// Every step's recorded costs, and the pools the ideal is made of: compute phases by position, the tail,
/// transfers by collective name.
struct Costs {
  std::vector<StepCosts> recorded;
  std::map<size_t, std::vector<double>> seg_pool;
  std::map<size_t, std::vector<double>> tail_pool;  // by the step's collective count: a step without one is
                                                    // all tail and must not set the tail of the others
  std::map<StringId, std::vector<double>> transfer_pool;
  std::map<size_t, double> seg_mean, seg_sum;
  std::map<size_t, double> tail_mean, tail_sum;
};

/// Whether rank r's compute counts in the ideal's pools: every rank but the named stragglers.
std::vector<bool> PooledRanks(size_t ranks, const std::vector<size_t>& stragglers) {
  std::vector<bool> pooled(ranks, true);
  for (size_t r : stragglers)
    if (r < ranks) pooled[r] = false;
  if (std::find(pooled.begin(), pooled.end(), true) == pooled.end()) pooled.assign(ranks, true);
  return pooled;
}

Costs RecordedCosts(const PhaseModel& phases, size_t ranks, const std::vector<bool>& pooled) {
  Costs out;
  const size_t steps = phases.steps.size();
  out.recorded.resize(steps);
  for (size_t s = 0; s < steps; ++s) {
    const StepPhases& p = phases.steps[s];
    StepCosts& c = out.recorded[s];
    const size_t K = p.instances.size();
    c.seg.assign(K, std::vector<double>(ranks));
    c.transfer.assign(K, 0);
    c.tail.assign(ranks, 0);
    for (size_t k = 0; k < K; ++k) {
      const int64_t latest = *std::max_element(p.arrival[k].begin(), p.arrival[k].end());
      std::vector<double> transfers;
      for (size_t r = 0; r < ranks; ++r) {
        c.seg[k][r] = static_cast<double>(p.seg[k][r]);
        if (pooled[r]) out.seg_pool[k].push_back(c.seg[k][r]);
        transfers.push_back(static_cast<double>(p.completion[k][r] - latest));
      }
      c.transfer[k] = std::max(0.0, Median(transfers));
      out.transfer_pool[p.instances[k]->key].push_back(c.transfer[k]);
    }
    for (size_t r = 0; r < ranks; ++r) {
      c.tail[r] = static_cast<double>(p.tail[r]);
      if (pooled[r]) out.tail_pool[K].push_back(c.tail[r]);
    }
  }
  for (const auto& [k, v] : out.seg_pool) {
    out.seg_mean[k] = Mean(v);
    out.seg_sum[k] = std::accumulate(v.begin(), v.end(), 0.0);
  }
  for (const auto& [K, v] : out.tail_pool) {
    out.tail_mean[K] = Mean(v);
    out.tail_sum[K] = std::accumulate(v.begin(), v.end(), 0.0);
  }
  return out;
}

/// The ideal steps: every compute phase at its mean over ranks and steps, every transfer at its collective's
/// median.
std::vector<StepCosts> IdealCosts(const PhaseModel& phases, const Costs& costs, size_t ranks) {
  std::map<StringId, double> transfer_median;
  for (const auto& [key, v] : costs.transfer_pool) transfer_median[key] = Median(v);
  std::vector<StepCosts> ideal = costs.recorded;
  for (size_t s = 0; s < ideal.size(); ++s) {
    StepCosts& c = ideal[s];
    for (size_t k = 0; k < c.transfer.size(); ++k) {
      for (size_t r = 0; r < ranks; ++r) c.seg[k][r] = costs.seg_mean.at(k);
      c.transfer[k] = transfer_median[phases.steps[s].instances[k]->key];
    }
    for (size_t r = 0; r < ranks; ++r) c.tail[r] = costs.tail_mean.at(c.transfer.size());
  }
  return ideal;
}

/// Rank r fixed: each of its phases at its peers' mean (the rank and the stragglers excluded: the pools
/// without r's own values when r is pooled), in every step, or at its own time where that was shorter: fixing a
/// rank removes its excess and does not slow what it did faster, so the saving is never negative. Only rank
/// r's values are built (O(steps x phases), not a copy of every rank's costs: the loop over ranks stays linear).
std::vector<RankPhases> WithPeersPhases(const Costs& costs, size_t r, bool pooled) {
  const size_t steps = costs.recorded.size();
  std::map<size_t, double> own_sum;
  std::map<size_t, size_t> own_count;
  std::map<size_t, double> own_tail;
  std::map<size_t, size_t> own_tails;
  if (pooled) {
    for (size_t s = 0; s < steps; ++s) {
      for (size_t k = 0; k < costs.recorded[s].transfer.size(); ++k) {
        own_sum[k] += costs.recorded[s].seg[k][r];
        ++own_count[k];
      }
      own_tail[costs.recorded[s].transfer.size()] += costs.recorded[s].tail[r];
      ++own_tails[costs.recorded[s].transfer.size()];
    }
  }
  std::vector<RankPhases> peer(steps);
  for (size_t s = 0; s < steps; ++s) {
    const size_t K = costs.recorded[s].transfer.size();
    peer[s].seg.resize(K);
    for (size_t k = 0; k < K; ++k) {
      const size_t n = costs.seg_pool.at(k).size() - own_count[k];
      const double mean = n ? (costs.seg_sum.at(k) - own_sum[k]) / static_cast<double>(n) : costs.seg_mean.at(k);
      peer[s].seg[k] = std::min(mean, costs.recorded[s].seg[k][r]);
    }
    const size_t n_tail = costs.tail_pool.at(K).size() - own_tails[K];
    const double tail =
        n_tail ? (costs.tail_sum.at(K) - own_tail[K]) / static_cast<double>(n_tail) : costs.tail_mean.at(K);
    peer[s].tail = std::min(tail, costs.recorded[s].tail[r]);
  }
  return peer;
}

}  // namespace

// The steps: recorded costs, the ideal, the mean step of each, then the attribution by rank (restore it in
// the ideal; fix it in the recording) and by op type (restore all compute phases, or one collective's
// transfers, in the ideal).
PhaseWhatIf ComputePhaseWhatIf(const PhaseModel& phases, const TraceStore& store, size_t ranks,
                               const std::vector<size_t>& stragglers) {
  PhaseWhatIf out;
  const size_t steps = phases.steps.size();
  if (steps == 0 || ranks == 0) return out;
  const std::vector<bool> pooled = PooledRanks(ranks, stragglers);
  const Costs costs = RecordedCosts(phases, ranks, pooled);
  const std::vector<StepCosts>& recorded = costs.recorded;
  const std::vector<StepCosts> ideal = IdealCosts(phases, costs, ranks);
  auto mean_step = [&](const std::vector<StepCosts>& c) {
    double sum = 0;
    for (const auto& step : c) sum += StepReplay(step).Time();
    return sum / static_cast<double>(c.size());
  };
  std::vector<StepReplay> recorded_replay, ideal_replay;
  for (size_t s = 0; s < steps; ++s) {
    recorded_replay.emplace_back(recorded[s]);
    ideal_replay.emplace_back(ideal[s]);
  }
  double no_delay = 0, ideal_mean = 0;
  for (size_t s = 0; s < steps; ++s) {
    no_delay += recorded_replay[s].Time();
    ideal_mean += ideal_replay[s].Time();
  }
  no_delay /= static_cast<double>(steps);
  ideal_mean /= static_cast<double>(steps);
  out.no_delay_step_ms = no_delay / 1e6;
  out.ideal_step_ms = ideal_mean / 1e6;
  out.slowdown = ideal_mean > 0 ? no_delay / ideal_mean : 1.0;

  out.by_rank.assign(ranks, 1.0);
  out.fix_rank_saving.assign(ranks, 0.0);
  out.fix_rank_step_saving.assign(ranks, std::vector<double>(steps, 0.0));
  for (size_t r = 0; r < ranks; ++r) {
    const std::vector<RankPhases> peer = WithPeersPhases(costs, r, pooled[r]);
    double restored = 0, fixed = 0;
    for (size_t s = 0; s < steps; ++s) {
      restored += ideal_replay[s].TimeWithRank(r, PhasesOf(recorded[s], r));
      const double fixed_step = recorded_replay[s].TimeWithRank(r, peer[s]);
      fixed += fixed_step;
      const double rec = recorded_replay[s].Time();
      if (rec > 0) out.fix_rank_step_saving[r][s] = 1.0 - fixed_step / rec;
    }
    restored /= static_cast<double>(steps);
    fixed /= static_cast<double>(steps);
    out.by_rank[r] = ideal_mean > 0 ? restored / ideal_mean : 1.0;
    out.fix_rank_saving[r] = no_delay > 0 ? 1.0 - fixed / no_delay : 0.0;
  }
  std::vector<StepCosts> compute = ideal;
  for (size_t s = 0; s < steps; ++s) {
    compute[s].seg = recorded[s].seg;
    compute[s].tail = recorded[s].tail;
  }
  out.by_op_type["compute"] = ideal_mean > 0 ? mean_step(compute) / ideal_mean : 1.0;
  for (const auto& [key, v] : costs.transfer_pool) {
    std::vector<StepCosts> restored = ideal;
    for (size_t s = 0; s < steps; ++s)
      for (size_t k = 0; k < restored[s].transfer.size(); ++k)
        if (phases.steps[s].instances[k]->key == key) restored[s].transfer[k] = recorded[s].transfer[k];
    std::string name(store.strings.view(key));
    if (const size_t paren = name.find('('); paren != std::string::npos) name.resize(paren);
    out.by_op_type[name] = ideal_mean > 0 ? mean_step(restored) / ideal_mean : 1.0;
  }
  return out;
}

}  // namespace strata::diagnosis
