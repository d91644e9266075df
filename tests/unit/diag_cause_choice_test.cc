// Naming a straggler's cause and its confidence (analysis/diagnosis/cause_choice): the largest excess is
// named only when it covers half of the lateness, confidence is that share (0 for unknown); end to end, a
// rank that is late mostly because it enters each step late (its previous step's tail is long) is not
// blamed on the small data-loading excess inside the step (issue 10: 27 ms of data loading against 124 ms
// of lateness was labelled dataloader_stall at confidence 0.95).
#include "analysis/diagnosis/cause_choice.h"

#include <gtest/gtest.h>

#include "diag_test_util.h"
#include "reports/evidence_json.h"

namespace strata::diagnosis {
namespace {

using namespace strata::diagtest;  // NOLINT(google-build-using-namespace)

TEST(DiagCauseChoice, LargestExcessNamedWhenItCoversHalfTheLateness) {
  const std::vector<CauseCandidate> c = {{Cause::kDataloaderStall, Layer::kData, 6.0},
                                         {Cause::kSlowCompute, Layer::kCpu, 9.0}};
  CauseChoice x = ChooseCause(c, 12.0);
  EXPECT_EQ(x.cause, Cause::kSlowCompute);
  EXPECT_EQ(x.layer, Layer::kCpu);
  EXPECT_DOUBLE_EQ(x.explained, 0.75);
  EXPECT_DOUBLE_EQ(x.confidence, 0.75);
  EXPECT_DOUBLE_EQ(x.excess_ms, 9.0);
  x = ChooseCause(c, 20.0);  // 9 of 20 ms: under half
  EXPECT_EQ(x.cause, Cause::kUnknown);
  EXPECT_EQ(x.layer, Layer::kNone);
  EXPECT_DOUBLE_EQ(x.explained, 0.45);
  EXPECT_DOUBLE_EQ(x.confidence, 0.0);
  x = ChooseCause(c, 4.0);  // more than the lateness: clamped
  EXPECT_DOUBLE_EQ(x.confidence, 1.0);
  EXPECT_EQ(ChooseCause({{Cause::kHostStall, Layer::kHost, -3.0}}, 10.0).cause, Cause::kUnknown);
  EXPECT_EQ(ChooseCause(c, 0.0).cause, Cause::kUnknown);
  EXPECT_EQ(ChooseCause({}, 10.0).cause, Cause::kUnknown);
}

TEST(DiagCauseChoice, ExplainedShareIsBoundedAndSafe) {
  EXPECT_DOUBLE_EQ(ExplainedShare(5, 10), 0.5);
  EXPECT_DOUBLE_EQ(ExplainedShare(-5, 10), 0.0);
  EXPECT_DOUBLE_EQ(ExplainedShare(50, 10), 1.0);
  EXPECT_DOUBLE_EQ(ExplainedShare(5, 0), 0.0);
  EXPECT_DOUBLE_EQ(ExplainedShare(std::nan(""), 10), 0.0);
}

TEST(DiagCauseChoice, ASmallExcessInsideTheStepDoesNotExplainALateEntry) {
  // Rank 1's optimizer tail is 30 ms longer: it enters every next step 30 ms late; inside the step its data
  // loading takes 5 ms more. Lateness ~35 ms per step; data loading explains 1/7 of it.
  DdpSpec spec;
  spec.ranks = 3;
  spec.steps = 6;
  spec.plan = [](int r, int) {
    RankStep st = BasicStep(40 * kMs, {Op(kDataLoaderNext, (r == 1 ? 8 : 3) * kMs, "user_annotation")});
    if (r == 1) st.tail.push_back(Op("aten::copy_", 30 * kMs));
    return st;
  };
  const DiagnosisResult r = Diagnose(LoadDdp(spec));
  ASSERT_FALSE(r.findings.empty());
  const Finding& f = r.findings[0];
  ASSERT_EQ(f.rank, 1);
  EXPECT_NE(f.cause, Cause::kDataloaderStall);
  EXPECT_EQ(f.cause, Cause::kUnknown);
  EXPECT_EQ(f.confidence, 0.0);
  EXPECT_NEAR(FindingEvidenceJson(f.evidence)["explained_share"].get<double>(), 5.0 / 35.0, 0.03);
  EXPECT_EQ(FindingEvidenceJson(f.evidence)["blame_kind"], "dependency_edge");
}

TEST(DiagCauseChoice, ConfidenceOfANamedCauseIsTheShareItExplains) {
  // Rank 2 loads data 12 ms longer and is 12 ms late: data loading explains all of it.
  DdpSpec spec;
  spec.ranks = 3;
  spec.steps = 6;
  spec.plan = [](int r, int) {
    return BasicStep(40 * kMs, {Op(kDataLoaderNext, (r == 2 ? 15 : 3) * kMs, "user_annotation")});
  };
  const DiagnosisResult r = Diagnose(LoadDdp(spec));
  ASSERT_FALSE(r.findings.empty());
  EXPECT_EQ(r.findings[0].cause, Cause::kDataloaderStall);
  EXPECT_NEAR(r.findings[0].confidence, 1.0, 0.02);
  EXPECT_GE(r.findings[0].confidence, kMinExplainedShare);
}

// The candidates of a differential profile, the same for every path: on a GPU job the device's busy time and
// launch overhead (device idle while the host computes, capped by the host's compute excess), else host
// compute; host gaps only where ops were recorded.
TEST(DiagCauseChoice, ProfileCandidatesByJobKind) {
  ProfileExcess e;
  e.data_ms = 1;
  e.host_gap_ms = 2;
  e.compute_ms = 3;
  e.device_busy_ms = 4;
  auto causes = [](const std::vector<CauseCandidate>& c) {
    std::vector<std::pair<Cause, double>> out;
    for (const CauseCandidate& x : c) out.emplace_back(x.cause, x.excess_ms);
    return out;
  };
  using V = std::vector<std::pair<Cause, double>>;
  EXPECT_EQ(
      causes(ProfileCandidates(e, true, true, 9)),
      (V{{Cause::kDataloaderStall, 1}, {Cause::kHostStall, 2}, {Cause::kSlowCompute, 4}, {Cause::kLaunchOverhead, 3}}));
  EXPECT_EQ(causes(ProfileCandidates(e, true, true, 0.5)).back(), std::make_pair(Cause::kLaunchOverhead, 0.5));
  EXPECT_EQ(causes(ProfileCandidates(e, false, false, 9)), (V{{Cause::kDataloaderStall, 1}, {Cause::kSlowCompute, 3}}));
  EXPECT_EQ(ProfileCandidates(e, false, true, 0)[2].layer, Layer::kCpu);
}

}  // namespace
}  // namespace strata::diagnosis
