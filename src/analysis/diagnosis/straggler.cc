// Straggler localization (see straggler.h).
#include "analysis/diagnosis/straggler.h"

#include <algorithm>
#include <set>

#include "analysis/diagnosis/thresholds.h"
#include "core/robust_stats.h"

namespace strata::diagnosis {

StragglerAnalysis LocateStragglers(const PhaseModel& phases, size_t ranks, const StragglerOptions& options) {
  StragglerAnalysis out;
  const size_t steps = phases.steps.size();
  out.blame_ns.assign(steps, std::vector<double>(ranks, 0));
  out.late.assign(steps, std::vector<bool>(ranks, false));
  out.mean_collective_ms.assign(ranks, 0);
  std::vector<size_t> coll_count(ranks, 0);
  std::vector<std::vector<double>> samples(ranks);
  out.lateness_vs_peers_ns.assign(steps, std::vector<double>(ranks, 0.0));
  for (size_t s = 0; s < steps; ++s) {
    const StepPhases& p = phases.steps[s];
    for (size_t k = 0; k < p.instances.size(); ++k) {
      if (ranks > 1) {
        // Median of the others' arrivals from one sort: drop the rank's own place in the sorted order.
        std::vector<std::pair<int64_t, size_t>> sorted;
        for (size_t r = 0; r < ranks; ++r) sorted.emplace_back(p.arrival[k][r], r);
        std::sort(sorted.begin(), sorted.end());
        const size_t m = ranks - 1;  // how many others
        for (size_t i = 0; i < ranks; ++i) {
          auto other = [&](size_t j) { return static_cast<double>(sorted[j < i ? j : j + 1].first); };
          const double median = m % 2 ? other(m / 2) : 0.5 * (other(m / 2 - 1) + other(m / 2));
          out.lateness_vs_peers_ns[s][sorted[i].second] += static_cast<double>(sorted[i].first) - median;
        }
      }
      size_t last = 0;
      for (size_t r = 1; r < ranks; ++r)
        if (p.arrival[k][r] > p.arrival[k][last]) last = r;
      int64_t second = INT64_MIN;
      for (size_t r = 0; r < ranks; ++r)
        if (r != last) second = std::max(second, p.arrival[k][r]);
      if (ranks > 1) out.blame_ns[s][last] += static_cast<double>(p.arrival[k][last] - second);
      for (size_t r = 0; r < ranks; ++r) {
        out.mean_collective_ms[r] += static_cast<double>(p.completion[k][r] - p.arrival[k][r]) / 1e6;
        ++coll_count[r];
        samples[r].push_back(static_cast<double>(p.seg[k][r]));
      }
    }
    for (size_t r = 0; r < ranks; ++r) samples[r].push_back(static_cast<double>(p.tail[r]));
  }
  for (size_t r = 0; r < ranks; ++r)
    if (coll_count[r]) out.mean_collective_ms[r] /= static_cast<double>(coll_count[r]);

  // KS abnormality.
  out.ks_score.assign(ranks, 0);
  if (ranks >= 2) {
    if (ranks <= 64) {
      for (size_t a = 0; a < ranks; ++a) {
        double sum = 0;
        for (size_t b = 0; b < ranks; ++b)
          if (a != b) sum += KsDistance(samples[a], samples[b]);
        out.ks_score[a] = sum / static_cast<double>(ranks - 1);
      }
    } else {
      std::vector<double> pooled;
      for (const auto& v : samples) pooled.insert(pooled.end(), v.begin(), v.end());
      std::sort(pooled.begin(), pooled.end());  // once: O(N log N) over all ranks, not per rank
      for (size_t a = 0; a < ranks; ++a) out.ks_score[a] = KsDistanceToSorted(samples[a], pooled);
    }
  }
  out.ks_z = RobustZ(out.ks_score, 0.02);

  std::vector<int64_t> step_time_ns, step_numbers;
  for (const StepPhases& p : phases.steps) {
    step_time_ns.push_back(p.time_ns);
    step_numbers.push_back(p.step);
  }
  ClassifyStragglers(step_time_ns, step_numbers, ranks, options, &out);
  return out;
}

void ClassifyStragglers(const std::vector<int64_t>& step_time_ns, const std::vector<int64_t>& step_numbers,
                        size_t ranks, const StragglerOptions& options, StragglerAnalysis* analysis) {
  StragglerAnalysis& out = *analysis;
  const size_t steps = step_time_ns.size();
  out.late.assign(steps, std::vector<bool>(ranks, false));
  out.late_pairs = 0;
  for (size_t s = 0; s < steps; ++s)
    for (size_t r = 0; r < ranks; ++r)
      if (step_time_ns[s] > 0 && out.blame_ns[s][r] >= options.min_effect * static_cast<double>(step_time_ns[s])) {
        out.late[s][r] = true;
        ++out.late_pairs;
      }
  std::set<int32_t> late_ranks;
  double late_blame = 0;  // summed over every late (step, rank) pair of the job
  for (size_t s = 0; s < steps; ++s)
    for (size_t r = 0; r < ranks; ++r)
      if (out.late[s][r]) {
        late_ranks.insert(static_cast<int32_t>(r));
        late_blame += out.blame_ns[s][r];
      }
  out.late_ranks.assign(late_ranks.begin(), late_ranks.end());

  for (size_t r = 0; r < ranks; ++r) {
    std::vector<int64_t> late_steps;
    double blame = 0, share = 0;
    for (size_t s = 0; s < steps; ++s) {
      blame += out.blame_ns[s][r];
      if (step_time_ns[s] > 0) share += out.blame_ns[s][r] / static_cast<double>(step_time_ns[s]);
      if (out.late[s][r]) late_steps.push_back(step_numbers[s]);
    }
    if (late_steps.empty() || steps == 0) continue;
    // Its clearly late steps: those late by at least 60 % of the worst one.
    double worst = 0;
    for (size_t s = 0; s < steps; ++s) worst = std::max(worst, out.blame_ns[s][r]);
    const double cut = thresholds::kClearlyLateShareOfWorst * worst;
    std::vector<int64_t> clear_steps;
    size_t very_late = 0, well_late = 0;
    double clear_blame = 0, other_blame = 0;
    for (size_t s = 0; s < steps; ++s) {
      if (!out.late[s][r]) continue;
      if (out.blame_ns[s][r] < cut) {
        other_blame += out.blame_ns[s][r];
        continue;
      }
      clear_steps.push_back(step_numbers[s]);
      clear_blame += out.blame_ns[s][r];
      const double step = static_cast<double>(step_time_ns[s]);
      if (out.blame_ns[s][r] >= thresholds::kVeryLateMultiple * options.min_effect * step) ++very_late;
      if (out.blame_ns[s][r] >= thresholds::kWellLateMultiple * options.min_effect * step) ++well_late;
    }
    const double persistent_steps = options.persistent_share * static_cast<double>(steps);
    // An intermittent fault shows as a cluster of clearly late steps. Fewer steps must stand out more than a
    // persistent pattern does: three such steps each late by twice the minimum effect, or two that are each
    // very late (4x): a few moderate hiccups of one rank are what a busy machine produces on its own.
    const bool cluster = well_late >= thresholds::kWellLateSteps || very_late >= thresholds::kVeryLateSteps;
    bool persistent = static_cast<double>(late_steps.size()) >= persistent_steps;
    // Late in most steps, but a few stand far above the rest (whose mean lateness is under a fifth of
    // theirs): a fault present in those steps, with small after-effects or noise in the others.
    const size_t others = late_steps.size() - clear_steps.size();
    if (persistent && cluster && others > 0 && static_cast<double>(clear_steps.size()) < persistent_steps &&
        other_blame / static_cast<double>(others) <
            thresholds::kAfterEffectShare * clear_blame / static_cast<double>(clear_steps.size()))
      persistent = false;
    Straggler st;
    st.rank = static_cast<int32_t>(r);
    st.persistent = persistent;
    st.steps = late_steps;
    if (!persistent) {
      st.steps = clear_steps;
      // The slowest rank must not merely rotate: most of the job's late (step, rank) pairs are this rank's,
      // or its clearly late steps hold most of the job's lateness (a large stall in a few steps stands out
      // even when noise makes other ranks slightly late in more steps).
      const bool dominant =
          late_steps.size() * 2 > out.late_pairs || clear_blame >= options.dominant_blame_share * late_blame;
      if (!dominant || !cluster) continue;
    }
    st.late_ms_per_step = blame / static_cast<double>(steps) / 1e6;
    st.score = share / static_cast<double>(steps);
    out.stragglers.push_back(std::move(st));
  }
  std::sort(out.stragglers.begin(), out.stragglers.end(),
            [](const Straggler& a, const Straggler& b) { return a.late_ms_per_step > b.late_ms_per_step; });
}

}  // namespace strata::diagnosis
