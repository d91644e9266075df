// Diagnose orchestration (see diagnose.h).
#include "analysis/diagnosis/diagnose.h"

#include <algorithm>

#include "analysis/diagnosis/cross_layer.h"
#include "analysis/diagnosis/op_table_diagnosis.h"
#include "analysis/diagnosis/trace_diagnosis.h"
#include "analysis/job_summary.h"

namespace strata::diagnosis {

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
  result.ranks = static_cast<int32_t>(store.ranks.size());
  bool op_table = !store.ranks.empty();
  for (const InputInfo& in : store.inputs) op_table &= in.format == "op-table-csv";
  if (op_table) {
    DiagnoseOpTable(store, options, &result);
  } else {
    DiagnoseTraces(store, SlicesByRank(store), options, &result);
  }
  if (recorded) ApplyCrossLayerEvidence(*recorded, &result);
  std::stable_sort(result.findings.begin(), result.findings.end(),
                   [](const Finding& a, const Finding& b) { return a.impact_pct > b.impact_pct; });
  return result;
}

}  // namespace strata::diagnosis
