// Diagnose orchestration (see diagnose.h).
#include "analysis/diagnosis/diagnose.h"

#include <fmt/format.h>

#include <algorithm>

#include "analysis/diagnosis/cross_layer.h"
#include "analysis/diagnosis/op_table_diagnosis.h"
#include "analysis/diagnosis/status.h"
#include "analysis/diagnosis/trace_diagnosis.h"
#include "analysis/diagnosis/whatif_notes.h"
#include "analysis/job_summary.h"
#include "model/collectives.h"
#include "model/step_windows.h"

namespace strata::diagnosis {
namespace {

// Each rank's step windows and collectives on its own trace clock, for aligning a recording.
std::map<int32_t, RankTraceTimeline> TraceTimelines(const TraceStore& store) {
  const auto rows = SlicesByRank(store);
  model::StepModel steps = model::FindSteps(store, rows);
  const model::CollectiveModel collectives = model::MatchCollectives(store, rows, &steps);
  std::map<int32_t, RankTraceTimeline> out;
  for (size_t r = 0; r < store.ranks.size(); ++r) {
    RankTraceTimeline& tl = out[store.ranks[r].rank];
    if (r < steps.by_rank.size())
      for (const model::StepWindow& w : steps.by_rank[r]) tl.steps[w.step] = {w.start_ns, w.end_ns};
    if (r < collectives.calls.size())
      for (const model::CollectiveCall& c : collectives.calls[r]) tl.collectives.emplace_back(c.start_ns, c.end_ns);
  }
  return out;
}

}  // namespace

DiagnosisResult Diagnose(const TraceStore& store, const DiagnoseOptions& options, const RecordedRun* recorded) {
  DiagnosisResult result;
  for (uint32_t i = 0; i < store.inputs.size(); ++i) {
    const InputInfo& in = store.inputs[i];
    InputSummary s;
    s.path = in.path;
    s.format = in.format;
    s.events = in.events;
    s.skipped = in.skipped;
    int ranks_of_input = 0;
    for (const RankInfo& r : store.ranks)
      if (r.input == i) {
        ++ranks_of_input;
        s.rank = r.rank;
      }
    if (ranks_of_input != 1) s.rank.reset();
    result.inputs.push_back(std::move(s));
  }
  result.left_out = options.left_out;
  result.ranks = static_cast<int32_t>(store.ranks.size());
  bool op_table = !store.ranks.empty();
  for (const InputInfo& in : store.inputs) op_table &= in.format == "op-table-csv";
  if (op_table) {
    DiagnoseOpTable(store, options, &result);
  } else {
    DiagnoseTraces(store, SlicesByRank(store), options, &result);
  }
  if (recorded && !recorded->empty()) ApplyCrossLayerEvidence(*recorded, TraceTimelines(store), &result);
  // Findings respect the minimum effect, whichever pass made them (the stragglers stay: they were late by it).
  const size_t before = result.findings.size();
  std::erase_if(result.findings, [&](const Finding& f) { return f.impact_pct < 100.0 * options.min_effect; });
  if (result.findings.size() < before)
    result.notes.push_back(
        fmt::format("{} findings would save less than the minimum effect ({:.1f}% of step time) "
                    "and are not shown (lower --min-effect to see them)",
                    before - result.findings.size(), 100.0 * options.min_effect));
  std::stable_sort(result.findings.begin(), result.findings.end(),
                   [](const Finding& a, const Finding& b) { return a.impact_pct > b.impact_pct; });
  ExplainWhatIf(&result);
  AssessStatus(store, &result);
  return result;
}

}  // namespace strata::diagnosis
