// OnlineJob, the online detection shared by the agent and serve: summaries of ranks arriving in any
// interleaving are judged step by step once complete (or once a rank runs max_lag steps ahead, the missing
// ranks counted as gaps); a (rank, step) counts once; steps with too few ranks are not judged; a slow rank
// opens a finding in the `strata diagnose` contract.
#include <gtest/gtest.h>

#ifdef STRATA_HAVE_RECORDER

#include <random>

#include "agent/online_job.h"
#include "agent/stream_codec.h"

namespace strata::agent {
namespace {

online::RankStepSummary S(int rank, int64_t step, double work) {
  online::RankStepSummary s;
  s.rank = rank;
  s.step = step;
  s.step_s = 0.1;
  s.oncpu_s = work;
  s.wait_s = s.step_s - work;
  return s;
}

TEST(OnlineJob, JudgesAStepOnceEveryRankReportedIt) {
  OnlineJob job;
  for (int r = 0; r < 4; ++r) job.Add(S(r, 0, 0.06));
  job.Advance(1);
  EXPECT_EQ(job.view().judged_through, 0);
  for (int r = 0; r < 3; ++r) job.Add(S(r, 1, 0.06));
  job.Advance(2);
  EXPECT_EQ(job.view().judged_through, 0) << "rank 3 has not reported step 1";
  job.Add(S(3, 1, 0.06));
  job.Advance(3);
  EXPECT_EQ(job.view().judged_through, 1);
  EXPECT_EQ(job.view().gaps, 0u);
}

TEST(OnlineJob, ARankThatFallsSilentIsAGapNotAStall) {
  OnlineJob job;  // max_lag 3
  for (int r = 0; r < 5; ++r) job.Add(S(r, 0, 0.06));
  for (int64_t s = 1; s <= 4; ++s)
    for (int r = 0; r < 4; ++r) job.Add(S(r, s, 0.06));  // rank 4 silent from step 1
  job.Advance(1);
  EXPECT_EQ(job.view().judged_through, 1) << "step 1 is 3 behind step 4";
  EXPECT_EQ(job.view().gaps, 1u);
}

TEST(OnlineJob, DuplicatesAndLateSummariesCountOnce) {
  OnlineJob job;
  for (int r = 0; r < 4; ++r) EXPECT_TRUE(job.Add(S(r, 0, 0.06)));
  EXPECT_FALSE(job.Add(S(2, 0, 0.06)));
  job.Advance(1);
  EXPECT_EQ(job.view().summaries, 4u);
  EXPECT_EQ(job.view().duplicates, 1u);
  OnlineJob lagging;
  for (int r = 0; r < 4; ++r) lagging.Add(S(r, 0, 0.06));
  for (int64_t s = 1; s <= 4; ++s)
    for (int r = 0; r < 3; ++r) lagging.Add(S(r, s, 0.06));
  lagging.Advance(1);  // step 1 judged without rank 3
  EXPECT_FALSE(lagging.Add(S(3, 1, 0.06)));
  EXPECT_EQ(lagging.view().late, 1u);
  EXPECT_EQ(lagging.view().last_step.at(3), 1);
}

TEST(OnlineJob, OpensAFindingForASlowRankAndNothingWithTooFewRanks) {
  std::mt19937 rng(2);
  std::normal_distribution<double> jitter(0, 0.0005);
  OnlineJob eight, two;
  std::vector<online::Detection> opened;
  for (int64_t s = 0; s < 12; ++s) {
    for (int r = 0; r < 8; ++r) eight.Add(S(r, s, 0.06 + jitter(rng) + (r == 6 && s >= 5 ? 0.015 : 0)));
    for (int r = 0; r < 2; ++r) two.Add(S(r, s, 0.06 + jitter(rng) + (r == 1 && s >= 5 ? 0.015 : 0)));
    for (auto& d : eight.Advance(static_cast<double>(s))) opened.push_back(d);
    EXPECT_TRUE(two.Advance(static_cast<double>(s)).empty());
  }
  ASSERT_EQ(opened.size(), 1u);
  EXPECT_EQ(opened[0].rank, 6);
  EXPECT_LE(opened[0].step, 7);
  EXPECT_EQ(opened[0].cause, "slow_compute");
  EXPECT_EQ(two.view().steps_too_few_ranks, 12u);
  const diagnosis::Finding f = DetectionFinding(opened[0], false);
  EXPECT_EQ(f.cause, diagnosis::Cause::kSlowCompute);
  EXPECT_EQ(f.layer, diagnosis::Layer::kCpu);
  StreamFields big = EncodeSummary(S(1, 1, 0.05), "h");
  big[2].second = "4294967297";  // rank beyond int32: an error, not rank 1
  EXPECT_FALSE(DecodeSummary(big).ok());
  EXPECT_EQ(f.rank, 6);
  EXPECT_GT(f.impact_pct, 10);
}

// The stream codec reads what any client may have written: random field values never crash it and
// decode either to a sane summary or to an error naming a field.
TEST(StreamCodec, RandomFieldValuesNeverCrash) {
  std::mt19937 rng(9);
  const std::string alphabet = "0123456789.-+eEinfa x";
  online::RankStepSummary base = S(1, 2, 0.05);
  for (int i = 0; i < 20000; ++i) {
    StreamFields f = EncodeSummary(base, "h");
    auto& field = f[std::uniform_int_distribution<size_t>(2, f.size() - 1)(rng)];
    field.second.clear();
    for (size_t n = std::uniform_int_distribution<size_t>(0, 8)(rng); n > 0; --n)
      field.second += alphabet[std::uniform_int_distribution<size_t>(0, alphabet.size() - 1)(rng)];
    auto d = DecodeSummary(f);
    if (d.ok()) {
      EXPECT_GE(d.value().rank, 0);
      EXPECT_GE(d.value().step, 0);
      EXPECT_TRUE(std::isfinite(d.value().step_s) && d.value().step_s >= 0);
    } else {
      EXPECT_NE(d.error().find(field.first), std::string::npos) << d.error();
    }
  }
}

}  // namespace
}  // namespace strata::agent

#endif  // STRATA_HAVE_RECORDER
