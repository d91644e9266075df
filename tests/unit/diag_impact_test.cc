// The one impact story's reconciliation (impact.h): the what-if's waste 1 − 1/S covers every straggler's
// measured lateness, and a one-rank finding saves at most that lateness.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include "analysis/diagnosis/impact.h"

namespace strata::diagnosis {
namespace {

DiagnosisResult OneStraggler(double slowdown, double score, double impact_pct) {
  DiagnosisResult r;
  r.whatif.model = WhatIfModel::kPhaseReplay;
  r.whatif.slowdown = slowdown;
  r.whatif.ideal_step_ms = 100.0;
  Straggler st;
  st.rank = RankNumber(3);
  st.score = score;
  r.stragglers.push_back(st);
  Finding f;
  f.rank = RankNumber(3);
  f.ranks = RankNumbers({3});
  f.cause = Cause::kSlowCompute;
  f.impact_pct = impact_pct;
  f.summary = fmt::format("rank 3 ...; fixing it saves {:.1f}% of step time", impact_pct);
  r.findings.push_back(f);
  return r;
}

TEST(Impact, ALatenessAboveTheWasteRaisesSToCoverIt) {
  DiagnosisResult r = OneStraggler(1.5, 0.40, 38.0);  // waste 33.3 % < lateness 40 %
  ReconcileImpacts(&r);
  EXPECT_NEAR(r.whatif.slowdown, 1.0 / 0.6, 1e-4);
  EXPECT_NEAR(r.whatif.ideal_step_ms, 100.0 * 1.5 * 0.6, 1e-3);  // the no-delay step is unchanged
  EXPECT_LE(r.stragglers[0].score, WhatIfWaste(r.whatif) + 1e-4);
  EXPECT_DOUBLE_EQ(r.findings[0].impact_pct, 38.0);  // it fits under both now: not cut to the old 33.3
  ASSERT_EQ(r.notes.size(), 1u);
  EXPECT_NE(r.notes[0].find("S 1.5000 -> 1.6667"), std::string::npos) << r.notes[0];
}

TEST(Impact, ALatenessWithinTheWasteChangesNothing) {
  DiagnosisResult r = OneStraggler(1.5, 0.20, 15.0);
  ReconcileImpacts(&r);
  EXPECT_DOUBLE_EQ(r.whatif.slowdown, 1.5);
  EXPECT_DOUBLE_EQ(r.whatif.ideal_step_ms, 100.0);
  EXPECT_TRUE(r.notes.empty());
}

TEST(Impact, ASavingAboveTheLatenessIsBroughtDownToIt) {
  DiagnosisResult r = OneStraggler(2.0, 0.25, 40.0);
  ReconcileImpacts(&r);
  EXPECT_DOUBLE_EQ(r.findings[0].impact_pct, 25.0);
  EXPECT_NE(r.findings[0].summary.find("saves 25.0%"), std::string::npos) << r.findings[0].summary;
}

}  // namespace
}  // namespace strata::diagnosis
