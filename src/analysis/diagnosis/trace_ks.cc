// The KAIR panel's KS divergence between a trace's ranks (see trace_ks.h).
#include "analysis/diagnosis/trace_ks.h"

#include <algorithm>
#include <cmath>

#include "analysis/diagnosis/collective_units.h"
#include "analysis/diagnosis/ks_divergence.h"
#include "analysis/diagnosis/phase_model.h"
#include "analysis/diagnosis/straggler.h"

namespace strata::diagnosis {

namespace {

/// The data-parallel path's samples: the own-work phases of the phases it compared.
std::optional<KsDivergence> DataParallelKs(const model::JobModel& job, const DiagnosisResult& result,
                                           const DrawnFacts& facts, size_t ranks) {
  PhaseModel phases = BuildPhases(job.steps, job.collectives, job.clocks, ranks);
  if (result.unit == CompareUnit::kCollective) phases = CollectiveUnits(phases);
  if (phases.steps.empty()) return std::nullopt;
  std::vector<std::vector<double>> sorted = OwnWorkSamples(phases, ranks);
  std::vector<double> score = KsScores(sorted, {});
  return KsDivergenceOf(sorted, std::move(score), facts.stages, KsSample::kOwnWorkPhases, KsPeers::kAllRanks);
}

/// Role-peer jobs' samples: the ranks' time outside collectives per step, scored among their stage.
std::optional<KsDivergence> StepBusyKs(const DrawnFacts& facts, size_t ranks) {
  if (facts.busy_ns.size() != ranks) return std::nullopt;
  std::vector<std::vector<double>> sorted(ranks);
  for (size_t r = 0; r < ranks; ++r) {
    for (const double ns : facts.busy_ns[r])
      if (!std::isnan(ns)) sorted[r].push_back(ns);
    if (facts.busy_ns[r].size() < 2) return std::nullopt;  // one step: nothing to compare distributions of
    std::sort(sorted[r].begin(), sorted[r].end());
  }
  std::vector<double> score = KsScores(sorted, facts.stages);
  return KsDivergenceOf(sorted, std::move(score), facts.stages, KsSample::kStepBusy,
                        facts.stages.empty() ? KsPeers::kAllRanks : KsPeers::kStagePeers);
}

}  // namespace

std::optional<KsDivergence> TraceKs(const model::JobModel& job, const DiagnosisResult& result, const DrawnFacts& facts,
                                    size_t ranks) {
  if (ranks < 2 || result.matched == 0) return std::nullopt;
  if (job.collectives.subgroups) return StepBusyKs(facts, ranks);
  return DataParallelKs(job, result, facts, ranks);
}

}  // namespace strata::diagnosis
