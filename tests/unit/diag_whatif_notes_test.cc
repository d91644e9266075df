// What-if consistency notes (analysis/diagnosis/whatif_notes): another rank ranked above the named
// straggler, and S below 1, are explained in notes; a consistent result gets no note.
#include "analysis/diagnosis/whatif_notes.h"

#include <gtest/gtest.h>

namespace strata::diagnosis {
namespace {

DiagnosisResult WithStraggler(int32_t rank) {
  DiagnosisResult r;
  Straggler s;
  s.rank = RankNumber(rank);
  r.stragglers.push_back(s);
  r.whatif.model = WhatIfModel::kPhaseReplay;
  r.whatif.slowdown = 1.2;
  return r;
}

bool HasNote(const DiagnosisResult& r, const std::string& part) {
  for (const auto& n : r.notes)
    if (n.find(part) != std::string::npos) return true;
  return false;
}

TEST(DiagWhatIfNotes, ConsistentAttributionGetsNoNote) {
  DiagnosisResult r = WithStraggler(1);
  r.whatif.by_rank = {{"0", 1.01}, {"1", 1.20}};
  ExplainWhatIf(&r);
  EXPECT_TRUE(r.notes.empty());
}

TEST(DiagWhatIfNotes, AnotherRankAboveTheStragglerIsExplained) {
  DiagnosisResult r = WithStraggler(1);
  r.whatif.slowdown = 1.29;
  r.whatif.by_rank = {{"0", 1.2839}, {"1", 1.2681}, {"2", 1.1}};
  ExplainWhatIf(&r);
  ASSERT_EQ(r.notes.size(), 1u);
  EXPECT_TRUE(HasNote(r, "puts rank 0 (1.2839) above the straggler's 1 (1.2681)")) << r.notes[0];
  EXPECT_TRUE(HasNote(r, "started its steps earlier"));
}

TEST(DiagWhatIfNotes, OpTablesCompareTheStragglersOwnRank) {
  // by_rank holds one worker per job rank (op tables too): the straggler's key is its rank, not its dp rank.
  DiagnosisResult r = WithStraggler(17);
  r.stragglers[0].evidence.kind = WorkerStragglerEvidence{1, 0, 1.1, 5.0};
  r.whatif.model = WhatIfModel::kOpGraphReplay;
  r.whatif.slowdown = 1.35;
  r.whatif.by_rank = {{"0", 1.3}, {"1", 1.25}, {"17", 1.1}};
  ExplainWhatIf(&r);
  EXPECT_TRUE(HasNote(r, "puts rank 0 (1.3000) above the straggler's 17 (1.1000)"));
  EXPECT_TRUE(HasNote(r, "restores one worker"));
}

TEST(DiagWhatIfNotes, SlowdownBelowOneIsExplained) {
  DiagnosisResult r;
  r.whatif.model = WhatIfModel::kPhaseReplay;
  r.whatif.slowdown = 0.9973;
  ExplainWhatIf(&r);
  EXPECT_TRUE(HasNote(r, "S = 0.9973 is below 1"));
  DiagnosisResult none;
  none.whatif.model = WhatIfModel::kNone;
  none.whatif.slowdown = 0.5;
  ExplainWhatIf(&none);
  EXPECT_TRUE(none.notes.empty());
}

TEST(DiagWhatIfNotes, ARankRestoredAboveTheSlowdownIsExplained) {
  DiagnosisResult r = WithStraggler(1);
  r.whatif.by_rank = {{"0", 1.01}, {"1", 1.30}};  // S = 1.2
  ExplainWhatIf(&r);
  ASSERT_EQ(r.notes.size(), 1u);
  EXPECT_TRUE(HasNote(r, "puts rank 1 at 1.3000, above S = 1.2000")) << r.notes[0];
  r.notes.clear();
  r.whatif.by_rank = {{"0", 1.01}, {"1", 1.21}};  // within 2 % of S: jitter, no note
  ExplainWhatIf(&r);
  EXPECT_TRUE(r.notes.empty());
}

}  // namespace
}  // namespace strata::diagnosis
