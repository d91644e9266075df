// LiveDiagnosis: windowed re-diagnosis of a live recording (see live_diagnosis.h).
#include "agent/live_diagnosis.h"

#include <algorithm>
#include <chrono>
#include <filesystem>

#include "analysis/diagnosis/diagnose.h"
#include "importers/recording_trace.h"
#include "segments/segment_reader.h"
#include "store/recorded_run.h"

namespace strata::agent {
namespace {

template <typename Row, typename Time>
void KeepWindow(std::vector<Row>* rows, uint64_t from, Time time) {
  rows->erase(std::remove_if(rows->begin(), rows->end(), [&](const Row& r) { return time(r) < from; }), rows->end());
}

void CutToWindow(segments::SegmentData* d, uint64_t from) {
  KeepWindow(&d->off_cpu, from, [](const auto& r) { return r.end_ns; });
  KeepWindow(&d->samples, from, [](const auto& r) { return r.ts_ns; });
  KeepWindow(&d->calls, from, [](const auto& r) { return r.start_ns; });
  KeepWindow(&d->gcs, from, [](const auto& r) { return r.end_ns; });
  KeepWindow(&d->counters, from, [](const auto& r) { return r.ts_ns; });
  KeepWindow(&d->py_samples, from, [](const auto& r) { return r.ts_ns; });
}

}  // namespace

void LiveDiagnosis::Round(const std::string& chunk_dir, uint64_t now_mono_ns, double now_unix_s, JobState* state,
                          std::vector<online::RankStepSummary>* summaries) const {
  const auto started = std::chrono::steady_clock::now();
  RecordedRun run;
  std::error_code ec;
  const uint64_t window_ns = static_cast<uint64_t>(window_s_ * 1e9);
  const uint64_t from = now_mono_ns > window_ns ? now_mono_ns - window_ns : 0;
  for (const auto& entry : std::filesystem::directory_iterator(chunk_dir, ec)) {
    if (entry.path().extension() != ".sseg") continue;
    auto segment = segments::ReadSegment(entry.path().string());
    if (!segment.ok()) continue;  // a recorder that has not written its header yet
    CutToWindow(&segment.value(), from);
    run.segments.push_back(IndexSegment(std::move(segment).value()));
  }
  MergePluginSegments(&run);
  if (run.empty()) {
    state->error = "no recording yet";
    return;
  }
  auto store = TraceStoreFromRecording(run);
  if (!store.ok()) {
    state->error = store.error();
    return;
  }
  for (auto& s : SummarizeNewSteps(store.value(), &state->step_cursor)) summaries->push_back(s);
  diagnosis::DiagnosisResult result = diagnosis::Diagnose(store.value(), {}, &run);
  // Findings persist by (rank, cause): a new one opens now, a known one keeps its detected_at.
  std::vector<OpenFinding> open;
  for (const diagnosis::Finding& f : result.findings) {
    OpenFinding o{f, now_unix_s, 1};
    for (const OpenFinding& before : state->open)
      if (before.finding.rank == f.rank && before.finding.cause == f.cause) {
        o.detected_at = before.detected_at;
        o.rounds = before.rounds + 1;
      }
    open.push_back(std::move(o));
  }
  state->open = std::move(open);
  state->last = std::move(result);
  state->analysed_at = now_unix_s;
  state->analysis_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  state->error.clear();
}

}  // namespace strata::agent
