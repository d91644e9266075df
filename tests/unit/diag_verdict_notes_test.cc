// The table of verdict-changing notes (analysis/diagnosis/verdict_notes.h) and their effect on the status
// (verdict.h), every entry tested through the table:
//  - a clean, examined job is healthy; with one note added it is: healthy with the note as a caveat (caveat
//    only), inconclusive (blocks healthy: never healthy), inconclusive even beside a finding (voids the
//    comparison); a finding beside a blocking note stays "findings", the note its caveat;
//  - the note's sentence (NoteText) is the reason said, its details in the wording's places;
//  - keys are unique lower snake case and each wording has a place for its details and no other brace.
#include "analysis/diagnosis/verdict_notes.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "analysis/diagnosis/verdict.h"
#include "diag_test_util.h"

namespace strata::diagnosis {
namespace {

using diagtest::BasicStep;
using diagtest::DdpSpec;
using diagtest::kMs;

DdpSpec Clean() {
  DdpSpec spec;
  spec.ranks = 4;
  spec.steps = 5;
  spec.plan = [](int r, int s) { return BasicStep((80 + (r + s) % 2) * kMs); };
  return spec;
}

size_t Places(std::string_view wording) {
  size_t n = 0;
  for (size_t at = wording.find("{}"); at != std::string_view::npos; at = wording.find("{}", at + 2)) ++n;
  return n;
}

// Details for every place of the entry's wording: "<d0>", "<d1>", ...
VerdictNote NoteWithDetails(NoteId id) {
  VerdictNote note{id, {}};
  for (size_t i = 0; i < Places(ReasonOf(id).wording); ++i) note.details.push_back("<d" + std::to_string(i) + ">");
  return note;
}

bool Says(const DiagnosisResult& r, const std::string& text) {
  return std::find(r.status_reasons.begin(), r.status_reasons.end(), text) != r.status_reasons.end();
}

TEST(VerdictNotes, EachEntrysEffectOnTheVerdictIsTheTables) {
  const DiagnosisResult clean = diagtest::DiagnoseDdp(Clean());
  ASSERT_EQ(clean.status, Verdict::kHealthy);
  const TraceStore store = diagtest::LoadDdp(Clean());
  for (const NoteReason& row : kNoteReasons) {
    const VerdictNote note = NoteWithDetails(row.id);
    const std::string text = NoteText(note);
    DiagnosisResult r = clean;
    r.verdict_notes = {note};
    AssessStatus(store, &r);
    const Verdict alone = row.effect == NoteEffect::kCaveatOnly ? Verdict::kHealthy : Verdict::kInconclusive;
    EXPECT_EQ(r.status, alone) << row.key;
    EXPECT_TRUE(Says(r, text)) << row.key;
    r.findings.resize(1);
    AssessStatus(store, &r);
    const Verdict beside = row.effect == NoteEffect::kVoidsComparison ? Verdict::kInconclusive : Verdict::kFindings;
    EXPECT_EQ(r.status, beside) << row.key;
    EXPECT_TRUE(Says(r, text)) << row.key;
  }
}

TEST(VerdictNotes, VoidingNotesAreSaidFirstThenBlockingThenCaveats) {
  DiagnosisResult r = diagtest::DiagnoseDdp(Clean());
  r.verdict_notes = {NoteWithDetails(NoteId::kOpsFilledFromPeers), NoteWithDetails(NoteId::kOpenAtEnd),
                     NoteWithDetails(NoteId::kUnknownOpTypesMuchTime)};
  AssessStatus(diagtest::LoadDdp(Clean()), &r);
  ASSERT_EQ(r.status_reasons.size(), 3u);
  EXPECT_EQ(r.status_reasons[0], NoteText(r.verdict_notes[2]));
  EXPECT_EQ(r.status_reasons[1], NoteText(r.verdict_notes[1]));
  EXPECT_EQ(r.status_reasons[2], NoteText(r.verdict_notes[0]));
}

TEST(VerdictNotes, TheSentenceIsTheWordingWithItsDetailsInPlace) {
  EXPECT_EQ(NoteText({NoteId::kEndedAbnormally, {"rank 1 (pid 11) exited with code 3"}}),
            "the job ended abnormally: rank 1 (pid 11) exited with code 3");
  EXPECT_EQ(NoteText({NoteId::kUnknownDumpKeys, {"rank0.pkl", "2", "2.4"}}),
            "rank0.pkl: 2 key(s) strata does not read were ignored (version 2.4)");
  // An entry without details, and a missing detail rendered empty.
  EXPECT_EQ(NoteText({NoteId::kLaunchReturningClocks, {}}), ReasonOf(NoteId::kLaunchReturningClocks).wording);
  EXPECT_EQ(NoteText({NoteId::kOpenAtEnd, {}}), "the recording ends with ranks inside a collective they never left: ");
  EXPECT_EQ(NoteTexts({{NoteId::kOpenAtEnd, {"a"}}, {NoteId::kMembersWithoutDump, {"3"}}}, NoteEffect::kCaveatOnly),
            (std::vector<std::string>{NoteText({NoteId::kMembersWithoutDump, {"3"}})}));
}

TEST(VerdictNotes, KeysAreUniqueAndWordingsHoldOnlyTheirPlaces) {
  std::set<std::string_view> keys;
  for (const NoteReason& row : kNoteReasons) {
    EXPECT_TRUE(keys.insert(row.key).second) << row.key;
    EXPECT_TRUE(std::all_of(row.key.begin(), row.key.end(), [](char c) { return (c >= 'a' && c <= 'z') || c == '_'; }))
        << row.key;
    std::string rest(row.wording);
    for (size_t at = rest.find("{}"); at != std::string::npos; at = rest.find("{}")) rest.erase(at, 2);
    EXPECT_EQ(rest.find_first_of("{}"), std::string::npos) << row.key;
  }
}

}  // namespace
}  // namespace strata::diagnosis
