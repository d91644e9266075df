// The one step where a recording changes a result (analysis/diagnosis/recording_judgement.h), on
// constructed results and judgements: evidence attached to the straggler's finding (made when the traces had
// none), a cause set only when the recording names one, ranks slowed alike put first with data_imbalance
// withdrawn, and a slow link that replaces a straggler of the same rank and the findings about its lateness.
#include "analysis/diagnosis/recording_judgement.h"

#include <gtest/gtest.h>

#include <string>

namespace strata::diagnosis {
namespace {

Finding FindingOf(int32_t rank, Cause cause, double impact_pct) {
  Finding f;
  f.rank = RankNumber(rank);
  f.ranks = {RankNumber(rank)};
  f.cause = cause;
  f.impact_pct = impact_pct;
  return f;
}

Straggler StragglerOf(int32_t rank, double late_ms) {
  Straggler s;
  s.rank = RankNumber(rank);
  s.late_ms_per_step = late_ms;
  return s;
}

DiagnosisResult Traces() {
  DiagnosisResult r;
  r.step_time_median_ms = 100;
  r.stragglers = {StragglerOf(1, 20)};
  r.findings = {FindingOf(1, Cause::kSlowCompute, 20), FindingOf(3, Cause::kDataImbalance, 5)};
  r.notes = {"from the traces"};
  return r;
}

CauseChoice Names(Cause cause, std::string why) {
  CauseChoice c;
  c.names = true;
  c.cause = cause;
  c.layer = Layer::kCpu;
  c.explained = c.confidence = 0.9;
  c.why = std::move(why);
  return c;
}

TEST(RecordingJudgement, AnEmptyJudgementChangesNothing) {
  DiagnosisResult r = Traces();
  ApplyRecordingJudgement(RecordingJudgement(), &r);
  ASSERT_EQ(r.findings.size(), 2u);
  EXPECT_EQ(r.findings[0].cause, Cause::kSlowCompute);
  EXPECT_FALSE(r.findings[0].evidence.cross_layer.has_value());
  EXPECT_EQ(r.notes, std::vector<std::string>{"from the traces"});
}

TEST(RecordingJudgement, ANamedCauseReplacesTheTracesGuessAndEvidenceIsKeptEitherWay) {
  DiagnosisResult r = Traces();
  RecordingJudgement j;
  j.notes = {"aligned by collectives"};
  RecordingJudgement::StragglerEvidence e;
  e.rank = RankNumber(1);
  e.late_share = 0.2;
  e.choice = Names(Cause::kCpuContention, "waited for a CPU 25.0 % of the time while stress ran");
  j.evidence.push_back(e);
  ApplyRecordingJudgement(j, &r);
  EXPECT_EQ(r.findings[0].cause, Cause::kCpuContention);
  EXPECT_TRUE(r.findings[0].evidence.cross_layer.has_value());
  EXPECT_EQ(r.findings[0].summary,
            "rank 1 is late by 20.0 % of the step: waited for a CPU 25.0 % of the time while stress ran (slow_compute "
            "in the trace)");
  EXPECT_EQ(r.notes, (std::vector<std::string>{"from the traces", "aligned by collectives"}));

  // Evidence that names nothing: attached, the traces' cause kept.
  DiagnosisResult kept = Traces();
  e.choice = CauseChoice{.names = false};
  ApplyRecordingJudgement(RecordingJudgement{.evidence = {e}}, &kept);
  EXPECT_EQ(kept.findings[0].cause, Cause::kSlowCompute);
  EXPECT_TRUE(kept.findings[0].evidence.cross_layer.has_value());
}

// A second cause is a finding of its own about the same rank: what fixing the rank saves (its finding's 40 %,
// at most its 25 % lateness) split by what each explains (0.9 and 0.3: 18.75 % and 6.25 %), both placed by
// impact, the first's summary restating its saving.
TEST(RecordingJudgement, ASecondCauseSplitsTheRanksSavingAtMostItsLateness) {
  DiagnosisResult r = Traces();
  r.stragglers[0].score = 0.25;
  r.findings[0].impact_pct = 40;
  r.findings[0].summary = "rank 1 ...; fixing it saves 40.0% of step time";
  RecordingJudgement::StragglerEvidence e;
  e.rank = RankNumber(1);
  e.late_share = 0.2;
  e.choice = Names(Cause::kCpuContention, "waited for a CPU");
  e.second = Names(Cause::kMemoryPressure, "in uninterruptible sleep");
  e.second.explained = e.second.confidence = 0.3;
  ApplyRecordingJudgement(RecordingJudgement{.evidence = {e}}, &r);
  ASSERT_EQ(r.findings.size(), 3u);
  EXPECT_EQ(r.findings[0].cause, Cause::kCpuContention);
  EXPECT_DOUBLE_EQ(r.findings[0].impact_pct, 18.75);
  EXPECT_EQ(r.findings[1].cause, Cause::kMemoryPressure);
  EXPECT_EQ(r.findings[1].rank, RankNumber(1));
  EXPECT_DOUBLE_EQ(r.findings[1].impact_pct, 6.25);
  EXPECT_DOUBLE_EQ(r.findings[1].confidence, 0.3);
  EXPECT_TRUE(r.findings[1].evidence.cross_layer.has_value());
  EXPECT_EQ(r.findings[2].cause, Cause::kDataImbalance);

  // Beside the traces' own cause, which the recording does not replace: its summary's saving is restated.
  DiagnosisResult kept = Traces();
  kept.stragglers[0].score = 0.25;
  kept.findings[0].impact_pct = 40;
  kept.findings[0].confidence = 0.9;
  kept.findings[0].summary = "rank 1 ...; fixing it saves 40.0% of step time";
  e.choice = CauseChoice{.names = false};
  ApplyRecordingJudgement(RecordingJudgement{.evidence = {e}}, &kept);
  ASSERT_EQ(kept.findings.size(), 3u);
  EXPECT_EQ(kept.findings[0].cause, Cause::kSlowCompute);
  EXPECT_NE(kept.findings[0].summary.find("saves 18.8%"), std::string::npos) << kept.findings[0].summary;
  EXPECT_EQ(kept.findings[1].cause, Cause::kMemoryPressure);
}

TEST(RecordingJudgement, AStragglerWithoutAFindingGetsOneOnlyWhenTheRecordingNamesACause) {
  RecordingJudgement::StragglerEvidence e;
  e.rank = RankNumber(2);
  e.late_share = 0.12;
  e.choice = CauseChoice{.names = false};
  DiagnosisResult r = Traces();
  ApplyRecordingJudgement(RecordingJudgement{.evidence = {e}}, &r);
  EXPECT_EQ(r.findings.size(), 2u);
  e.choice = Names(Cause::kGcPause, "9 Python garbage collections took 14.0 % of the time");
  ApplyRecordingJudgement(RecordingJudgement{.evidence = {e}}, &r);
  ASSERT_EQ(r.findings.size(), 3u);
  EXPECT_EQ(r.findings[2].rank, RankNumber(2));
  EXPECT_EQ(r.findings[2].cause, Cause::kGcPause);
  EXPECT_DOUBLE_EQ(r.findings[2].impact_pct, 12);
  EXPECT_NE(r.findings[2].summary.find("(not seen in the trace)"), std::string::npos) << r.findings[2].summary;
}

TEST(RecordingJudgement, RanksSlowedAlikeComeFirstAndDataImbalanceIsWithdrawn) {
  DiagnosisResult r = Traces();
  RecordingJudgement j;
  j.cpu_slowed = RecordingJudgement::AddedStragglers{.stragglers = {StragglerOf(0, 30), StragglerOf(2, 28)},
                                                     .finding = FindingOf(0, Cause::kCpuContention, 30)};
  ApplyRecordingJudgement(j, &r);
  ASSERT_EQ(r.stragglers.size(), 3u);
  EXPECT_EQ(r.stragglers[0].rank, RankNumber(0));
  EXPECT_EQ(r.stragglers[1].rank, RankNumber(2));
  EXPECT_EQ(r.stragglers[2].rank, RankNumber(1));
  ASSERT_EQ(r.findings.size(), 2u);  // data_imbalance withdrawn, the new finding first by impact
  EXPECT_EQ(r.findings[0].cause, Cause::kCpuContention);
  EXPECT_EQ(r.findings[1].cause, Cause::kSlowCompute);
  EXPECT_NE(r.notes.back().find("data_imbalance verdict (ranks late in turn) was withdrawn"), std::string::npos);
}

TEST(RecordingJudgement, ASlowLinkReplacesTheSameRanksLatenessOnly) {
  DiagnosisResult r = Traces();
  r.findings.push_back(FindingOf(1, Cause::kGcPause, 4));  // not about its lateness at collectives: kept
  RecordingJudgement j;
  Straggler link = StragglerOf(1, 35);
  link.evidence.from = EvidenceSource::kRecorderLink;
  j.slow_link =
      RecordingJudgement::AddedStragglers{.stragglers = {link}, .finding = FindingOf(1, Cause::kSlowCommunication, 35)};
  ApplyRecordingJudgement(j, &r);
  ASSERT_EQ(r.stragglers.size(), 1u);
  EXPECT_EQ(r.stragglers[0].evidence.from, EvidenceSource::kRecorderLink);
  ASSERT_EQ(r.findings.size(), 3u);
  EXPECT_EQ(r.findings[0].cause, Cause::kSlowCommunication);
  EXPECT_EQ(r.findings[1].cause, Cause::kDataImbalance);
  EXPECT_EQ(r.findings[2].cause, Cause::kGcPause);

  // Another rank's link: the traces' straggler stays, second.
  DiagnosisResult other = Traces();
  j.slow_link->stragglers[0].rank = RankNumber(2);
  j.slow_link->finding.rank = RankNumber(2);
  ApplyRecordingJudgement(j, &other);
  ASSERT_EQ(other.stragglers.size(), 2u);
  EXPECT_EQ(other.stragglers[0].rank, RankNumber(2));
  EXPECT_EQ(other.stragglers[1].rank, RankNumber(1));
  EXPECT_EQ(other.findings.size(), 3u);
}

}  // namespace
}  // namespace strata::diagnosis
