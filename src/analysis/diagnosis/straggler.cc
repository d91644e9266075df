// Straggler localization (see straggler.h).
#include "analysis/diagnosis/straggler.h"

#include <algorithm>
#include <utility>

#include "analysis/diagnosis/ks_divergence.h"
#include "analysis/diagnosis/lateness_rule.h"
#include "analysis/diagnosis/thresholds.h"
#include "core/robust_stats.h"
#include "core/round.h"

namespace strata::diagnosis {

StragglerAnalysis LocateStragglers(const PhaseModel& phases, size_t ranks, const StragglerOptions& options) {
  StragglerAnalysis out;
  const size_t steps = phases.steps.size();
  out.blame_ns.assign(steps, std::vector<double>(ranks, 0));
  out.late.assign(steps, std::vector<bool>(ranks, false));
  out.mean_collective_ms.assign(ranks, 0);
  std::vector<size_t> coll_count(ranks, 0);
  out.lateness_vs_peers_ns.assign(steps, std::vector<double>(ranks, 0.0));
  for (size_t s = 0; s < steps; ++s) {
    const StepPhases& p = phases.steps[s];
    for (size_t k = 0; k < p.instances.size(); ++k) {
      // Calls that do not synchronize: only the last one's lateness is the step's (phase_model.h).
      const bool counts = !phases.cumulative || k + 1 == p.instances.size();
      if (ranks > 1 && counts) {
        // Median of the others' arrivals from one sort: drop the rank's own place in the sorted order.
        std::vector<std::pair<int64_t, size_t>> sorted;
        for (size_t r = 0; r < ranks; ++r) sorted.emplace_back(p.arrival[k][r], r);
        std::sort(sorted.begin(), sorted.end());
        for (size_t i = 0; i < ranks; ++i) {
          auto other = [&](size_t j) { return static_cast<double>(sorted[j < i ? j : j + 1].first); };
          const double median = MedianOfSorted(ranks - 1, other);
          out.lateness_vs_peers_ns[s][sorted[i].second] += static_cast<double>(sorted[i].first) - median;
        }
      }
      size_t last = 0;
      for (size_t r = 1; r < ranks; ++r)
        if (p.arrival[k][r] > p.arrival[k][last]) last = r;
      int64_t second = INT64_MIN;
      for (size_t r = 0; r < ranks; ++r)
        if (r != last) second = std::max(second, p.arrival[k][r]);
      if (ranks > 1 && counts) out.blame_ns[s][last] += static_cast<double>(p.arrival[k][last] - second);
      for (size_t r = 0; r < ranks; ++r) {
        out.mean_collective_ms[r] += static_cast<double>(p.completion[k][r] - p.arrival[k][r]) / 1e6;
        ++coll_count[r];
      }
    }
  }
  for (size_t r = 0; r < ranks; ++r)
    if (coll_count[r]) out.mean_collective_ms[r] /= static_cast<double>(coll_count[r]);

  // KS abnormality: one rule with the reports' KAIR panel (ks_divergence.h), over all ranks.
  out.ks_score = KsScores(OwnWorkSamples(phases, ranks), {});
  out.ks_z = RobustZ(out.ks_score, thresholds::kKsMadFloor);

  std::vector<int64_t> step_time_ns, step_numbers;
  for (const StepPhases& p : phases.steps) {
    step_time_ns.push_back(p.time_ns);
    step_numbers.push_back(p.step);
  }
  ClassifyStragglers(step_time_ns, step_numbers, ranks, options, &out);
  return out;
}

std::vector<std::vector<double>> OwnWorkSamples(const PhaseModel& phases, size_t ranks) {
  std::vector<std::vector<double>> samples(ranks);
  for (const StepPhases& p : phases.steps) {
    for (const std::vector<int64_t>& seg : p.seg)
      for (size_t r = 0; r < ranks; ++r) samples[r].push_back(static_cast<double>(seg[r]));
    for (size_t r = 0; r < ranks; ++r) samples[r].push_back(static_cast<double>(p.tail[r]));
  }
  for (std::vector<double>& s : samples) std::sort(s.begin(), s.end());
  return samples;
}

std::vector<Straggler> NumberedStragglers(const StragglerAnalysis& analysis, const std::vector<int32_t>& rank_numbers) {
  std::vector<Straggler> out;
  out.reserve(analysis.stragglers.size());
  for (const LocatedStraggler& located : analysis.stragglers) {
    Straggler st;
    st.rank = NumberOf(located.rank, rank_numbers);
    st.score = RoundTo(located.score, 4);
    st.late_ms_per_step = RoundTo(located.late_ms_per_step, 3);
    st.steps = located.steps;
    st.persistent = located.persistent;
    out.push_back(std::move(st));
  }
  return out;
}

double JudgedLatenessNs(const StragglerAnalysis& analysis, size_t step, size_t rank) {
  return analysis.slowed_alike || analysis.behind_peers ? analysis.lateness_vs_peers_ns[step][rank]
                                                        : analysis.blame_ns[step][rank];
}

namespace {

// Every rank's lateness ([step index][rank]) judged by the one persistence rule (lateness_rule.h), with the
// job's late pairs that follow from it.
struct JudgedRanks {
  std::vector<RankLateness> rank;
  std::vector<std::vector<bool>> late;  // [step index][rank]
  size_t late_pairs = 0;
  std::vector<RankIndex> late_ranks;
  double late_sum = 0;  // lateness summed over every late pair
};

// Each rank's peers' worst lateness ([rank]): the largest lateness any other rank shows in any step (0 when
// it has no peer), the job's noise as lateness_rule.h weighs it.
std::vector<double> PeersWorst(const std::vector<std::vector<double>>& lateness, size_t ranks) {
  if (ranks == 0) return {};
  std::vector<double> own(ranks, 0.0);
  for (const std::vector<double>& step : lateness)
    for (size_t r = 0; r < ranks; ++r) own[r] = std::max(own[r], step[r]);
  // A rank's peers' worst is the largest over the ranks, or the second-largest for the rank that has it.
  const size_t first = static_cast<size_t>(std::max_element(own.begin(), own.end()) - own.begin());
  double second = 0;
  for (size_t r = 0; r < ranks; ++r)
    if (r != first) second = std::max(second, own[r]);
  std::vector<double> out(ranks, own[first]);
  out[first] = second;
  return out;
}

// weigh_noise: each rank judged with its peers' worst lateness as the job's noise (lateness_rule.h).
JudgedRanks JudgeRanks(const std::vector<std::vector<double>>& lateness, const std::vector<double>& step_time,
                       size_t ranks, const LatenessRule& rule, bool weigh_noise) {
  const size_t steps = step_time.size();
  JudgedRanks out;
  out.rank.resize(ranks);
  out.late.assign(steps, std::vector<bool>(ranks, false));
  const std::vector<double> peers_worst = PeersWorst(lateness, ranks);
  std::vector<double> own(steps);
  for (size_t r = 0; r < ranks; ++r) {
    for (size_t s = 0; s < steps; ++s) own[s] = lateness[s][r];
    LatenessRule judged_by = rule;
    if (weigh_noise) judged_by.peers_worst = peers_worst[r];
    out.rank[r] = JudgeRankLateness(own, step_time, judged_by);
    for (size_t s : out.rank[r].late) {
      out.late[s][r] = true;
      out.late_sum += own[s];
    }
    out.late_pairs += out.rank[r].late.size();
    if (!out.rank[r].late.empty()) out.late_ranks.push_back(RankIndex(r));
  }
  return out;
}

// Moves the late pairs of `judged` into `out` (its per-rank judgments stay).
void KeepLatePairs(JudgedRanks& judged, StragglerAnalysis* out) {
  out->late = std::move(judged.late);
  out->late_pairs = judged.late_pairs;
  out->late_ranks = std::move(judged.late_ranks);
}

LocatedStraggler StragglerOf(size_t r, const RankLateness& j, const std::vector<std::vector<double>>& lateness,
                             const std::vector<int64_t>& step_time_ns, const std::vector<int64_t>& step_numbers) {
  LocatedStraggler st;
  st.rank = RankIndex(r);
  st.persistent = j.persistent;
  for (size_t s : j.persistent ? j.late : j.clear) st.steps.push_back(step_numbers[s]);
  // The one lateness figure of a rank (impact.h): the share of the run's time its peers wait for it, the sum
  // of its lateness over the sum of the step times (a saving, a share of the run's time, is bounded by it).
  double late_ns = 0, run_ns = 0;
  for (size_t s = 0; s < step_time_ns.size(); ++s)
    if (step_time_ns[s] > 0) {
      late_ns += std::max(0.0, lateness[s][r]);
      run_ns += static_cast<double>(step_time_ns[s]);
    }
  const auto steps = static_cast<double>(step_time_ns.size());
  st.late_ms_per_step = j.total / steps / 1e6;
  st.score = run_ns > 0 ? std::min(1.0, late_ns / run_ns) : 0.0;
  return st;
}

// Ranks slowed alike (straggler.h): the persistent ranks by lateness against the peers, when there are
// enough of them; the analysis's late pairs then hold that measure.
void FindRanksSlowedAlike(const std::vector<int64_t>& step_time_ns, const std::vector<int64_t>& step_numbers,
                          size_t ranks, const LatenessRule& rule, StragglerAnalysis* out) {
  const std::vector<double> step_time(step_time_ns.begin(), step_time_ns.end());
  LatenessRule behind = rule;
  behind.late_share *= thresholds::kSlowedAlikeLateMultiple;
  // Not weighed against noise: the peers of a rank slowed alike include the others slowed with it.
  JudgedRanks judged = JudgeRanks(out->lateness_vs_peers_ns, step_time, ranks, behind, false);
  size_t persistent = 0;
  for (const RankLateness& j : judged.rank) persistent += j.persistent;
  if (persistent < thresholds::kMinSlowedAlikeRanks) return;
  out->slowed_alike = true;
  for (size_t r = 0; r < ranks; ++r)
    if (judged.rank[r].persistent)
      out->stragglers.push_back(StragglerOf(r, judged.rank[r], out->lateness_vs_peers_ns, step_time_ns, step_numbers));
  KeepLatePairs(judged, out);
}

// A rank behind its peers (straggler.h): the rank that is the latest against its peers' median, by the minimum
// effect, in persistent_share of the steps (the lateness of the other steps and ranks set to 0: only the
// latest rank of a step is behind in it); the analysis's late pairs then hold that measure.
void FindRankBehindItsPeers(const std::vector<int64_t>& step_time_ns, const std::vector<int64_t>& step_numbers,
                            size_t ranks, const LatenessRule& rule, StragglerAnalysis* out) {
  if (ranks < 2) return;
  const std::vector<double> step_time(step_time_ns.begin(), step_time_ns.end());
  std::vector<std::vector<double>> latest(step_time.size(), std::vector<double>(ranks, 0.0));
  for (size_t s = 0; s < latest.size(); ++s) {
    const std::vector<double>& behind = out->lateness_vs_peers_ns[s];
    const auto r = static_cast<size_t>(std::max_element(behind.begin(), behind.end()) - behind.begin());
    latest[s][r] = behind[r];
  }
  JudgedRanks judged = JudgeRanks(latest, step_time, ranks, rule, false);
  for (size_t r = 0; r < ranks; ++r)
    if (judged.rank[r].persistent) {  // latest in most steps: one rank at most
      out->behind_peers = true;
      out->stragglers.push_back(StragglerOf(r, judged.rank[r], latest, step_time_ns, step_numbers));
      KeepLatePairs(judged, out);
      return;
    }
}

// An intermittent straggler's steps (straggler.h): its clearly late steps by blame, and by its lateness against
// its peers' median when that measure, weighed against the peers' worst of it, makes a cluster (and no
// persistent lateness) of its own.
void AddStepsLateAgainstPeers(const std::vector<double>& step_time, const std::vector<int64_t>& step_numbers,
                              size_t ranks, const LatenessRule& rule, StragglerAnalysis* out) {
  const std::vector<double> peers_worst = PeersWorst(out->lateness_vs_peers_ns, ranks);
  std::vector<double> own(step_time.size());
  for (LocatedStraggler& st : out->stragglers) {
    if (st.persistent) continue;
    const size_t r = st.rank.value();
    for (size_t s = 0; s < own.size(); ++s) own[s] = out->lateness_vs_peers_ns[s][r];
    LatenessRule against_peers = rule;
    against_peers.peers_worst = peers_worst[r];
    const RankLateness judged = JudgeRankLateness(own, step_time, against_peers);
    if (!judged.cluster || judged.persistent) continue;
    for (size_t s : judged.clear) st.steps.push_back(step_numbers[s]);
    std::sort(st.steps.begin(), st.steps.end());
    st.steps.erase(std::unique(st.steps.begin(), st.steps.end()), st.steps.end());
  }
}

}  // namespace

void ClassifyStragglers(const std::vector<int64_t>& step_time_ns, const std::vector<int64_t>& step_numbers,
                        size_t ranks, const StragglerOptions& options, StragglerAnalysis* analysis) {
  StragglerAnalysis& out = *analysis;
  out.slowed_alike = false;
  out.behind_peers = false;
  out.stragglers.clear();
  // Each rank judged by the one persistence rule (lateness_rule.h); the job's late pairs and their blame
  // are what an intermittent straggler must dominate.
  const std::vector<double> step_time(step_time_ns.begin(), step_time_ns.end());
  const LatenessRule rule{.late_share = options.min_effect, .persistent_share = options.persistent_share};
  JudgedRanks blamed = JudgeRanks(out.blame_ns, step_time, ranks, rule, true);
  const double late_blame = blamed.late_sum;  // summed over every late (step, rank) pair of the job
  const std::vector<RankLateness>& judged = blamed.rank;
  KeepLatePairs(blamed, &out);
  for (size_t r = 0; r < ranks; ++r) {
    const RankLateness& j = judged[r];
    if (j.late.empty()) continue;
    // The slowest rank must not merely rotate: most of the job's late (step, rank) pairs are this rank's,
    // or its clearly late steps hold most of the job's lateness (a large stall in a few steps stands out
    // even when noise makes other ranks slightly late in more steps).
    const bool dominant =
        j.late.size() * 2 > out.late_pairs || j.clear_sum >= options.dominant_blame_share * late_blame;
    if (!j.persistent && (!dominant || !j.cluster)) continue;
    out.stragglers.push_back(StragglerOf(r, j, out.blame_ns, step_time_ns, step_numbers));
  }
  const bool peers_measured = out.lateness_vs_peers_ns.size() == step_time_ns.size() && !step_time_ns.empty();
  if (peers_measured) AddStepsLateAgainstPeers(step_time, step_numbers, ranks, rule, &out);
  if (out.stragglers.empty() && peers_measured) FindRanksSlowedAlike(step_time_ns, step_numbers, ranks, rule, &out);
  if (out.stragglers.empty() && peers_measured) FindRankBehindItsPeers(step_time_ns, step_numbers, ranks, rule, &out);
  SortLatestFirst(&out.stragglers);
}

}  // namespace strata::diagnosis
