// RecordingJudgement: what a recording says about the traces' result, as a value, and the one step that
// applies it. The cross-layer pass (cross_layer.h, JudgeWithRecording) reads the traces' result and the
// recording and changes nothing; ApplyRecordingJudgement is the only place where a recording confirms a
// straggler's cause, replaces it, or adds stragglers the traces did not name.
// Invariants: a judgement is built from one result and applied to that same result, once; applying it
// (1) appends its notes, (2) attaches each straggler's layer comparison to the finding about that rank (one
// made when the traces had none and the recording names a cause) and, when the recording names a cause,
// sets it, (3) puts the ranks slowed alike on the CPU first among the stragglers and withdraws a
// data_imbalance verdict, (4) puts a slow link's rank first, replacing a straggler of the same rank whose
// lateness it explains and the findings about that lateness, (5) hands over the recording's alignment to the
// traces (recording_offsets_ns), (6) adds a finding for a straggler's second cause beside its first: the rank's
// impact split between the two in proportion to what each explains. Findings it adds are placed by impact.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "analysis/diagnosis/cause_choice.h"
#include "analysis/diagnosis/result.h"

namespace strata::diagnosis {

struct RecordingJudgement {
  /// A straggler of the traces compared with its peers layer by layer.
  struct StragglerEvidence {
    RankNumber rank{-1};
    double late_share = 0;  // its lateness, as a share of the median step
    CrossLayerComparison comparison;
    CauseChoice choice;  // names == false: the recording explains too little to change the cause
    CauseChoice second;  // names == false: no second cause of the lateness (NameSecondCause)
  };
  /// Ranks the recording shows late that the traces' blame did not name (it decided they cost more than the
  /// traces' top straggler): their stragglers, latest first, and the one finding about them.
  struct AddedStragglers {
    std::vector<Straggler> stragglers;
    Finding finding;
  };
  std::vector<std::string> notes;             // in the order the pass found them
  std::vector<StragglerEvidence> evidence;    // one per straggler of the traces the recording covers
  std::optional<AddedStragglers> cpu_slowed;  // ranks slowed alike on the CPU (or a shared link's rank)
  std::optional<AddedStragglers> slow_link;   // a slow link's rank (it replaces a top straggler of that rank)
  // Per (segment, rank number): the rank's recording on its trace clock, as the pass aligned it
  // (DiagnosisResult::recording_offsets_ns).
  std::map<std::pair<size_t, int32_t>, int64_t> recording_offsets_ns;
};

/// Applies `judgement` to the result it was judged from (see the invariants above).
void ApplyRecordingJudgement(RecordingJudgement judgement, DiagnosisResult* result);

}  // namespace strata::diagnosis
