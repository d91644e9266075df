// Hangs and collective mismatches of a job from its PyTorch Flight Recorder dumps (one per rank,
// store/flight_recorder_dump.h): the same `hang` and `collective_mismatch` findings, with the same
// StallEvidence, as a recording's stall analysis (stall.h), so JSON, text and HTML render them alike.
//
// The rule, per process group (its global ranks from pg_config) and sequence space (collectives by
// collective_seq_id; P2P operations by p2p_seq_id; torchcomms dumps, which number every group's entries with
// one counter, by each entry's place among its group's entries):
// - each rank with a dump has a last enqueued and a last completed number: the highest in its ring (an entry
//   at a number, a coalesced group's entries together) or in pg_status, whichever is higher;
// - k, the first number not completed by every rank with a dump, is the lowest last completed + 1; the ranks
//   that enqueued k wait in it, and the group's ranks that never enqueued it are missing: one `hang` finding
//   per missing rank (its dump's last entry of the group and that entry's innermost user frame as where it
//   was last seen; or, with no dump of it, said so and inferred from its peers' dumps). A missing rank that
//   waits in another group's stall is not the culprit: the wavefront says where it waits; a culprit missing
//   from several stalls is named once, in the stall with the fewest missing ranks. When every rank
//   enqueued k and none completed it, ranks whose entry never started while a peer's did are missing; if
//   none, one `hang` finding for the group ("every rank entered it and none completed it");
// - a P2P operation waits for the peer its name states ("nccl:send 0->1", group ranks): the peer is missing
//   when it never enqueued the number, mismatched when its entry there is not the matching recv / send;
// - at a number several ranks' rings hold, ranks that disagree on the op, the input sizes or the dtypes
//   (each op of a coalesced group in order; a send and its recv by sizes only) give a `collective_mismatch`
//   finding naming each side (the first such number of each group);
// - a ring that wrapped (its first entry's record_id above 0) covers its group from its first entry on: a
//   rank whose ring starts past its group's k with nothing completed and no pg_status leaves the group
//   unjudged, and the reason is said (the result is then inconclusive unless something else was found).
// Invariants: every finding names ranks the dumps or their groups' pg_config name; nothing is inferred
// about a number below a ring's first entry but from pg_status; findings are mismatches first, then hangs.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "analysis/diagnosis/result.h"
#include "store/flight_recorder_dump.h"

namespace strata::diagnosis {

/// What a job's dumps say, as a value: judging changes nothing; ApplyFlightRecorderJudgement puts it into a
/// result.
struct FlightRecorderJudgement {
  std::vector<Finding> findings;      // collective mismatches, then hangs
  std::vector<VerdictNote> problems;  // what could not be judged, and why (never healthy beside them)
  std::vector<VerdictNote> caveats;   // what was judged around (members without a dump, unknown keys)
};

FlightRecorderJudgement JudgeFlightRecorder(const FlightRecorderDumps& dumps);

/// Whether a recording's `hang` findings (`recorded`) and the dumps' name the same stopped ranks, as a note for
/// the result ("the recording and the Flight Recorder dumps agree: ..." or "... differ: ..."); none when
/// neither names one.
std::optional<std::string> CompareWithRecording(const std::vector<Finding>& recorded,
                                                const FlightRecorderJudgement& dumps);

/// Puts a judgement's findings first among the result's, and its problems, then its caveats, after the
/// result's verdict notes (verdict_notes.h).
void ApplyFlightRecorderJudgement(FlightRecorderJudgement judgement, DiagnosisResult* result);

}  // namespace strata::diagnosis
