// Stalls and mismatches of a recorded job (DESIGN.md "Stalls"; cause `hang` and `collective_mismatch`),
// from the collectives' progress (model/collective_progress.h) and where each rank was (thread states,
// off-CPU intervals, CPU samples, process exits).
// The stall rule (thresholds.h): no rank has completed a collective for longer than kStallGapMultiple of
// the job's typical gap between completions, and kStallFloorS at least, while some rank is inside one. The
// stalled collective is the (communicator, seq) most waiting ranks are in; missing are the ranks that never
// entered it (or, NCCL, whose kernel never started while their peers' did), and, post-mortem, those that
// entered it only after a peer had waited the stall floor in it and left (timed out): they came back too late.
// One `hang` finding per missing rank (impact 100 % of the stalled time), or one for the job when every rank
// entered and none completed.
// A mismatch: at one (communicator, seq), ranks called different ops, or the same op with different
// element counts (where the probe reads them): one `collective_mismatch` finding naming each side.
// Ends of the job that are not a hang still keep it from being called healthy (verdict notes, verdict_notes.h):
// ranks that exited non-zero or by a signal (a job stopped by one signal on every rank at once is said as
// such), and a recording that ends with ranks inside a collective.
// Invariants: a stall is reported only while it lasts to the end of what was recorded (post-mortem: the
// waiting ranks never left it; a stall the job recovered from is not a hang); findings name ranks the
// recording saw. Complexity O(n log n) in the collective rows plus O(rows) of the missing ranks' tables.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "analysis/diagnosis/result.h"
#include "analysis/diagnosis/thresholds.h"
#include "store/recorded_calls.h"
#include "store/recorded_threads.h"

namespace strata::diagnosis {

/// A recording as the stall analysis reads it: its collective calls and where its ranked processes' threads
/// were, each decoded once (importers/recorded_calls.h, importers/recorded_threads.h; a loaded job's store
/// holds both). No row of the recording is read here. It holds references: build it where it is passed (or
/// from tables that outlive it).
struct StallRecording {
  const RecordedCollectiveCalls& calls;
  const RecordedThreads& threads;
};

struct StallOptions {
  double gap_multiple = thresholds::kStallGapMultiple;
  double floor_s = thresholds::kStallFloorS;
  double stopped_together_s = thresholds::kStoppedTogetherS;
  std::optional<int64_t> now_unix_ns;  // live: the present instant (else the recording's end)
};

/// One rank's collective state as its node's agent sees it now, published each round for `strata serve`,
/// which sees every node (an agent alone cannot tell a rank of another node that is missing from one that
/// waits): inside a collective (which, since when), when it last completed one, the stall threshold its agent
/// applies, and, for a rank idle past that threshold, where it is (rank_whereabouts.h).
struct RankInflight {
  int32_t rank = -1;
  bool inside = false;
  std::string comm, op;
  int64_t seq = -1;
  double since_unix = 0;          // inside: when it entered the collective
  double last_progress_unix = 0;  // when it last completed a collective (0: none seen)
  double threshold_s = 0;
  int32_t world_size = 0;          // 0: not known
  std::optional<RankState> state;  // idle past the threshold: where it is (none: not looked up)
  std::string frame;               // that state's frame
};

/// Each rank's in-flight state in a live recording at `now_unix_ns` (ranks whose process is seen, with or
/// without collectives in the window).
std::vector<RankInflight> InflightByRank(const StallRecording& recording, int64_t now_unix_ns,
                                         const StallOptions& options = {});

/// The stall rule over the latest in-flight states of every rank of a job (from several nodes): `hang`
/// findings, worded and evidenced as ApplyStallAnalysis's, when ranks wait inside a collective and no rank has
/// completed one for the largest threshold the agents apply. A rank none of whose collectives its recording
/// holds (no open entry, no completion) and whose main thread waits in torch.distributed's collective API
/// (distributed_c10d.py) for the op the others wait in counts among the waiting ranks, not the missing ones.
std::vector<Finding> JudgeInflight(const std::vector<RankInflight>& ranks, double now_unix);

/// Whether every missing rank of a JudgeInflight evidence has its whereabouts from its agent (none is
/// "not reported": serve waits a while for them before it reports the stall).
bool WhereaboutsArrived(const StallEvidence& e);

/// The layer a missing rank's `hang` finding sits in, by its state's kind: its process's end (exited, killed)
/// the host; a kernel that never started the GPU; then PyTorch's data loading on its Python stack the data
/// layer; uninterruptible sleep or an I/O wait the OS; not observed none; else the CPU, Python with a stack.
Layer StalledRankLayer(const StalledRankState& st);

/// The stall of a result (the evidence of its first `hang` finding), or null when it has none.
const StallEvidence* JobStall(const DiagnosisResult& result);

/// What one side of a mismatch called: "all_reduce", "all_reduce of 512 elements" or "all_reduce of 8 bytes"
/// (the size the probes read: NCCL's element count, else gloo's buffer bytes). Shared by every report.
std::string CalledText(const StallEvidence::Call& c);

/// The finding of a job in which every rank that could be seen waits and none is missing (rank_stopped, impact
/// 100 %): the one shape the recording's and the Flight Recorder dumps' stall rules both give it.
Finding JobStoppedFinding(std::vector<int32_t> waiting, std::string op, std::string summary, StallEvidence evidence);

/// What a recording's collectives and threads say about how the job ended, as a value: judging changes
/// nothing; ApplyStallJudgement puts it into a result, the hang and mismatch findings first.
struct StallJudgement {
  std::vector<Finding> findings;  // a collective mismatch, then the hang findings; they go first, in this order
  std::optional<VerdictNote> leading_problem;  // ranks asleep since before the recording: the first input problem
  std::vector<VerdictNote> problems;           // the job's abnormal end, collectives left open: after the others
};

/// The stall, mismatch and abnormal end of a recording (live, at `options.now_unix_ns`: no end yet).
StallJudgement JudgeStall(const StallRecording& recording, const StallOptions& options = {});

/// Puts a judgement's findings first among the result's and its problems among its input problems.
void ApplyStallJudgement(StallJudgement judgement, DiagnosisResult* result);

/// JudgeStall, then ApplyStallJudgement: `hang` and `collective_mismatch` findings first, the abnormal end.
void ApplyStallAnalysis(const StallRecording& recording, DiagnosisResult* result, const StallOptions& options = {});

}  // namespace strata::diagnosis
