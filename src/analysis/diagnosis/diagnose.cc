// Diagnose orchestration (see diagnose.h).
#include "analysis/diagnosis/diagnose.h"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "analysis/communication.h"
#include "analysis/critical_path.h"
#include "analysis/diagnosis/counter_evidence.h"
#include "analysis/diagnosis/cross_layer.h"
#include "analysis/diagnosis/flight_recorder_findings.h"
#include "analysis/diagnosis/impact.h"
#include "analysis/diagnosis/op_table_diagnosis.h"
#include "analysis/diagnosis/recording_judgement.h"
#include "analysis/diagnosis/report_facts.h"
#include "analysis/diagnosis/shown_findings.h"
#include "analysis/diagnosis/stall.h"
#include "analysis/diagnosis/trace_diagnosis.h"
#include "analysis/diagnosis/verdict.h"
#include "analysis/diagnosis/whatif_notes.h"
#include "analysis/job_summary.h"
#include "model/job_model.h"

namespace strata::diagnosis {
namespace {

// Each rank's step windows and collectives on its own trace clock, for aligning a recording, and its lateness
// against its peers as the trace path measured it.
std::map<int32_t, RankTraceTimeline> TraceTimelines(const TraceStore& store, const model::JobModel& job,
                                                    const std::map<int32_t, std::map<int64_t, double>>& lateness) {
  const model::StepModel& steps = job.steps;
  const model::CollectiveModel& collectives = job.collectives;
  std::map<int32_t, RankTraceTimeline> out;
  for (size_t r = 0; r < store.ranks.size(); ++r) {
    RankTraceTimeline& tl = out[store.ranks[r].rank];
    if (r < steps.by_rank.size())
      for (const model::StepWindow& w : steps.by_rank[r]) tl.steps[w.step] = {w.start_ns, w.end_ns};
    if (r < collectives.calls.size())
      for (const model::CollectiveCall& c : collectives.calls[r]) tl.collectives.emplace_back(c.start_ns, c.end_ns);
  }
  for (const auto& [rank, by_step] : lateness) out[rank].lateness_vs_peers_ms = by_step;
  return out;
}

// evidence.from on every straggler and finding that no pass marked: which source its lateness came from.
void MarkSources(const TraceStore& store, DiagnosisResult* result) {
  bool recording = !store.inputs.empty(), table = !store.inputs.empty();
  for (const InputInfo& in : store.inputs) {
    recording &= in.recording();
    table &= in.format == InputFormat::kOpTable;
  }
  bool device = false;  // collectives timed on the device by the NCCL profiler plugin (preferred when present)
  for (const RecordedLayerSegment& seg : store.recorded_layers.segments) device |= seg.device_collectives;
  const EvidenceSource from =
      recording ? (device ? EvidenceSource::kRecorderDeviceCollectives : EvidenceSource::kRecorderCollectives)
      : table   ? EvidenceSource::kOpTable
                : EvidenceSource::kProfilerTrace;
  for (Straggler& s : result->stragglers)
    if (s.evidence.from == EvidenceSource::kNone) s.evidence.from = from;
  for (Finding& f : result->findings)
    if (f.evidence.from == EvidenceSource::kNone) f.evidence.from = from;
}

// What each input is and holds (its rank when it holds exactly one), in the order given.
std::vector<InputSummary> SummariseInputs(const TraceStore& store) {
  std::vector<InputSummary> out;
  // Each input's rank when it holds exactly one (one pass over the ranks: inputs x ranks would be quadratic).
  std::vector<int> ranks_of_input(store.inputs.size(), 0);
  std::vector<int32_t> rank_of_input(store.inputs.size(), 0);
  for (const RankInfo& r : store.ranks) {
    if (r.input >= store.inputs.size()) continue;
    ++ranks_of_input[r.input];
    rank_of_input[r.input] = r.rank;
  }
  for (uint32_t i = 0; i < store.inputs.size(); ++i) {
    const InputInfo& in = store.inputs[i];
    InputSummary s;
    s.path = in.path;
    s.format = in.format;
    s.events = in.events;
    s.skipped = in.skipped;
    if (ranks_of_input[i] == 1) s.rank = rank_of_input[i];
    out.push_back(std::move(s));
  }
  return out;
}

// Each Flight Recorder dump's input with the dump's rank.
void DumpRanks(const TraceStore& store, std::vector<InputSummary>* inputs) {
  for (InputSummary& in : *inputs)
    for (const FlightRecorderDump& d : store.flight_recorder.dumps)
      if (d.path == in.path) in.rank = d.rank;
}

// Whether the job is Flight Recorder dumps alone (beside a recording, the recording is a trace input too).
bool FlightRecorderOnly(const TraceStore& store) {
  return !store.flight_recorder.empty() &&
         std::all_of(store.inputs.begin(), store.inputs.end(),
                     [](const InputInfo& in) { return in.format == InputFormat::kFlightRecorder; });
}

// The diagnosis of Flight Recorder dumps: their hangs and mismatches, each input with its dump's rank.
DiagnosisResult DiagnoseFlightRecorder(const TraceStore& store, const DiagnoseOptions& options) {
  DiagnosisResult result;
  result.inputs = SummariseInputs(store);
  DumpRanks(store, &result.inputs);
  result.left_out = options.left_out;
  result.ranks = static_cast<int32_t>(store.flight_recorder.dumps.size());
  ApplyFlightRecorderJudgement(JudgeFlightRecorder(store.flight_recorder), &result);
  AssessFlightRecorderStatus(&result);
  return result;
}

// What the layers beside and below the path say about the job, each judged before anything is assembled:
// values, judging changes nothing. Each is set only where its layer is in the inputs.
struct LayerJudgements {
  std::optional<CriticalPath> critical_path;      // the median step's critical path (trace paths)
  CommunicationTable communication;               // the collectives' table (trace paths)
  std::optional<RecordingJudgement> recording;    // the recording's layers, about the path's stragglers
  std::optional<StallJudgement> stall;            // a recording's collectives and threads: how the job ended
  std::optional<FlightRecorderJudgement> dumps;   // Flight Recorder dumps beside the traces
  std::optional<std::string> dumps_vs_recording;  // whether the dumps and the recording name the same stopped ranks
};

// The path's product: the op-table or the trace path's stragglers and findings, the findings as the run's
// counters refine them (trace paths). The layers above read the findings so refined, so the refinement is
// part of the product, applied here once. The paths take no options: what the user filters (min_effect)
// cannot change what they measure.
PathResult DiagnosePath(const TraceStore& store, bool op_table, const std::vector<SliceRows>& rows,
                        const model::JobModel& job) {
  if (op_table) return DiagnoseOpTable(store);
  PathResult path = DiagnoseTraces(store, rows, job);
  ApplyCounterJudgement(JudgeWithCounters(store, job.steps, path.findings), &path.findings);
  return path;
}

// Every layer's judgement of the job beside the path's product `path`.
LayerJudgements JudgeLayers(const TraceStore& store, const DiagnoseOptions& options, bool op_table,
                            const std::vector<SliceRows>& rows, const model::JobModel& job, const PathResult& path) {
  LayerJudgements out;
  if (!op_table) {
    if (auto step = MedianStep(job, store.ranks.size()))
      out.critical_path = ComputeCriticalPath(store, rows, job, *step);
    out.communication = ComputeCommunication(store, job);
  }
  if (!store.recorded_layers.empty())
    out.recording = JudgeWithRecording(store.recorded_layers, TraceTimelines(store, job, path.lateness_vs_peers_ms),
                                       path, model::TransferMsByStep(job.collectives));
  if (store.has_recording())
    out.stall = JudgeStall({store.recorded_calls, store.recorded_threads}, {.now_unix_ns = options.now_unix_ns});
  if (!store.flight_recorder.empty()) {
    out.dumps = JudgeFlightRecorder(store.flight_recorder);
    // The hang findings of the recording are its stall judgement's (no other judge names a stopped rank).
    if (out.stall) out.dumps_vs_recording = CompareWithRecording(out.stall->findings, *out.dumps);
  }
  return out;
}

// The result, assembled once from the path's product and the layers' judgements, in the order each puts its
// findings: the recording's confirmations and added stragglers, the impacts reconciled and the small findings
// hidden (options.min_effect), by impact; then a stopped job's hang and mismatch findings first, and the Flight
// Recorder dumps' before those (they say why the job stopped); last the evidence's sources, the what-if's
// explanation and the status. `rows` and `job` only measure what the reports draw (options.drawn_facts).
DiagnosisResult Assemble(const TraceStore& store, const DiagnoseOptions& options, PathResult path,
                         LayerJudgements layers, const std::vector<SliceRows>& rows, const model::JobModel& job) {
  DiagnosisResult result;
  static_cast<PathResult&>(result) = std::move(path);
  result.inputs = SummariseInputs(store);
  result.left_out = options.left_out;
  result.ranks = static_cast<int32_t>(store.ranks.size());
  result.critical_path = std::move(layers.critical_path);
  result.communication = std::move(layers.communication);
  if (layers.recording) ApplyRecordingJudgement(std::move(*layers.recording), &result);
  ReconcileImpacts(&result);
  HideSmallFindings(options.min_effect, &result);
  std::stable_sort(result.findings.begin(), result.findings.end(),
                   [](const Finding& a, const Finding& b) { return a.impact_pct > b.impact_pct; });
  if (layers.stall) ApplyStallJudgement(std::move(*layers.stall), &result);
  if (layers.dumps) {
    DumpRanks(store, &result.inputs);
    if (layers.dumps_vs_recording) result.notes.push_back(std::move(*layers.dumps_vs_recording));
    ApplyFlightRecorderJudgement(std::move(*layers.dumps), &result);
  }
  MarkSources(store, &result);
  ExplainWhatIf(&result);
  AssessStatus(store, &result);
  // Last, on the final findings: what the reports draw beside them, so that they compute none of it.
  if (options.drawn_facts) result.drawn = MeasureDrawnFacts(store, rows, job, result);
  return result;
}

}  // namespace

DiagnosisResult Diagnose(const TraceStore& store, const DiagnoseOptions& options) {
  if (FlightRecorderOnly(store)) return DiagnoseFlightRecorder(store, options);
  bool op_table = !store.ranks.empty();
  for (const InputInfo& in : store.inputs) op_table &= in.format == InputFormat::kOpTable;
  // The run's model, built once; every pass below reads it (the op-table path has its own graph model and
  // needs this one only to align a recording and to measure what the reports draw, so without either it is
  // not built).
  const bool with_model = !op_table || !store.recorded_layers.empty() || options.drawn_facts;
  const std::vector<SliceRows> rows = with_model ? SlicesByRank(store) : std::vector<SliceRows>{};
  const model::JobModel job = with_model ? model::BuildJobModel(store, rows) : model::JobModel{};
  PathResult path = DiagnosePath(store, op_table, rows, job);
  LayerJudgements layers = JudgeLayers(store, options, op_table, rows, job, path);
  return Assemble(store, options, std::move(path), std::move(layers), rows, job);
}

}  // namespace strata::diagnosis
