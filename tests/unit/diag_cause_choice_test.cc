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
  EXPECT_DOUBLE_EQ(x.excess, 9.0);
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
  ASSERT_EQ(f.rank, RankNumber(1));
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

// NameCause over counters (issue 24): the refinement rules of counter_evidence, now in one place.
TEST(DiagNameCause, CountersRefineOnlyComputeAndCommunicationCauses) {
  CounterEvidence e{.named = Cause::kSlowCompute, .confidence = 0.7};
  e.sm_clock_mhz = CounterMeans{1100, 1980};  // far below the peers: throttled
  CauseChoice c = NameCause(e);
  EXPECT_TRUE(c.names);
  EXPECT_EQ(c.cause, Cause::kThermalThrottling);
  EXPECT_EQ(c.layer, Layer::kGpu);
  EXPECT_DOUBLE_EQ(c.confidence, 0.7);  // counters refine; the measured share stays
  EXPECT_NE(c.why.find("1100 MHz"), std::string::npos);
  // 5 % below: throttled only when that deficit accounts for half the device slowdown (or more).
  e.sm_clock_mhz = CounterMeans{1900, 2000};
  EXPECT_FALSE(NameCause(e).names);
  e.device_slowdown = 0.08;  // 2000/1900 - 1 = 5.3 % >= 0.5 x 8 %
  EXPECT_EQ(NameCause(e).cause, Cause::kThermalThrottling);
  e.device_slowdown = 0.2;  // 5.3 % < 10 %: something else slows the device
  EXPECT_FALSE(NameCause(e).names);
  e.sm_clock_mhz.reset();
  e.pcie_bytes = CounterMeans{4e9, 2e9};
  EXPECT_EQ(NameCause(e).cause, Cause::kPciePressure);
  e.nic_bytes = CounterMeans{9e9, 1e9};  // a compute cause is not refined by the NIC
  e.pcie_bytes.reset();
  EXPECT_FALSE(NameCause(e).names);
  e.named = Cause::kSlowCommunication;
  EXPECT_EQ(NameCause(e).cause, Cause::kNetworkContention);
  e.named = Cause::kGcPause;  // a cause the counters do not speak to
  EXPECT_FALSE(CountersMayRefine(e.named));
  EXPECT_FALSE(NameCause(e).names);
}

// NameCause over a recording: the recorder replaces a trace-level guess when it explains half the lateness;
// cgroup throttling first when it explains enough; foreign traffic on the rank's link before everything.
TEST(DiagNameCause, RecordingReplacesOnlyTraceLevelGuesses) {
  RecordingEvidence e;
  e.named = Cause::kSlowCompute;
  e.late_share = 0.10;
  e.candidates = {{Cause::kCpuThrottling, Layer::kCpu, 0.01, "throttled"},
                  {Cause::kCpuContention, Layer::kCpu, 0.02, "waited"},
                  {Cause::kGcPause, Layer::kPython, 0.08, "gc"}};
  CauseChoice c = NameCause(e);
  EXPECT_TRUE(c.names);
  EXPECT_EQ(c.cause, Cause::kGcPause);
  EXPECT_EQ(c.layer, Layer::kPython);
  EXPECT_DOUBLE_EQ(c.confidence, 0.8);
  EXPECT_EQ(c.why, "gc");
  e.candidates[0].excess = 0.06;  // the quota explains enough: it comes first though GC's excess is larger
  EXPECT_EQ(NameCause(e).cause, Cause::kCpuThrottling);
  e.link = LinkLoad{{1.5e6, 1e6}};  // under twice its peers': not someone else's traffic
  EXPECT_EQ(NameCause(e).cause, Cause::kCpuThrottling);
  e.link = LinkLoad{{30e6, 1e6}};  // its link carries others' traffic: that comes first
  c = NameCause(e);
  EXPECT_EQ(c.cause, Cause::kNetworkContention);
  EXPECT_DOUBLE_EQ(c.confidence, 1.0);
  EXPECT_NE(c.why.find("30.0 MB/s against 1.0 MB/s"), std::string::npos);
  e.link.reset();
  e.named = Cause::kDataloaderStall;  // a cause the traces measured is kept (the comparison is still given)
  c = NameCause(e);
  EXPECT_FALSE(c.names);
  EXPECT_DOUBLE_EQ(c.excess, 0.06);
  e.named.reset();  // no finding in the traces: named when it explains enough
  EXPECT_TRUE(NameCause(e).names);
  for (RecordedCandidate& x : e.candidates) x.excess = 0.04;  // under half of 10 %: nothing named
  EXPECT_FALSE(NameCause(e).names);
  e.candidates.clear();
  EXPECT_FALSE(NameCause(e).names);
}

// A second cause of the same lateness: another cause's candidate, by its excess beside the others, from a quarter
// of the lateness; never the first's cause again, never contention beside throttling, nothing without a first.
TEST(DiagNameCause, ASecondCauseIsAnotherCandidateThatExplainsAQuarter) {
  RecordingEvidence e;
  e.late_share = 0.10;
  e.candidates = {{Cause::kCpuThrottling, Layer::kCpu, 0.06, "throttled"},
                  {Cause::kCpuContention, Layer::kCpu, 0.09, "waited"},
                  {Cause::kGcPause, Layer::kPython, 0.03, "gc"},
                  {Cause::kMemoryPressure, Layer::kOs, 0.02, "paged"}};
  EXPECT_FALSE(NameSecondCause(e, std::nullopt).names);
  CauseChoice c = NameSecondCause(e, Cause::kGcPause);
  EXPECT_TRUE(c.names);
  EXPECT_EQ(c.cause, Cause::kCpuContention);
  EXPECT_DOUBLE_EQ(c.confidence, 0.9);
  EXPECT_EQ(c.why, "waited");
  c = NameSecondCause(e, Cause::kCpuThrottling);  // the quota explains the wait: GC, at 0.3, is the second
  EXPECT_EQ(c.cause, Cause::kGcPause);
  EXPECT_DOUBLE_EQ(c.confidence, 0.3);
  EXPECT_EQ(NameSecondCause(e, Cause::kCpuContention).cause, Cause::kCpuThrottling);
  e.candidates[1].excess_beside = 0.01;  // the wait was mostly on waking from page-ins: counted by memory
  EXPECT_EQ(NameSecondCause(e, Cause::kMemoryPressure).cause, Cause::kCpuThrottling);
  e.candidates[0].excess = 0.024;  // under a quarter of 10 %
  e.candidates[2].excess = 0.024;
  EXPECT_FALSE(NameSecondCause(e, Cause::kMemoryPressure).names);
  e.late_share = 0;
  EXPECT_FALSE(NameSecondCause(e, Cause::kSlowCompute).names);
}

// network_contention's one rule: the link's bytes against the peers' median, over a bar set by who measured them;
// the counter and recording evidence reach the same rule (no other path names the cause).
TEST(DiagNameCause, NetworkContentionIsOneRuleOverEitherSourceOfTraffic) {
  // A counter track beside slow transfers: 1.3x the peers' median suffices.
  EXPECT_TRUE(LinkCarriesForeignTraffic(TrafficSource::kCounterTrack, {{1.3e9, 1e9}}));
  EXPECT_FALSE(LinkCarriesForeignTraffic(TrafficSource::kCounterTrack, {{1.29e9, 1e9}}));
  EXPECT_FALSE(LinkCarriesForeignTraffic(TrafficSource::kCounterTrack, {{5e9, 0}}));  // no peer traffic: no bar
  // A recording's traffic alone: 1.5x the peers' plus 1 MB/s (ranks of one collective move the same bytes
  // within a few %; a slower link moves them too, so bytes alone never read as a slower link's).
  EXPECT_FALSE(LinkCarriesForeignTraffic(TrafficSource::kRecording, {{1.3e9, 1e9}}));
  EXPECT_FALSE(LinkCarriesForeignTraffic(TrafficSource::kRecording, {{1.5e9, 1e9}}));
  EXPECT_TRUE(LinkCarriesForeignTraffic(TrafficSource::kRecording, {{1.502e9, 1e9}}));
  EXPECT_FALSE(LinkCarriesForeignTraffic(TrafficSource::kRecording, {{2.4e6, 1e6}}));  // under the 1 MB/s floor
  EXPECT_TRUE(LinkCarriesForeignTraffic(TrafficSource::kRecording, {{2.6e6, 1e6}}));
  // With the link's capacity known, the floor is 3 % of it (one direction): 0.18 MB/s on a 49 Mbit/s link, where
  // 1 MB/s more than its peers' 1 is a fifth of the link; 3.75 MB/s on a 1 Gbit/s link, where it is next to nothing.
  EXPECT_TRUE(LinkCarriesForeignTraffic(TrafficSource::kRecording, {{1.7e6, 1e6}, 49e6}));
  EXPECT_FALSE(LinkCarriesForeignTraffic(TrafficSource::kRecording, {{1.6e6, 1e6}, 49e6}));
  EXPECT_FALSE(LinkCarriesForeignTraffic(TrafficSource::kRecording, {{5.2e6, 1e6}, 1e9}));
  EXPECT_TRUE(LinkCarriesForeignTraffic(TrafficSource::kRecording, {{5.3e6, 1e6}, 1e9}));
  EXPECT_FALSE(LinkCarriesForeignTraffic(TrafficSource::kRecording, {{0.9e6, 0}}));
  EXPECT_TRUE(LinkCarriesForeignTraffic(TrafficSource::kRecording, {{1e6, 0}}));
  CauseChoice c = NameCause(TrafficEvidence{TrafficSource::kRecording, {{4e9, 1e9}}, 3, 4});
  EXPECT_EQ(c.cause, Cause::kNetworkContention);
  EXPECT_EQ(c.layer, Layer::kComm);
  EXPECT_DOUBLE_EQ(c.confidence, 0.75);
  EXPECT_FALSE(NameCause(TrafficEvidence{TrafficSource::kRecording, {{1.5e9, 1e9}}}).names);
  // The counters' refinement of a communication cause is the same rule: 1.5x names it from a counter track,
  // and the recording's own candidates keep the cause at the same 1.5x.
  CounterEvidence counters;
  counters.named = Cause::kSlowCommunication;
  counters.confidence = 0.6;
  counters.nic_bytes = CounterMeans{1.5e9, 1e9};
  c = NameCause(counters);
  EXPECT_EQ(c.cause, Cause::kNetworkContention);
  EXPECT_DOUBLE_EQ(c.confidence, 0.6);
  EXPECT_NE(c.why.find("1.5x"), std::string::npos);
  RecordingEvidence recorded{.named = Cause::kSlowCompute,
                             .candidates = {{Cause::kGcPause, Layer::kPython, 0.08, "gc"}},
                             .link = LinkLoad{{1.5e9, 1e9}},
                             .late_share = 0.1};
  EXPECT_EQ(NameCause(recorded).cause, Cause::kGcPause);
}

TEST(DiagNameCause, PatternsNameTheirCauseFromOneTable) {
  CauseChoice c = NameCause(PatternEvidence{.pattern = Pattern::kRankStopped});
  EXPECT_EQ(c.cause, Cause::kHang);
  EXPECT_EQ(c.layer, Layer::kComm);
  EXPECT_DOUBLE_EQ(c.confidence, 1.0);
  EXPECT_EQ(NameCause(PatternEvidence{.pattern = Pattern::kRankStopped, .layer = Layer::kOs}).layer, Layer::kOs);
  c = NameCause(PatternEvidence{.pattern = Pattern::kCgroupThrottled, .explained = 3, .effect = 4});
  EXPECT_EQ(c.cause, Cause::kCpuThrottling);
  EXPECT_DOUBLE_EQ(c.confidence, 0.75);
  EXPECT_EQ(NameCause(PatternEvidence{.pattern = Pattern::kSlowStage}).cause, Cause::kStageImbalance);
  EXPECT_EQ(NameCause(PatternEvidence{.pattern = Pattern::kRanksLateInTurn}).layer, Layer::kData);
  // SetCause: the finding takes cause, layer and confidence (2 places); evidence that names nothing leaves it.
  Finding f;
  SetCause(NameCause(PatternEvidence{.pattern = Pattern::kSlowerLink, .explained = 1, .effect = 3}), &f);
  EXPECT_EQ(f.cause, Cause::kSlowCommunication);
  EXPECT_DOUBLE_EQ(f.confidence, 0.33);
  const CauseChoice none{.cause = Cause::kHang};  // a choice no rule made names nothing (the default)
  SetCause(none, &f);
  EXPECT_EQ(f.cause, Cause::kSlowCommunication);
}

}  // namespace
}  // namespace strata::diagnosis
