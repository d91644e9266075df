// The one table of what a diagnosis path, a later layer or the verdict's own checks (verdict.cc) say about a
// job that changes its verdict (issue 50): each entry has an id (NoteId), a stable key, its effect on the
// status (verdict.h) and its fixed wording, with "{}" where the entry's details (numbers, names) go, in order.
// Whoever finds such a thing records a VerdictNote — the id and its details — never a free sentence; the
// verdict reads the effect from here, and NoteText renders the sentence (status_reasons) in this one place.
// As the skip reasons (core/skip_reasons.h) are for skipped events.
// Not in the JSON contract: status_reasons stay sentences (../shared/spec has no field for an id).
// Invariants: kNoteReasons[i].id == NoteId(i) for every i and the table covers every NoteId (checked at compile
// time); keys are unique lower snake case; a wording holds no brace but its "{}" placeholders, one per detail.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace strata::diagnosis {

/// What an entry does to the verdict (verdict.h): kVoidsComparison — the comparison itself cannot be trusted,
/// inconclusive even beside findings; kBlocksHealthy — the job was not (fully) examined, never healthy (a
/// caveat beside findings); kCaveatOnly — said beside any verdict, changes none.
enum class NoteEffect : uint8_t { kVoidsComparison, kBlocksHealthy, kCaveatOnly };

/// Every entry, in table order. Add one here and in kNoteReasons at the same place.
enum class NoteId : uint8_t {
  // trace paths (trace_diagnosis.h)
  kDuplicateStepMarkers,
  kStepMarkersBackwards,
  kCollectivesEndEarly,
  kComparedOverCollectives,
  kLaunchReturningClocks,
  // op tables (op_table_diagnosis.h)
  kOpsFilledFromPeers,
  kUnknownOpTypesMuchTime,
  kUnknownOpTypes,
  // recordings (stall.h)
  kAsleepBeforeRecording,
  kStoppedBySignal,
  kEndedAbnormally,
  kOpenAtEnd,
  // Flight Recorder dumps (flight_recorder_findings.h)
  kTorchcommsRingWrapped,
  kGroupStopUnknown,
  kWrappedRingsHoldNothing,
  kMembersWithoutDump,
  kUnknownDumpKeys,
  // the verdict's own checks of what was compared (verdict.cc)
  kUnexplainedSlowdown,
  kOneRankGiven,
  kNoCommonStep,
  kOneCommonStep,
  kNoReplayableStep,
  kNoMatchedCollective,
  kWorldSizesDisagree,
  kRanksOutsideWorld,
  kRanksNotGiven,
  kRecordedApart,
  kInputLeftOut,
  kEventsSkipped,
  kInputMemberIgnored,
  kClocksDoNotLineUp,
  kManyUnmatchedCollectives,
  kUnmatchedCollectives,
  kStragglersWithoutFinding,
  // the verdict of Flight Recorder dumps alone (verdict.cc)
  kDumpsShowNoStop,
  kDumpsPartlyJudged,
  kCount
};

struct NoteReason {
  NoteId id;
  std::string_view key;
  NoteEffect effect;
  std::string_view wording;  // "{}" per detail
};

// Wordings two entries share: the same thing said, with a larger or smaller effect by its size.
inline constexpr std::string_view kUnknownOpTypesWording =
    "op types the what-if does not know were left out of it: {}% of the table's time, {}; map them to known "
    "types with --op-map FROM=TO ({})";
inline constexpr std::string_view kUnmatchedCollectivesWording =
    "{} collective calls ({}%) have no counterpart on some rank and were not compared";

inline constexpr std::array<NoteReason, static_cast<size_t>(NoteId::kCount)> kNoteReasons = {{
    {NoteId::kDuplicateStepMarkers, "duplicate_step_markers", NoteEffect::kBlocksHealthy,
     "rank {} has {} ProfilerStep markers whose number it already had at another time (files of two runs "
     "joined?): the first of each was used, the others left out"},
    {NoteId::kStepMarkersBackwards, "step_markers_backwards", NoteEffect::kBlocksHealthy,
     "rank {}'s ProfilerStep numbers go backwards in time {} times: its step markers are inconsistent, so its "
     "steps may not be the peers' same steps"},
    {NoteId::kCollectivesEndEarly, "collectives_end_early", NoteEffect::kBlocksHealthy,
     "the step's collectives end {}% into it: the rest of the step (after its last collective) was compared with "
     "nothing, so a rank slow there would not be seen; trace more steps"},
    {NoteId::kComparedOverCollectives, "compared_over_collectives", NoteEffect::kCaveatOnly,
     "only 1 step is common to every rank, so the ranks were compared over its {} collectives instead (each with "
     "the work before it as one unit{}): lateness below is per collective; trace more steps to compare whole "
     "steps"},
    {NoteId::kLaunchReturningClocks, "launch_returning_clocks", NoteEffect::kCaveatOnly,
     "the collectives are CPU-side NCCL calls, which return once the kernel is enqueued, and the traces' clocks "
     "are not epoch-based: the clocks were aligned by the calls' ends all the same, which moves a rank that "
     "launches late back by part of its lateness"},
    {NoteId::kOpsFilledFromPeers, "ops_filled_from_peers", NoteEffect::kCaveatOnly,
     "{} ops missing from the table (rows skipped as bad input) were filled with the median of the same op on "
     "the other data-parallel ranks, in {} of {} steps"},
    {NoteId::kUnknownOpTypesMuchTime, "unknown_op_types_much_time", NoteEffect::kVoidsComparison,
     kUnknownOpTypesWording},
    {NoteId::kUnknownOpTypes, "unknown_op_types", NoteEffect::kCaveatOnly, kUnknownOpTypesWording},
    {NoteId::kAsleepBeforeRecording, "asleep_before_recording", NoteEffect::kBlocksHealthy,
     "every rank was asleep since before the recorder attached and it saw no collective, so who did not join "
     "cannot be told from collectives; where each waits: {}"},
    {NoteId::kStoppedBySignal, "stopped_by_signal", NoteEffect::kBlocksHealthy,
     "every rank was stopped by signal {} within {} s of each other: the job was stopped, it did not finish"},
    {NoteId::kEndedAbnormally, "ended_abnormally", NoteEffect::kBlocksHealthy, "the job ended abnormally: {}"},
    {NoteId::kOpenAtEnd, "open_at_end", NoteEffect::kBlocksHealthy,
     "the recording ends with ranks inside a collective they never left: {}"},
    {NoteId::kTorchcommsRingWrapped, "torchcomms_ring_wrapped", NoteEffect::kBlocksHealthy,
     "rank {}: its dump is torchcomms' (one counter for all of its groups) and its ring wrapped (first record_id "
     "{}), so its entries' places in their groups cannot be told: its entries were not compared"},
    {NoteId::kGroupStopUnknown, "group_stop_unknown", NoteEffect::kBlocksHealthy,
     "{}: every dump's ring starts mid-sequence (it wrapped) with nothing completed and no pg_status, so the "
     "number the group stopped at cannot be told; ranks {} have entries from #{} on"},
    {NoteId::kWrappedRingsHoldNothing, "wrapped_rings_hold_nothing", NoteEffect::kBlocksHealthy,
     "{}: the rings of rank(s) {} wrapped and hold nothing of the group, so whether they enqueued #{} cannot be "
     "told"},
    {NoteId::kMembersWithoutDump, "members_without_dump", NoteEffect::kCaveatOnly,
     "rank(s) {} of the dumps' process groups wrote no dump among the inputs: what they did is inferred from "
     "their peers' dumps only"},
    {NoteId::kUnknownDumpKeys, "unknown_dump_keys", NoteEffect::kCaveatOnly,
     "{}: {} key(s) strata does not read were ignored (version {})"},
    {NoteId::kUnexplainedSlowdown, "unexplained_slowdown", NoteEffect::kBlocksHealthy,
     "the what-if says steps take {}x the ideal step ({}% of each step lost) but no finding explains it: nothing "
     "was late by the minimum effect on its own"},
    {NoteId::kOneRankGiven, "one_rank_given", NoteEffect::kBlocksHealthy,
     "only {} rank was given: a straggler is found by comparing ranks with each other; give the traces of at least "
     "2 ranks of the job"},
    {NoteId::kNoCommonStep, "no_common_step", NoteEffect::kBlocksHealthy,
     "no step is present on every rank: the ranks' traces cover different steps (or none), so nothing was "
     "compared; trace the same steps on every rank"},
    {NoteId::kOneCommonStep, "one_common_step", NoteEffect::kBlocksHealthy,
     "only {} step is common to every rank: at least 2 are needed to tell a straggler from noise; trace more steps"},
    {NoteId::kNoReplayableStep, "no_replayable_step", NoteEffect::kBlocksHealthy,
     "no step of the op table could be replayed through its dependency model, so the ranks were not compared (see "
     "the notes)"},
    {NoteId::kNoMatchedCollective, "no_matched_collective", NoteEffect::kBlocksHealthy,
     "no collective operation was matched across ranks, so the ranks could not be aligned or compared by arrival "
     "(a CPU-only trace without gloo:/nccl: ops, or traces of different jobs)"},
    {NoteId::kWorldSizesDisagree, "world_sizes_disagree", NoteEffect::kVoidsComparison,
     "the inputs disagree on the world size ({}): they come from different runs, or files of an earlier run are "
     "mixed in; give the files of one run (to compare two runs: strata diff BASE TEST)"},
    {NoteId::kRanksOutsideWorld, "ranks_outside_world", NoteEffect::kVoidsComparison,
     "{} outside the world size {} the traces state: the inputs are not of one run (to compare two runs: strata "
     "diff BASE TEST)"},
    {NoteId::kRanksNotGiven, "ranks_not_given", NoteEffect::kBlocksHealthy,
     "{} of the job's {} ranks {} given (world size from the traces): {} not examined and may hold the straggler"},
    {NoteId::kRecordedApart, "recorded_apart", NoteEffect::kVoidsComparison,
     "the inputs were recorded at different times: rank {} ends {} before rank {} starts, so they are not one run; "
     "give the files of one run (to compare two runs: strata diff BASE TEST)"},
    {NoteId::kInputLeftOut, "input_left_out", NoteEffect::kBlocksHealthy,
     "{} was left out ({}): its rank was not examined"},
    {NoteId::kEventsSkipped, "events_skipped", NoteEffect::kBlocksHealthy,
     "{} of {} events of {} ({}%) were skipped (most: {} x{}): the result misses their work; see the input's "
     "skipped counts"},
    {NoteId::kInputMemberIgnored, "input_member_ignored", NoteEffect::kCaveatOnly, "{}: {} ({})"},
    {NoteId::kClocksDoNotLineUp, "clocks_do_not_line_up", NoteEffect::kVoidsComparison,
     "after clock alignment the ranks' collective completions still differ by {} ms ({}% of a step): the ranks' "
     "timelines do not line up (traces of different runs, or collectives matched wrongly), so lateness cannot be "
     "trusted"},
    {NoteId::kManyUnmatchedCollectives, "many_unmatched_collectives", NoteEffect::kBlocksHealthy,
     kUnmatchedCollectivesWording},
    {NoteId::kUnmatchedCollectives, "unmatched_collectives", NoteEffect::kCaveatOnly, kUnmatchedCollectivesWording},
    {NoteId::kStragglersWithoutFinding, "stragglers_without_finding", NoteEffect::kCaveatOnly,
     "{} straggler(s) (rank {} first) were late by the minimum effect in some steps, but no finding could be made "
     "about them (cause not determined)"},
    {NoteId::kDumpsShowNoStop, "dumps_show_no_stop", NoteEffect::kBlocksHealthy,
     "the Flight Recorder dumps show no hang and no mismatch: every operation they hold was completed by every "
     "rank of its group (dumps tell only those: give profiler traces or a recording to find stragglers)"},
    {NoteId::kDumpsPartlyJudged, "dumps_partly_judged", NoteEffect::kBlocksHealthy,
     "the Flight Recorder dumps show no hang and no mismatch in what could be judged; the rest could not be "
     "judged:"},
}};

namespace verdict_notes_detail {
constexpr bool TableInOrder() {
  for (size_t i = 0; i < kNoteReasons.size(); ++i)
    if (static_cast<size_t>(kNoteReasons[i].id) != i || kNoteReasons[i].key.empty() || kNoteReasons[i].wording.empty())
      return false;
  return true;
}
}  // namespace verdict_notes_detail
static_assert(verdict_notes_detail::TableInOrder(), "kNoteReasons must list every NoteId in enum order");

constexpr const NoteReason& ReasonOf(NoteId id) { return kNoteReasons[static_cast<size_t>(id)]; }

/// One entry about a job: its id and the details its wording takes, in order (already formatted).
struct VerdictNote {
  NoteId id{};
  std::vector<std::string> details;

  NoteEffect effect() const { return ReasonOf(id).effect; }
  bool operator==(const VerdictNote&) const = default;
};

/// The entry's sentence: its wording with each "{}" replaced by the next detail (a missing detail as "").
std::string NoteText(const VerdictNote& note);

/// The sentences of the entries of `notes` with effect `effect`, in order.
std::vector<std::string> NoteTexts(const std::vector<VerdictNote>& notes, NoteEffect effect);

}  // namespace strata::diagnosis
