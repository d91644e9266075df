// LiveDiagnosis: windowed re-diagnosis of a live recording (see live_diagnosis.h).
#include "agent/live_diagnosis.h"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <set>
#include <tuple>

#include "analysis/diagnosis/diagnose.h"
#include "analysis/diagnosis/thresholds.h"
#include "importers/recording_trace.h"
#include "importers/segment_index.h"
#include "segments/segment_reader.h"
#include "store/recorded_run.h"

namespace strata::agent {
namespace {

template <typename Row, typename Time>
void KeepWindow(std::vector<Row>* rows, uint64_t from, Time time) {
  rows->erase(std::remove_if(rows->begin(), rows->end(), [&](const Row& r) { return time(r) < from; }), rows->end());
}

}  // namespace

void CutToWindow(segments::SegmentData* d, uint64_t from) {
  std::set<std::tuple<uint32_t, uint32_t, uint64_t>> returned;  // (tid, probe, start) of calls that returned
  for (const auto& c : d->calls) returned.insert({c.tid, c.probe, c.start_ns});
  std::map<std::pair<uint32_t, uint32_t>, uint64_t> last_enter;  // (tid, probe) -> its latest entry
  for (const auto& e : d->call_enters) {
    uint64_t& last = last_enter[{e.tid, e.probe}];
    last = std::max(last, e.ts_ns);
  }
  std::erase_if(d->call_enters, [&](const CallEnterRow& e) {
    const bool left = returned.count({e.tid, e.probe, e.ts_ns}) || last_enter[{e.tid, e.probe}] > e.ts_ns;
    return e.ts_ns < from && left;
  });
  KeepWindow(&d->off_cpu, from, [](const auto& r) { return r.end_ns; });
  KeepWindow(&d->samples, from, [](const auto& r) { return r.ts_ns; });
  KeepWindow(&d->calls, from, [](const auto& r) { return r.start_ns; });
  KeepWindow(&d->gcs, from, [](const auto& r) { return r.end_ns; });
  KeepWindow(&d->counters, from, [](const auto& r) { return r.ts_ns; });
  KeepWindow(&d->py_samples, from, [](const auto& r) { return r.ts_ns; });
}

bool MayBeStalled(const JobState& state, double now_unix_s) {
  const double shown_until = std::min(now_unix_s, state.reach_unix);
  for (const diagnosis::RankInflight& r : state.inflight)
    if (r.inside && shown_until - r.since_unix > diagnosis::thresholds::kRotationHoldInsideS) return true;
  for (const OpenFinding& f : state.open)
    if (f.finding.cause == diagnosis::Cause::kHang) return true;
  return false;
}

namespace {

// The segment files (*.sseg) of a flight-recorder chunk, by path.
std::set<std::string> ChunkSegments(const std::string& chunk_dir) {
  std::set<std::string> paths;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(chunk_dir, ec))
    if (entry.path().extension() == ".sseg") paths.insert(entry.path().string());
  return paths;
}

// The chunk's segments, each tail polled for what was appended since the last round; tails of files no
// longer in the chunk (a rotation) are dropped. A segment whose header is not written yet is left out.
std::vector<segments::SegmentTail*> PollTails(const std::string& chunk_dir, JobState* state) {
  if (!state->tails) state->tails = std::make_shared<std::map<std::string, segments::SegmentTail>>();
  auto& tails = *state->tails;
  const std::set<std::string> present = ChunkSegments(chunk_dir);
  std::erase_if(tails, [&](const auto& t) { return !present.count(t.first); });
  std::vector<segments::SegmentTail*> out;
  for (const std::string& path : present) {
    segments::SegmentTail& tail = tails.try_emplace(path, path).first->second;
    if (!tail.Poll().ok() || !tail.has_header()) continue;
    out.push_back(&tail);
  }
  return out;
}

// The whole chunk read afresh (every row since its recorder started, none cut to the window): a finished
// job's last word is the diagnosis of its whole recording, with sequence numbers counted from the chunk's
// start (exact when the chunk began before the job's first collective, so a mismatch can be judged).
// Files that cannot be read are left out, as a live round leaves them out.
RecordedRun ReadWholeChunk(const std::string& chunk_dir) {
  RecordedRun run;
  for (const std::string& path : ChunkSegments(chunk_dir))
    if (auto segment = segments::ReadSegment(path); segment.ok())
      run.segments.push_back(IndexSegment(std::move(segment).value()));
  return run;
}

// The window of what the tails of `chunk_dir` gained.
RecordedRun WindowRecording(const std::string& chunk_dir, uint64_t from, JobState* state) {
  RecordedRun run;
  for (segments::SegmentTail* tail : PollTails(chunk_dir, state)) {
    CutToWindow(&tail->data(), from);
    run.segments.push_back(IndexSegment(tail->data()));
  }
  return run;
}

// A new chunk: the previous one is read one last time (its recorder was stopped only once the new one was
// attached, so it holds everything before) and what it leaves open is carried (chunk_carry.h). Returns that
// last read (empty when the chunk did not change), whose completed steps are summarized before the new
// chunk's: the new recorder sees the steps before its probes attached in part or not at all, so they would
// be lost to the step numbering (a node's steps one or more behind its peers' until serve realigned them,
// and judged without its ranks meanwhile).
RecordedRun SwitchChunk(const std::string& chunk_dir, uint64_t from, JobState* state) {
  RecordedRun left;
  if (state->chunk == chunk_dir) return left;
  if (!state->chunk.empty() && state->tails) {
    left = WindowRecording(state->chunk, from, state);
    state->carried = CarryFrom(left, state->carried);
  }
  state->tails.reset();
  state->chunk = chunk_dir;
  return left;
}

// The round's recording (after SwitchChunk): the window of what the tails gained, or the whole chunk once the
// job ended; with the entries carried from the previous chunks.
RecordedRun RoundRecording(const std::string& chunk_dir, uint64_t from, bool ended, JobState* state) {
  RecordedRun run;
  bool whole = false;
  if (ended) {
    run = ReadWholeChunk(chunk_dir);
    whole = !run.empty();
  }
  if (run.empty()) run = WindowRecording(chunk_dir, from, state);
  if (!run.empty()) CarryInto(&state->carried, &run, /*finished=*/whole);
  MergePluginSegments(&run);
  return run;
}

}  // namespace

void LiveDiagnosis::Round(const std::string& chunk_dir, uint64_t now_mono_ns, double now_unix_s, JobState* state,
                          std::vector<online::RankStepSummary>* summaries, bool ended) const {
  const auto started = std::chrono::steady_clock::now();
  const uint64_t window_ns = static_cast<uint64_t>(window_s_ * 1e9);
  const uint64_t from = now_mono_ns > window_ns ? now_mono_ns - window_ns : 0;
  RecordedRun left = SwitchChunk(chunk_dir, from, state);
  if (!left.empty()) {
    MergePluginSegments(&left);
    if (auto before = TraceStoreFromRecording(left); before.ok())
      for (auto& s : online::SummarizeNewSteps(before.value(), &state->step_cursor)) summaries->push_back(s);
  }
  RecordedRun run = RoundRecording(chunk_dir, from, ended, state);
  if (run.empty()) {
    state->error = "no recording yet";
    return;
  }
  auto store = TraceStoreFromRecording(run);
  if (!store.ok()) {
    state->error = store.error();
    return;
  }
  for (auto& s : online::SummarizeNewSteps(store.value(), &state->step_cursor)) summaries->push_back(s);
  diagnosis::DiagnoseOptions options;
  if (!ended) options.now_unix_ns = static_cast<int64_t>(now_unix_s * 1e9);  // a stall lasts until now
  diagnosis::DiagnosisResult result = diagnosis::Diagnose(store.value(), options);
  state->inflight = diagnosis::InflightByRank({store.value().recorded_calls, store.value().recorded_threads},
                                              static_cast<int64_t>(now_unix_s * 1e9));
  state->reach_unix = static_cast<double>(store.value().recorded_calls.end_unix_ns) / 1e9;
  state->ended = ended;
  // Findings persist by (rank, cause): a new one opens now, a known one keeps its detected_at. Only those that
  // save the minimum effect open (an alarm is for what is worth fixing): the diagnosis keeps a named
  // straggler's own finding below it (shown_findings.h), which the window's result still shows.
  std::vector<OpenFinding> open;
  for (const diagnosis::Finding& f : result.findings) {
    if (f.impact_pct < 100.0 * options.min_effect) continue;
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
