// --min-effect's filter (analysis/diagnosis/shown_findings.h) on constructed results: what saves less than the
// minimum effect is removed and counted, but never a named straggler's own top finding; the order of what is
// kept is unchanged; a filter of 0 removes nothing.
#include "analysis/diagnosis/shown_findings.h"

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

namespace strata::diagnosis {
namespace {

Finding Of(std::optional<int32_t> rank, Cause cause, double impact_pct) {
  Finding f;
  if (rank) f.rank = RankNumber(*rank);
  if (rank) f.ranks = {RankNumber(*rank)};
  f.cause = cause;
  f.impact_pct = impact_pct;
  return f;
}

Straggler Named(int32_t rank) {
  Straggler s;
  s.rank = RankNumber(rank);
  return s;
}

DiagnosisResult Result() {
  DiagnosisResult r;
  r.stragglers = {Named(1), Named(2)};
  // rank 1: two small findings (its top one saves 2.5 %); rank 2: none; rank 3 is not a named straggler; one
  // finding about no rank.
  r.findings = {Of(3, Cause::kSlowCompute, 5.0), Of(1, Cause::kCpuContention, 1.0), Of(1, Cause::kSlowCompute, 2.5),
                Of(std::nullopt, Cause::kDataImbalance, 1.5), Of(3, Cause::kGcPause, 0.5)};
  return r;
}

std::vector<Cause> Causes(const DiagnosisResult& r) {
  std::vector<Cause> out;
  for (const Finding& f : r.findings) out.push_back(f.cause);
  return out;
}

TEST(ShownFindings, HidesWhatSavesLessButANamedStragglersOwnTopFinding) {
  DiagnosisResult r = Result();
  HideSmallFindings(0.03, &r);
  EXPECT_EQ(Causes(r), (std::vector<Cause>{Cause::kSlowCompute, Cause::kSlowCompute}));
  EXPECT_EQ(r.findings[0].rank, RankNumber(3));
  EXPECT_EQ(r.findings[1].rank, RankNumber(1));  // 2.5 %, under the filter: rank 1's own top finding
  EXPECT_EQ(r.findings_hidden, 3u);
  ASSERT_EQ(r.notes.size(), 1u);
  EXPECT_EQ(r.notes[0],
            "3 findings would save less than the minimum effect (3.0% of step time) and are not shown (lower "
            "--min-effect to see them)");
  EXPECT_EQ(r.stragglers.size(), 2u);  // the filter removes findings only
}

TEST(ShownFindings, OneHiddenIsSaidInTheSingular) {
  DiagnosisResult r = Result();
  HideSmallFindings(0.012, &r);  // only rank 3's 0.5 % and rank 1's second (1.0 %) fall
  EXPECT_EQ(r.findings_hidden, 2u);
  r = Result();
  r.findings.pop_back();
  HideSmallFindings(0.012, &r);
  EXPECT_EQ(r.findings_hidden, 1u);
  ASSERT_EQ(r.notes.size(), 1u);
  EXPECT_EQ(r.notes[0],
            "1 finding would save less than the minimum effect (1.2% of step time) and is not shown (lower "
            "--min-effect to see it)");
}

TEST(ShownFindings, ANamedStragglersCauseIsTheSameAtAnyFilter) {
  for (double m : {0.0, 0.01, 0.03, 0.1, 0.5, 1.0}) {
    DiagnosisResult r = Result();
    HideSmallFindings(m, &r);
    const Finding* own = nullptr;  // rank 1's top finding among those shown
    for (const Finding& f : r.findings)
      if (f.rank == RankNumber(1) && (!own || f.impact_pct > own->impact_pct)) own = &f;
    ASSERT_NE(own, nullptr) << m;
    EXPECT_EQ(own->cause, Cause::kSlowCompute) << m;
    EXPECT_EQ(r.findings_hidden + r.findings.size(), Result().findings.size()) << m;
  }
  DiagnosisResult none = Result();
  HideSmallFindings(0.0, &none);
  EXPECT_EQ(none.findings_hidden, 0u);
  EXPECT_TRUE(none.notes.empty());
  EXPECT_EQ(Causes(none), Causes(Result()));
}

}  // namespace
}  // namespace strata::diagnosis
