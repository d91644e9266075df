// Diagnose: runs the diagnosis passes on a loaded job and returns the result in the shape of the
// strata.diagnosis/1 contract. Two paths:
//  - traces with profiler steps and collectives (Kineto, PyTorch 1.x): steps → collective matching →
//    clock alignment → phase model → straggler localization → what-if replay → per-straggler window
//    profiles against peers (cause, culprit op, blame) → data-imbalance check;
//  - op tables of pipeline-parallel jobs: the OSDI'25 dependency-graph what-if (analysis/whatif), whose
//    worker / stage / dp-rank attributions localize stragglers, stage imbalance and data imbalance.
// PyTorch Flight Recorder dumps (store.flight_recorder) alone are a path of their own (their hangs and
// mismatches, flight_recorder_findings.h, with AssessFlightRecorderStatus); beside traces, their findings go
// first among the traces' result.
// Last, AssessStatus (status.h) says what the result means: findings, healthy or inconclusive, and why.
// What the reports draw beside the findings (DiagnosisResult::drawn) is measured only when
// DiagnoseOptions::drawn_facts asks for it: the HTML report and the Perfetto export read it, text and JSON do not.
// Invariants: a job with no late rank and S below the minimum effect yields no straggler and no finding;
// options.min_effect only removes findings (every other field is the same for any value of it), and never the
// finding of a straggler the result names (its top one), so a named straggler's cause is the same for any value;
// options.drawn_facts changes only DiagnosisResult::drawn (empty without it).
#pragma once

#include "analysis/diagnosis/result.h"
#include "analysis/diagnosis/thresholds.h"
#include "store/trace_store.h"

namespace strata::diagnosis {

struct DiagnoseOptions {
  // Smallest effect reported, as a share of step time: a filter on the findings shown, applied last. It
  // changes no figure (the model's own lateness floor is thresholds::kMinEffect, whatever this is) and keeps
  // each named straggler's own top finding, whatever it saves.
  double min_effect = thresholds::kMinEffect;
  std::vector<LeftOutInput> left_out;  // inputs the loader left out: listed, and the job is never "healthy"
  // A live recording's present instant (Unix ns): stalls are measured up to it and the job is not judged
  // as ended. Unset: the recording is over (post-mortem).
  std::optional<int64_t> now_unix_ns;
  // Measure what the reports draw beside the findings (DiagnosisResult::drawn, report_facts.h), for an output
  // that reads it: the HTML report (BuildReportView) and the Perfetto export (WritePerfettoJson). Unset, drawn
  // stays empty and its cost is not paid (for an op table, also that of the job model, which nothing else of
  // it reads); nothing else of the result changes.
  bool drawn_facts = false;
};

// A recording of the same run (`strata record`) reaches the passes through the store's decoded tables
// (recorded_layers: cross-layer evidence; recorded_calls and recorded_threads: the stall).
DiagnosisResult Diagnose(const TraceStore& store, const DiagnoseOptions& options = {});

}  // namespace strata::diagnosis
