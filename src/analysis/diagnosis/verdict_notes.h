// The one table of what a diagnosis path or a later layer says about a job that changes its verdict (issue
// 50): each entry has an id (NoteId), a stable key, its effect on the status (verdict.h) and its fixed wording,
// with "{}" where the entry's details (numbers, names) go, in order. A path records a VerdictNote — the id and
// its details — never a free sentence; the verdict reads the effect from here, and NoteText renders the
// sentence (status_reasons) in this one place. As the skip reasons (core/skip_reasons.h) are for skipped events.
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
  kCount
};

struct NoteReason {
  NoteId id;
  std::string_view key;
  NoteEffect effect;
  std::string_view wording;  // "{}" per detail
};

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
     "op types the what-if does not know were left out of it: {}% of the table's time, {}; map them to known "
     "types with --op-map FROM=TO ({})"},
    {NoteId::kUnknownOpTypes, "unknown_op_types", NoteEffect::kCaveatOnly,
     "op types the what-if does not know were left out of it: {}% of the table's time, {}; map them to known "
     "types with --op-map FROM=TO ({})"},
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
