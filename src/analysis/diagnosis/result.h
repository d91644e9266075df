// DiagnosisResult: everything `strata diagnose` reports, in the shape of the JSON contract
// strata.diagnosis/1 (DESIGN.md "Output contract"). Diagnose assembles it (a path's PathResult, then the
// layers judged after it, then the status); reports render it.
// Invariants: stragglers and findings are ordered most important first and are empty on a healthy job;
// impact_pct is the share of step time that fixing the finding would save (impact.h: one story for all).
#pragma once

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "analysis/communication.h"
#include "analysis/critical_path.h"
#include "analysis/diagnosis/compare_unit.h"
#include "analysis/diagnosis/contract_vocabulary.h"
#include "analysis/diagnosis/drawn_facts.h"
#include "analysis/diagnosis/evidence.h"
#include "analysis/diagnosis/verdict_notes.h"
#include "core/rank_id.h"
#include "core/status.h"
#include "model/collectives.h"
#include "model/step_windows.h"

namespace strata::diagnosis {

struct Straggler {
  RankNumber rank{-1};
  double score = 0;  // its lateness as a share of the run's time (Σ lateness / Σ step): what its peers wait, ≤ 1
  double late_ms_per_step = 0;  // mean wait it caused per step
  std::vector<int64_t> steps;   // steps in which it straggled
  bool persistent = false;
  StragglerEvidence evidence;
};

/// Orders stragglers latest first (late_ms_per_step, descending), ties as std::sort over them leaves them: it
/// sorts their indices with the same comparisons, so the order is the one std::sort gives, and moves each
/// straggler once (GCC 12 at -O3 warns falsely of an uninitialized vector when std::sort moves them itself).
/// For Straggler and for anything with its late_ms_per_step (the straggler analysis's LocatedStraggler).
template <class S>
void SortLatestFirst(std::vector<S>* stragglers) {
  std::vector<size_t> order(stragglers->size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(),
            [&](size_t a, size_t b) { return (*stragglers)[a].late_ms_per_step > (*stragglers)[b].late_ms_per_step; });
  std::vector<S> sorted;
  sorted.reserve(order.size());
  for (size_t i : order) sorted.push_back(std::move((*stragglers)[i]));
  *stragglers = std::move(sorted);
}

struct Finding {
  Cause cause = Cause::kUnknown;
  std::optional<RankNumber> rank;
  std::vector<RankNumber> ranks;
  std::optional<int32_t> stage;
  std::optional<int64_t> step;
  std::optional<std::string> op;
  Layer layer = Layer::kNone;
  double impact_pct = 0;
  double confidence = 0;
  std::string summary;
  FindingEvidence evidence;
  bool outside_whatif = false;  // its cause is one the what-if cannot see: modelled into S (impact.h)
};

/// The first finding about `rank` (its `rank` field, not its `ranks` list), or null. One rule for every pass
/// that attaches evidence to the finding about a rank.
inline const Finding* FindingOfRank(const std::vector<Finding>& findings, RankNumber rank) {
  auto it = std::find_if(findings.begin(), findings.end(), [&](const Finding& f) { return f.rank && *f.rank == rank; });
  return it == findings.end() ? nullptr : &*it;
}
inline Finding* FindingOfRank(std::vector<Finding>& findings, RankNumber rank) {
  return const_cast<Finding*>(FindingOfRank(std::as_const(findings), rank));
}

struct WhatIf {
  double slowdown = 1.0;
  double ideal_step_ms = 0;
  WhatIfModel model = WhatIfModel::kNone;  // how the figures were made (contract_vocabulary.h)
  std::map<std::string, double> by_rank, by_stage, by_op_type;
  // Op tables: a whole data-parallel rank (all its stages) restored, keyed by dp rank; by_rank there holds
  // one worker (a job rank) restored, keyed by its rank.
  std::map<std::string, double> by_dp_rank;
};

// How the job's ranks are laid out, as far as the pass that read it knows: the op table's data-parallel,
// pipeline and chunk counts, or the pipeline stages the grouped-trace path found from send/recv pairs.
struct JobLayout {
  struct Grid {
    int32_t dp = 0, pp = 0, chunks = 0;
  };
  std::optional<Grid> op_table;
  std::optional<int32_t> pipeline_stages;  // 1: no pipeline send/recv seen
};

struct InputSummary {
  std::string path;
  std::optional<int32_t> rank;
  InputFormat format = InputFormat::kUnknown;
  uint64_t events = 0;
  SkipCounts skipped;
};

/// One input the loader could not read and left out (--skip-unreadable).
struct LeftOutInput {
  std::string path;
  std::string reason;
  Status error;  // the loader's error: its kind and place (reports/diagnosis_report.cc writes them)
};

/// What one pass of a diagnosis path found — late ranks and the findings about them — returned as a value;
/// the path adds it to its product in one step (PathResult::Add), so no pass writes into another's.
struct Found {
  std::vector<Straggler> stragglers;
  std::vector<Finding> findings;
};

/// What one diagnosis path measured of a job — the data-parallel trace path (trace_diagnosis.h), the grouped
/// trace path (group_diagnosis.h) or the op-table path (op_table_diagnosis.h) — returned as a value. Diagnose
/// (diagnose.h) makes it the result's part of the same fields before the layers judged after it (counters,
/// the recording, a stall, the status), so a path sees nothing of the result but its own product.
/// Invariant: stragglers are sorted latest first.
struct PathResult {
  std::vector<int64_t> steps;
  // What the ranks were compared over (compare_unit.h) and how many of them: the steps, or the one step's
  // collectives (collective_units.h). Stragglers' steps, late_ms_per_step and score are in these units.
  // `units` is set by the paths that compare over collectives; UnitCount() is the one rule for how many there
  // were (with steps as the unit, the steps: a result built by hand need not set `units`).
  CompareUnit unit = CompareUnit::kStep;
  size_t units = 0;
  size_t UnitCount() const { return unit == CompareUnit::kStep ? steps.size() : units; }
  model::StepSource step_source = model::StepSource::kNone;
  double step_time_median_ms = 0, step_time_p90_ms = 0;
  std::map<int32_t, double> clock_offsets_us;
  double clock_residual_us = 0;
  bool host_clocks = false;  // the ranks' own epoch clocks were kept (CPU-side NCCL calls: clock_alignment.h)
  model::CollectiveSource collective_source = model::CollectiveSource::kNone;
  // What was matched across ranks: complete collective instances (trace path) or steps replayed through
  // the op table's dependency model (op-table path). Zero means the ranks were not compared.
  size_t matched = 0;
  size_t unmatched_collective_calls = 0;  // calls whose instance is missing on some member (trace path)
  JobLayout layout;
  std::vector<Straggler> stragglers;
  std::vector<Finding> findings;
  WhatIf whatif;
  std::vector<std::string> notes;  // what could not be analysed, and why (no effect on the verdict)
  // What the path (and the layers after it) found that changes the verdict, as entries of the one table
  // (verdict_notes.h): problems that void the comparison itself (e.g. op types the what-if does not know carry
  // much of the time), problems in the inputs that keep the job from being called healthy (e.g. duplicated
  // step markers), and caveats said beside any verdict (e.g. a few ops filled in from peers). The table
  // gives each its effect; verdict.h renders them as reasons.
  std::vector<VerdictNote> verdict_notes;
  // Per rank number and step, its lateness at collectives against its peers' median arrival (ms;
  // data-parallel trace path only, empty elsewhere): drawn by the HTML report, and handed to the cross-layer
  // pass explicitly (RankTraceTimeline), which confirms ranks slowed alike with it. Not in the JSON contract.
  std::map<int32_t, std::map<int64_t, double>> lateness_vs_peers_ms;

  /// Adds a pass's product (stragglers and findings after those already found).
  void Add(Found found) {
    std::move(found.stragglers.begin(), found.stragglers.end(), std::back_inserter(stragglers));
    std::move(found.findings.begin(), found.findings.end(), std::back_inserter(findings));
  }
};

/// The path's fields (PathResult, as the path returned them and the later layers amended them) and what
/// only the whole diagnosis knows.
struct DiagnosisResult : PathResult {
  // What the result means (DESIGN.md "Output contract"): findings, healthy or inconclusive (rendered by
  // name, contract_vocabulary.h), and why (inconclusive) or with which caveats (healthy, findings). Set last,
  // by AssessStatus (verdict.h); inconclusive until then.
  Verdict status = Verdict::kInconclusive;
  std::vector<std::string> status_reasons;
  std::vector<InputSummary> inputs;
  std::vector<LeftOutInput> left_out;  // inputs left out by the loader (rendered among the inputs)
  int32_t ranks = 0;
  // Findings left out by DiagnoseOptions::min_effect, a filter on what is shown: the status still counts
  // them (a job whose findings are all hidden is not healthy). Not in the JSON contract (a note says so).
  size_t findings_hidden = 0;
  // The multi-rank critical path of the median step (analysis/critical_path.h); trace path only.
  std::optional<CriticalPath> critical_path;
  // Per communicator and op: time, transfer, wait, bytes, bus bandwidth (analysis/communication.h); trace
  // path and recordings, empty for op tables.
  CommunicationTable communication;
  // Per (recording segment, rank number): trace time − recorded time of that rank's recording, aligned once
  // by matching its collectives with the rank's trace (model/recording_alignment.h); a rank that could not be
  // aligned is absent. The recording's judgement and the Perfetto export read it. Not in the JSON contract.
  std::map<std::pair<size_t, int32_t>, int64_t> recording_offsets_ns;
  // What the reports draw beside the findings (drawn_facts.h); empty unless DiagnoseOptions::drawn_facts asked
  // for it. Not in the JSON contract.
  DrawnFacts drawn;
};

}  // namespace strata::diagnosis
