// OnlineJob, the online detection shared by the agent and serve: summaries of ranks arriving in any
// interleaving are judged step by step once complete (or once a rank runs max_lag steps ahead and the step
// has waited max_wait_s, the missing ranks counted as gaps); nodes are lined up by their steps' starts; a
// (rank, step) counts once; every step is judged (at 2 ranks by the self score); a slow rank opens a finding in the
// `strata diagnose` contract.
#include <gtest/gtest.h>

#ifdef STRATA_HAVE_RECORDER

#include <algorithm>
#include <random>

#include "agent/job_resume.h"
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
  EXPECT_EQ(job.view().judged_through, 0) << "step 1 is 3 behind step 4 but has not waited max_wait_s";
  job.Advance(1 + OnlineJobOptions{}.max_wait_s);
  EXPECT_EQ(job.view().judged_through, 1) << "step 1 is 3 behind step 4 and has waited";
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
  lagging.Advance(1);
  lagging.Advance(10);  // step 1 judged without rank 3
  EXPECT_FALSE(lagging.Add(S(3, 1, 0.06)));
  EXPECT_EQ(lagging.view().late, 1u);
  EXPECT_EQ(lagging.view().last_step.at(3), 1);
}

// Until issue 25 a step of fewer than 4 ranks was not judged (the 2-rank job below raised nothing); now every
// step is, and on 2 ranks the rank that slows down is named by its self score once it has a history.
TEST(OnlineJob, OpensAFindingForASlowRankAtEightRanksAndAtTwo) {
  std::mt19937 rng(2);
  std::normal_distribution<double> jitter(0, 0.0005);
  OnlineJob eight, two;
  std::vector<online::Detection> opened, opened_two;
  for (int64_t s = 0; s < 20; ++s) {  // 100 ms steps: clearly late in 7 of the last 10 (a second) opens
    for (int r = 0; r < 8; ++r) eight.Add(S(r, s, 0.06 + jitter(rng) + (r == 6 && s >= 12 ? 0.015 : 0)));
    for (int r = 0; r < 2; ++r) two.Add(S(r, s, 0.06 + jitter(rng) + (r == 1 && s >= 12 ? 0.015 : 0)));
    for (auto& d : eight.Advance(static_cast<double>(s))) opened.push_back(d);
    for (auto& d : two.Advance(static_cast<double>(s))) opened_two.push_back(d);
  }
  ASSERT_EQ(opened.size(), 1u);
  EXPECT_EQ(opened[0].rank, 6);
  EXPECT_LE(opened[0].step, 18);
  EXPECT_EQ(opened[0].cause, diagnosis::Cause::kSlowCompute);
  EXPECT_EQ(opened[0].decided_by, online::DecidingScore::kPeers);
  ASSERT_EQ(opened_two.size(), 1u);
  EXPECT_EQ(opened_two[0].rank, 1);
  EXPECT_EQ(opened_two[0].step, 18);
  EXPECT_EQ(opened_two[0].onset_step, 12);
  EXPECT_EQ(opened_two[0].decided_by, online::DecidingScore::kSelf);
  EXPECT_EQ(opened_two[0].cause, diagnosis::Cause::kSlowCompute);
  EXPECT_EQ(two.view().steps_self_judged, 20u);
  EXPECT_EQ(eight.view().steps_self_judged, 0u);
  const diagnosis::Finding f = DetectionFinding(opened[0], false);
  EXPECT_EQ(f.cause, diagnosis::Cause::kSlowCompute);
  EXPECT_EQ(f.layer, diagnosis::Layer::kCpu);
  EXPECT_DOUBLE_EQ(f.confidence, opened[0].confidence) << "the detector's share, not a constant";
  EXPECT_GE(f.confidence, diagnosis::thresholds::kMinExplainedShare);
  StreamFields big = EncodeSummary(S(1, 1, 0.05), "h");
  big[2].second = "4294967297";  // rank beyond int32: an error, not rank 1
  EXPECT_FALSE(DecodeSummary(big).ok());
  EXPECT_EQ(f.rank, RankNumber(6));
  EXPECT_GT(f.impact_pct, 10);
}

// Two nodes whose agents started counting at different steps (node B's count trails node A's by 3): by
// the steps' wall-clock starts they are the same steps, judged complete with no gap and a slow rank on
// node B found at the job's step.
online::RankStepSummary At(int rank, int64_t own_step, double start, double work) {
  online::RankStepSummary s = S(rank, own_step, work);
  s.start_unix = start;
  return s;
}

TEST(OnlineJob, LinesUpNodesByStepStartNotByTheirCounts) {
  OnlineJob job;
  std::vector<online::Detection> opened;
  const double t0 = 1.7e9;
  for (int64_t k = 0; k < 20; ++k) {
    const double start = t0 + 0.1 * static_cast<double>(k) + 0.0003 * static_cast<double>(k % 3);
    for (int r = 0; r < 4; ++r) job.Add(At(r, k + 5, start, 0.06));  // node A: counting from 5
    if (k >= 2)                                                      // node B joined two steps later
      for (int r = 4; r < 8; ++r) job.Add(At(r, k - 3, start + 0.002, r == 6 && k >= 10 ? 0.08 : 0.06));
    for (auto& d : job.Advance(static_cast<double>(k))) opened.push_back(d);
  }
  EXPECT_EQ(job.view().gaps, 0u) << "node B's steps were judged as steps of their own";
  EXPECT_EQ(job.view().late, 0u);
  EXPECT_EQ(job.view().realigned, 0u);
  EXPECT_EQ(job.view().last_step.at(6), job.view().last_step.at(0));
  ASSERT_EQ(opened.size(), 1u);
  EXPECT_EQ(opened[0].rank, 6);
  EXPECT_EQ(opened[0].first_step, 15) << "node A's numbering: the fault began at its step 15";
}

// Agents publish a second's steps at once: node B's ten steps arriving one round after node A's are not
// gaps; a node that stops publishing is, once its steps have waited max_wait_s.
TEST(OnlineJob, ANodeOneRoundBehindIsNotAGap) {
  OnlineJob job;
  const double t0 = 1.7e9;
  auto publish = [&](int first_rank, int64_t from, int64_t to) {
    for (int64_t k = from; k < to; ++k)
      for (int r = first_rank; r < first_rank + 4; ++r) job.Add(At(r, k, t0 + 0.1 * static_cast<double>(k), 0.06));
  };
  publish(0, 0, 10);
  publish(4, 0, 10);
  job.Advance(1);
  for (int64_t round = 1; round < 6; ++round) {
    publish(0, 10 * round, 10 * round + 10);
    job.Advance(static_cast<double>(round) + 1);
    publish(4, 10 * round, 10 * round + 10);  // a round late
  }
  EXPECT_EQ(job.view().gaps, 0u);
  EXPECT_EQ(job.view().judged_through, 49) << "node B's steps 50..59 arrived after the last round";
  publish(0, 60, 70);  // node B falls silent
  for (double now = 7; now < 11; now += 1) job.Advance(now);
  EXPECT_EQ(job.view().gaps, 4u * 7) << "steps 60..66 judged without node B's four ranks";
}

// An agent that restarts counts from 0 again: its ranks are anchored anew (counted), not taken as
// duplicates of steps already seen; a summary with no start keeps its own number.
TEST(OnlineJob, AnAgentRestartIsAnchoredAnewNotDropped) {
  OnlineJob job;
  const double t0 = 1.7e9;
  for (int64_t k = 0; k < 12; ++k) {
    const double start = t0 + 0.1 * static_cast<double>(k);
    for (int r = 0; r < 4; ++r) job.Add(At(r, k, start, 0.06));
    for (int r = 4; r < 8; ++r) job.Add(At(r, k < 6 ? k : k - 6, start, 0.06));  // restarted before step 6
    job.Advance(static_cast<double>(k));
  }
  EXPECT_EQ(job.view().realigned, 4u);
  EXPECT_EQ(job.view().duplicates, 0u);
  EXPECT_EQ(job.view().gaps, 0u);
  EXPECT_EQ(job.view().last_step.at(5), 11);
  OnlineJob unaligned;
  EXPECT_TRUE(unaligned.Add(S(0, 7, 0.06)));
  EXPECT_EQ(unaligned.view().last_step.at(0), 7);
}

// A job taken over (issue 49's fleet test: 286 steps judged of 279 published, 6 ranks realigned in one poll): node
// B's agent comes back after a gap, its first summary 6 steps past node A's last, and those 6 steps ran 60 %
// longer than B's step time says. Anchored anew, B lands 3 steps off and every step after is split in two (each
// node's half judged with the other as gaps); seeded from the record (job_commit.h) B is lined up as the old
// owner lined it up, and the new owner's numbering continues the old one's.
TEST(OnlineJob, ANewOwnerSeededFromTheRecordLinesNodesUpAsTheOldOwnerDid) {
  const double t0 = 1.7e9;
  std::vector<double> start(60);
  for (size_t k = 1; k < start.size(); ++k) start[k] = start[k - 1] + (k >= 26 && k <= 30 ? 0.16 : 0.1);
  auto node = [&](OnlineJob* job, int first_rank, int64_t count_from, int64_t from, int64_t to) {
    for (int64_t k = from; k < to; ++k)
      for (int r = first_rank; r < first_rank + 4; ++r)
        job->Add(At(r, k + count_from, t0 + start[static_cast<size_t>(k)], 0.06));
  };
  OnlineJob old_owner;
  for (int64_t k = 0; k < 20; ++k) {
    node(&old_owner, 0, 5, k, k + 1);   // node A counts from 5
    node(&old_owner, 4, -3, k, k + 1);  // node B from -3
    old_owner.Advance(static_cast<double>(k));
  }
  ASSERT_EQ(old_owner.view().judged_through, 24);
  ASSERT_EQ(old_owner.view().gaps, 0u);
  const JobCommit record = JobResume().Record("serve-a", &old_owner.view());
  EXPECT_EQ(record.job_step, 24);
  EXPECT_EQ(record.offset.at(0), 0) << "the first rank seen keeps its own numbering";
  EXPECT_EQ(record.offset.at(4), 5 - -3) << "node B lined up with node A's numbering";

  auto take_over = [&](OnlineJob* job) {
    node(job, 0, 5, 20, 26);   // node A's next round
    node(job, 4, -3, 31, 36);  // node B back after a gap: its steps 20..30 never published
    job->Advance(100);
    for (int64_t k = 26; k < 50; ++k) {
      node(job, 0, 5, k, k + 1);
      if (k >= 36) node(job, 4, -3, k, k + 1);
      job->Advance(100 + static_cast<double>(k));
    }
    job->Advance(1000);
  };
  OnlineJob fresh;
  take_over(&fresh);
  EXPECT_GT(fresh.view().gaps + fresh.view().realigned, 0u) << "the defect this seeding removes, anchored anew";
  OnlineJob seeded;
  seeded.Seed(record.job_step, record.judged_start, record.offset);
  take_over(&seeded);
  EXPECT_EQ(seeded.view().realigned, 0u);
  EXPECT_EQ(seeded.view().judged_through, 54) << "the old owner's numbering continued (node A's step 49 + 5)";
  EXPECT_EQ(seeded.view().steps_judged, 30u) << "job steps 25..54, each once";
  EXPECT_EQ(seeded.view().gaps, 4u * 11) << "only node B's 11 unpublished steps (20..30) are gaps";
  EXPECT_EQ(seeded.view().late, 0u);
}

// A detection becomes a finding with the detector's confidence whether or not the mixture corroborates it;
// an unexplained one has cause unknown, no layer and confidence 0; the confidence survives the stream.
TEST(OnlineJob, AFindingCarriesTheDetectionsConfidence) {
  online::Detection d;
  d.rank = 2;
  d.step = 9;
  d.first_step = 8;
  d.late_s = 0.02;
  d.step_s = 0.1;
  d.cause = diagnosis::Cause::kGcPause;
  d.excess_s = 0.015;
  d.explained = d.confidence = 0.75;
  for (bool corroborated : {false, true}) {
    const diagnosis::Finding f = DetectionFinding(d, corroborated);
    EXPECT_EQ(f.cause, diagnosis::Cause::kGcPause);
    EXPECT_EQ(f.layer, diagnosis::Layer::kPython);
    EXPECT_DOUBLE_EQ(f.confidence, 0.75);
    const auto& e = std::get<diagnosis::DetectionEvidence>(f.evidence.kind);
    EXPECT_DOUBLE_EQ(e.excess_ms, 15);
    EXPECT_DOUBLE_EQ(e.explained_share, 0.75);
    EXPECT_EQ(e.mixture_corroborates, corroborated);
  }
  d.decided_by = online::DecidingScore::kSelf;
  d.peers = 1;
  d.peer_late_s = -0.004;  // a non-deciding score may be negative
  d.peer_z = -1.5;
  d.self_history = 32;
  d.self_late_s = 0.02;
  d.self_z = 27;
  d.self_baseline_s = 0.06;
  d.onset_step = 7;
  d.onset_unix = 1764123456.25;
  d.persistence = online::Persistence::kRecurring;
  auto decoded = DecodeFinding(EncodeFinding(d, "h"));
  ASSERT_TRUE(decoded.ok()) << decoded.error();
  EXPECT_DOUBLE_EQ(decoded.value().confidence, 0.75);
  EXPECT_DOUBLE_EQ(decoded.value().excess_s, 0.015);
  EXPECT_EQ(decoded.value().decided_by, online::DecidingScore::kSelf);
  EXPECT_EQ(decoded.value().peers, 1);
  EXPECT_DOUBLE_EQ(decoded.value().peer_late_s, -0.004);
  EXPECT_DOUBLE_EQ(decoded.value().peer_z, -1.5);
  EXPECT_EQ(decoded.value().self_history, 32);
  EXPECT_DOUBLE_EQ(decoded.value().self_z, 27);
  EXPECT_DOUBLE_EQ(decoded.value().self_baseline_s, 0.06);
  EXPECT_EQ(decoded.value().onset_step, 7);
  EXPECT_DOUBLE_EQ(decoded.value().onset_unix, 1764123456.25);
  EXPECT_EQ(decoded.value().persistence, online::Persistence::kRecurring);
  {  // an agent before issue 25: the peer score decided, onset at the first late step, lasting
    StreamFields old = EncodeFinding(d, "h");
    std::erase_if(old, [](const auto& f) {
      return f.first == "score" || f.first.starts_with("peer") || f.first.starts_with("self") ||
             f.first.starts_with("onset") || f.first == "persistence";
    });
    auto before = DecodeFinding(old);
    ASSERT_TRUE(before.ok()) << before.error();
    EXPECT_EQ(before.value().decided_by, online::DecidingScore::kPeers);
    EXPECT_EQ(before.value().onset_step, 8);
    EXPECT_EQ(before.value().persistence, online::Persistence::kLasting);
  }
  const diagnosis::Finding self_finding = DetectionFinding(d, false);
  const auto& self_evidence = std::get<diagnosis::DetectionEvidence>(self_finding.evidence.kind);
  EXPECT_EQ(self_evidence.score, diagnosis::DecidingScore::kSelf);
  EXPECT_EQ(self_evidence.persistence, diagnosis::Persistence::kRecurring);
  EXPECT_EQ(self_evidence.onset_step, 7);
  EXPECT_TRUE(self_evidence.self_ready);
  online::Detection unknown = d;
  unknown.cause = diagnosis::Cause::kUnknown;
  unknown.excess_s = 0.008;
  unknown.explained = 0.4;
  unknown.confidence = 0;
  const diagnosis::Finding f = DetectionFinding(unknown, true);
  EXPECT_EQ(f.cause, diagnosis::Cause::kUnknown);
  EXPECT_EQ(f.layer, diagnosis::Layer::kNone);
  EXPECT_EQ(f.confidence, 0.0);
}

// Issue 46 item 6: a 3-rank job (steps of ~80 ms) whose rank 2 pauses once for 2 s at step 40, fed the way
// the agent's rounds cut its steps: a round publishes the steps completed since the last one (about a
// second's), so the pause falls first, inside or last in a round; a round may resend steps the last one sent
// (overlapping windows: counted once), or come in two parts (the chunk switch: the old chunk's last steps,
// then the new chunk's). Six steps after the pause the machine slows every rank's step, ranks 1 and 2 working
// 60 ms longer (as measured in the agent's stream). Whatever the cut: one finding, on rank 2, one_off in every
// round while it is open.
TEST(OnlineJob, OnePauseIsOneOneOffFindingHoweverTheRoundsCutIt) {
  constexpr int64_t kPause = 40, kSteps = 80;
  std::vector<std::vector<online::RankStepSummary>> steps;
  std::mt19937 rng(7);
  std::normal_distribution<double> jitter(0, 0.002);
  double start = 1.7e9;
  for (int64_t k = 0; k < kSteps; ++k) {
    std::vector<double> work;
    for (int r = 0; r < 3; ++r)
      work.push_back(0.06 + jitter(rng) + (r == 2 && k == kPause ? 2.0 : 0) + (k == kPause + 6 && r >= 1 ? 0.06 : 0));
    const double step_s = 0.02 + *std::max_element(work.begin(), work.end());
    std::vector<online::RankStepSummary> ranks;
    for (int r = 0; r < 3; ++r) {
      online::RankStepSummary x = S(r, k, work[static_cast<size_t>(r)]);
      x.start_unix = start;
      x.step_s = step_s;
      x.wait_s = step_s - x.oncpu_s;
      if (r == 2 && k == kPause) {  // the pause: off the CPU
        x.oncpu_s -= 2.0;
        x.offcpu_other_s = 2.0;
      }
      ranks.push_back(x);
    }
    steps.push_back(ranks);
    start += step_s;
  }
  struct Cut {
    const char* what;
    int64_t round_end;       // a round ends after this step (rounds are 12 steps)
    int64_t resend = 0;      // each round resends this many of the last round's steps
    bool two_parts = false;  // each round comes in two parts (a chunk switch)
    int64_t round_steps = 12;
  };
  for (const Cut& cut :
       {Cut{"pause inside a round", 36}, Cut{"pause last in its round", 40}, Cut{"pause first in its round", 39},
        Cut{"overlapping windows", 36, 3}, Cut{"across a chunk switch", 36, 0, true},
        Cut{"a round longer than the hold", 39, 0, false, 30}}) {
    OnlineJob job;
    std::vector<online::Detection> opened;
    bool shown = false;
    double now = 1.7e9;
    int64_t from = 0;
    for (int64_t to = cut.round_end % cut.round_steps; from < kSteps; to = std::min(to + cut.round_steps, kSteps - 1)) {
      const int64_t resent = std::max<int64_t>(0, from - cut.resend);
      for (int64_t k = resent; k <= to; ++k) {
        for (const auto& x : steps[static_cast<size_t>(k)]) job.Add(x);
        if (cut.two_parts && k == kPause - 1)
          for (auto& d : job.Advance(now)) opened.push_back(d);
      }
      from = to + 1;
      now += 1;
      for (auto& d : job.Advance(now)) opened.push_back(d);
      for (const online::Detection& d : job.view().open) {
        EXPECT_EQ(online::PersistenceName(d.persistence), "one_off") << cut.what << ", round through step " << to;
        shown |= d.rank == 2 && d.step == kPause;
      }
    }
    // The status shows it after some round, even when it opened and closed inside one (a 1 s agent round holds
    // more steps than the one-off hold: the real agent's status never showed the pause).
    EXPECT_TRUE(shown) << cut.what;
    ASSERT_EQ(opened.size(), 1u) << cut.what;
    EXPECT_EQ(opened[0].rank, 2) << cut.what;
    EXPECT_EQ(opened[0].step, kPause) << cut.what;
    EXPECT_EQ(opened[0].cause, diagnosis::Cause::kHostStall) << cut.what;
    EXPECT_EQ(job.view().judged_through, kSteps - 1) << cut.what;
    job.Advance(now + OnlineJobOptions().closed_shown_s + 1);  // a round past the time a closed one is shown
    EXPECT_TRUE(job.view().open.empty()) << cut.what << ": closed after its hold";
  }
}

TEST(StreamCodec, StepStartRoundTripsAndMayBeAbsent) {
  online::RankStepSummary s = At(3, 9, 1764123456.123456, 0.05);
  auto back = DecodeSummary(EncodeSummary(s, "h"));
  ASSERT_TRUE(back.ok()) << back.error();
  EXPECT_EQ(back.value().start_unix, s.start_unix);
  StreamFields old = EncodeSummary(s, "h");
  std::erase_if(old, [](const auto& f) { return f.first == "start_unix"; });
  back = DecodeSummary(old);
  ASSERT_TRUE(back.ok()) << "an agent before step alignment: " << back.error();
  EXPECT_EQ(back.value().start_unix, 0);
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
