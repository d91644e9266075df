// LiveDiagnosis: what `strata agent` concludes about one job while it runs. Each round reads what the job's
// current flight-recorder chunk gained since the last round (blocks are flushed every second; a segment
// tail, segment_tail.h, decodes only new complete blocks), keeps the last `window_s` seconds of every table
// (older rows are dropped, so memory and each round's cost stay bounded by the window), and runs
// the same diagnosis as `strata diagnose` on that recording alone. A finding is identified by (rank, cause):
// it opens when it first appears (detected_at, Unix seconds) and stays open while later rounds find it.
// Each round also reduces the steps completed since the previous round to per-rank step summaries.
// Once the job's processes are gone, one last round (`ended`) reads the whole chunk afresh and diagnoses it
// as a finished recording, as `strata diagnose` would (sequence numbers from the chunk's start).
// When the chunk changes (agent/flight_recorder.h switches to a new chunk once its recorder is attached),
// the previous chunk is read one last time and the collective entries still open in its window are carried
// into the new chunk's rounds until the new chunk shows their threads leave them (agent/chunk_carry.h): a
// new recorder never sees the entry of a collective its processes were already inside. The steps that
// last read completes are summarized before the new chunk's, so the step numbering loses none between chunks.
// Invariants: a live round never analyses rows outside the window, except the entries carried from the
// previous chunk; a round that cannot read the chunk keeps the previous state and says why (`error`).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "agent/chunk_carry.h"
#include "agent/online_job.h"
#include "analysis/diagnosis/result.h"
#include "analysis/diagnosis/stall.h"
#include "analysis/online/step_summaries.h"
#include "segments/segment_tail.h"

namespace strata::agent {

struct OpenFinding {
  diagnosis::Finding finding;
  double detected_at = 0;         // Unix seconds of the round that first found it
  int64_t rounds = 0;             // rounds that found it since
  std::string source = "window";  // "window": a window diagnosis; "inflight": serve's stall rule across nodes
  double last_at = 0;             // Unix seconds of the last round (or window answer) that found it
};

/// serve with several serves sharing the jobs (job_lease.h): which serve owns the job.
struct JobOwnership {
  std::string owner;                    // the serve holding the job's lease ("" when none does)
  bool this_serve = false;              // the serve rendering the status is that one
  int64_t steps_judged_total = -1;      // this serve's: steps judged by every owner so far (-1 when not the owner)
  int64_t summaries_judged_total = -1;  // this serve's: the summaries in those steps (-1 when not the owner)
  uint64_t skipped_judged = 0;          // this serve's: summaries an earlier owner had judged, not judged again
};

struct JobState {
  std::string job;
  std::map<int, int> rank_of_pid;
  std::optional<diagnosis::DiagnosisResult> last;  // the last round's diagnosis
  std::vector<OpenFinding> open;                   // findings open now
  double analysed_at = 0;                          // Unix seconds of the last round
  double analysis_s = 0;                           // how long it took
  std::string error;                               // why the last round could not run, if it could not
  bool ended = false;  // the job's processes are gone and its last chunk was diagnosed as a finished recording
  std::optional<OnlineView> online;               // the online detection over step summaries, when fed
  std::optional<JobOwnership> ownership;          // serve: which serve owns the job
  std::vector<diagnosis::RankInflight> inflight;  // each rank's collective state at the last round (for serve)
  // Unix seconds the last round's recording reached: its newest row (RecordedCollectiveCalls::end_unix_ns; the
  // recorder writes host counters several times a second, so this moves through a stall); 0: no row.
  double reach_unix = 0;
  online::StepCursor step_cursor;  // the steps already summarized
  // The live chunk's segments read so far, by path, each cut to the window (shared: snapshots copy states).
  std::shared_ptr<std::map<std::string, segments::SegmentTail>> tails;
  std::string chunk;                  // the chunk `tails` read
  std::vector<CarriedEntry> carried;  // open entries carried from the previous chunks (chunk_carry.h)
  // Deep tracing (deep_tracing.h), for the status: whether the job's newest chunk records at the deep rates,
  // when its window ends, who opened it, and how many windows were opened.
  struct Deep {
    bool active = false;     // the newest chunk records at the deep rates
    bool requested = false;  // a window is open (the switch waits while the job may be stalled)
    bool attaching = false;  // it is open and its deep recorder not attached yet: its seconds have not begun
    unsigned sample_hz = 0;  // the newest chunk's stack-sampling rate
    double until_unix = 0;
    double began_unix = 0;  // when its seconds began (its deep recorder attached); 0 while attaching
    std::string reason;
    uint64_t windows = 0;
  } deep;
};

/// Drops the rows of `d` older than `from` (monotonic ns), except collective entries whose call has not
/// returned and whose thread has not entered the same function since: a rank stuck inside a collective for
/// longer than the window is still inside it (analysis/diagnosis/stall.h), while an entry whose return the
/// recorder missed (its thread called again) is history like any other row.
void CutToWindow(segments::SegmentData* d, uint64_t from);

/// The job may be stalled (agent/flight_recorder.h holds the chunk's rotation): a rank has been inside a
/// collective for longer than thresholds::kRotationHoldInsideS as the last round's recording shows it (up to
/// its newest row, `reach_unix`, not up to now: the recorder writes about once a second, so a rank waiting
/// 40 ms for a slow peer whose return was not written yet read as inside for over a second on a loaded
/// machine, in 4 rounds of 10, and held a detection's deep window from starting: ctest agent_deep, CI
/// 2026-12-04), or a hang is open.
bool MayBeStalled(const JobState& state, double now_unix_s);

class LiveDiagnosis {
 public:
  explicit LiveDiagnosis(double window_s) : window_s_(window_s) {}
  /// One round over the segments in `chunk_dir` (monotonic now `now_mono_ns`, wall clock `now_unix_s`);
  /// the steps completed since the last round are appended to `summaries` (step_summaries.h). `ended`: the
  /// job's processes are gone and the chunk's recorder finished: diagnosed as `strata diagnose` would a
  /// finished recording (a stall up to its end, how each rank ended), not as a live one.
  void Round(const std::string& chunk_dir, uint64_t now_mono_ns, double now_unix_s, JobState* state,
             std::vector<online::RankStepSummary>* summaries, bool ended = false) const;

 private:
  double window_s_;
};

}  // namespace strata::agent
