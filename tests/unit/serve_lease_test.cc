// Several serves sharing the jobs (issue 49 item 2), through a real redis-server: each job's lease is taken by
// one of two serves and the other only shows who owns it; renewal keeps it; when its owner dies the other takes
// the job over within the lease and resumes from the judged record, judging each step exactly once (a step
// half taken in by the dead owner included) and naming the straggler; a serve that stops hands its jobs over
// at once. The judged record's codec and the resume bookkeeping are checked on their own too.
#include <gtest/gtest.h>

#ifdef STRATA_HAVE_RECORDER

#include <chrono>
#include <memory>
#include <random>
#include <string>
#include <thread>

#include "agent/job_commit.h"
#include "agent/job_resume.h"
#include "agent/serve_core.h"
#include "agent/stream_codec.h"
#include "agent/stream_publisher.h"
#include "redis_test_server.h"

namespace strata::agent {
namespace {

constexpr int kRanks = 8;
constexpr double kLeaseS = 1.0;

// Publishes step `step` of `job` for ranks [from, to): 100 ms steps, rank `slow` 15 ms slower.
void Publish(StreamPublisher* p, const std::string& job, int64_t step, int slow, std::mt19937& rng, int from = 0,
             int to = kRanks) {
  std::normal_distribution<double> jitter(0, 0.0005);
  for (int r = from; r < to; ++r) {
    online::RankStepSummary s;
    s.rank = r;
    s.step = step;
    s.step_s = 0.1;
    const double work = 0.06 + jitter(rng) + (r == slow ? 0.015 : 0);
    s.wait_s = s.step_s - work;
    s.oncpu_s = work;
    p->Enqueue(job, EncodeSummary(s, "node-a"));
  }
  p->Flush(0);
}

std::unique_ptr<ServeCore> Serve(const RedisTestServer& redis, const std::string& name) {
  ConsumerOptions c;
  c.consumer = name;
  LeaseOptions l;
  l.lease_s = kLeaseS;
  return std::make_unique<ServeCore>(redis.address(), c, OnlineJobOptions{}, l);
}

const JobState* Job(const AgentSnapshot& s, const std::string& job) {
  for (const JobState& j : s.jobs)
    if (j.job == job) return &j;
  return nullptr;
}

double Seconds(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}

TEST(ServeLease, EachJobIsJudgedByOneServeAndTheOtherShowsItsOwner) {
  RedisTestServer redis;
  ASSERT_TRUE(redis.ready()) << "redis-server did not start (is it installed? scripts/setup.sh)";
  std::mt19937 rng(1);
  StreamPublisher pub(redis.address(), {});
  auto a = Serve(redis, "serve-a"), b = Serve(redis, "serve-b");
  for (int s = 0; s < 4; ++s) Publish(&pub, "j1", s, -1, rng);
  ASSERT_TRUE(a->Poll(0, 100).ok());  // a finds j1 first and takes it
  ASSERT_TRUE(b->Poll(0, 100).ok());
  Publish(&pub, "j2", 0, -1, rng);
  ASSERT_TRUE(b->Poll(0, 101).ok());  // b finds j2 first
  ASSERT_TRUE(a->Poll(0, 101).ok());
  const AgentSnapshot sa = a->Snapshot(101), sb = b->Snapshot(101);
  ASSERT_TRUE(Job(sa, "j1") && Job(sb, "j1") && Job(sa, "j2") && Job(sb, "j2"));
  EXPECT_EQ(Job(sa, "j1")->ownership->owner, "serve-a");
  EXPECT_TRUE(Job(sa, "j1")->ownership->this_serve);
  EXPECT_EQ(Job(sb, "j1")->ownership->owner, "serve-a") << "b shows who owns j1";
  EXPECT_FALSE(Job(sb, "j1")->ownership->this_serve);
  EXPECT_FALSE(Job(sb, "j1")->online.has_value()) << "b does not judge a job it does not own";
  EXPECT_EQ(Job(sa, "j1")->online->summaries, 4u * kRanks);
  EXPECT_EQ(Job(sb, "j2")->ownership->owner, "serve-b");
  EXPECT_EQ(Job(sa, "j2")->ownership->owner, "serve-b");
  EXPECT_EQ(a->counters().jobs_owned, 1u);
  EXPECT_EQ(b->counters().jobs_owned, 1u);
  const nlohmann::ordered_json st = StatusJson(sb);
  bool shown = false;
  for (const auto& j : st["jobs"])
    if (j["job"] == "j1") shown = j["owner"]["serve"] == "serve-a" && j["owner"]["this_serve"] == false;
  EXPECT_TRUE(shown) << st.dump(1);
}

TEST(ServeLease, RenewalKeepsTheLeaseWhileItsServeLives) {
  RedisTestServer redis;
  ASSERT_TRUE(redis.ready());
  std::mt19937 rng(2);
  StreamPublisher pub(redis.address(), {});
  auto a = Serve(redis, "serve-a"), b = Serve(redis, "serve-b");
  Publish(&pub, "j", 0, -1, rng);
  ASSERT_TRUE(a->Poll(0, 0).ok());
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; Seconds(start) < 3 * kLeaseS; ++i) {  // three leases long
    Publish(&pub, "j", 1 + i, -1, rng);
    ASSERT_TRUE(a->Poll(50, i).ok());
    ASSERT_TRUE(b->Poll(50, i).ok());
  }
  RedisConnection c;
  ASSERT_TRUE(c.Connect(redis.address(), 1).ok());
  EXPECT_EQ(c.Command({"GET", LeaseKey("j")}).value().text, "serve-a");
  const long long ttl = c.Command({"PTTL", LeaseKey("j")}).value().integer;
  EXPECT_GT(ttl, 0);
  EXPECT_LE(ttl, 1000);
  EXPECT_EQ(b->counters().leases_taken, 0u) << "b never held a's job";
  EXPECT_EQ(a->counters().leases_lost, 0u);
}

// a judges steps 0..9 and takes in half of step 10, then dies (no release). b takes the job over once the lease
// expires, replays from the record (step 10's first half included) and judges 10..19: 20 steps in all, once each.
TEST(ServeLease, ExpiryHandsTheJobOverAndNoStepIsJudgedTwice) {
  RedisTestServer redis;
  ASSERT_TRUE(redis.ready());
  std::mt19937 rng(3);
  StreamPublisher pub(redis.address(), {});
  auto a = Serve(redis, "serve-a"), b = Serve(redis, "serve-b");
  for (int s = 0; s < 10; ++s) {
    Publish(&pub, "j", s, 5, rng);
    ASSERT_TRUE(a->Poll(0, 100 + s).ok());
    ASSERT_TRUE(b->Poll(0, 100 + s).ok());
  }
  Publish(&pub, "j", 10, 5, rng, 0, 4);
  ASSERT_TRUE(a->Poll(0, 110).ok());
  ASSERT_TRUE(a->Poll(0, 110).ok());
  EXPECT_EQ(a->jobs().at("j").view().steps_judged, 10u);
  a.reset();  // dies: its lease is not given up
  Publish(&pub, "j", 10, 5, rng, 4, kRanks);
  const auto died = std::chrono::steady_clock::now();
  double took = -1;
  for (int i = 0; Seconds(died) < 3 * kLeaseS && took < 0; ++i) {
    ASSERT_TRUE(b->Poll(20, 111 + i * 0.02).ok());
    if (b->counters().jobs_owned == 1) took = Seconds(died);
  }
  ASSERT_GE(took, 0) << "b never took the job over";
  EXPECT_LE(took, kLeaseS * 1.25 + 0.3) << "taken over " << took << " s after the owner died";
  EXPECT_GE(took, kLeaseS * 0.5) << "taken over before the lease could have expired";
  for (int s = 11; s < 20; ++s) {
    Publish(&pub, "j", s, 5, rng);
    ASSERT_TRUE(b->Poll(0, 120 + s).ok());
  }
  const AgentSnapshot sb = b->Snapshot(140);
  const JobState* j = Job(sb, "j");
  ASSERT_TRUE(j && j->online && j->ownership);
  EXPECT_EQ(j->ownership->owner, "serve-b");
  EXPECT_EQ(j->ownership->steps_judged_total, 20) << "steps 0..19, each once over both owners";
  EXPECT_EQ(j->ownership->summaries_judged_total, 160) << "each rank's summary of each step once";
  EXPECT_EQ(j->online->steps_judged, 10u) << "b judged 10..19";
  EXPECT_EQ(j->online->duplicates, 0u);
  EXPECT_EQ(j->online->gaps, 0u) << "step 10's first half, taken in by a, was replayed to b";
  EXPECT_EQ(j->ownership->skipped_judged, 0u);  // the replay started after the judged steps
  EXPECT_GT(b->counters().replayed, 0u);
  ASSERT_FALSE(j->online->open.empty()) << "b names the straggler";
  EXPECT_EQ(j->online->open.front().rank, 5);
  RedisConnection c;
  ASSERT_TRUE(c.Connect(redis.address(), 1).ok());
  auto pending = c.Command({"XPENDING", StepsStreamKey("j"), "strata-serve"});
  ASSERT_TRUE(pending.ok());
  EXPECT_EQ(pending.value().elements[0].integer, 0) << "a's unacknowledged entries were claimed and acknowledged";
}

// A serve whose renewals came late (a loaded machine: no poll for longer than the lease) and whose lease no
// one took meanwhile takes it back and goes on from its own state: nothing replayed, the steps' count intact.
TEST(ServeLease, ALapsedLeaseNoOneTookIsTakenBackWithItsState) {
  RedisTestServer redis;
  ASSERT_TRUE(redis.ready());
  std::mt19937 rng(5);
  StreamPublisher pub(redis.address(), {});
  auto a = Serve(redis, "serve-a");
  for (int s = 0; s < 6; ++s) {
    Publish(&pub, "j", s, -1, rng);
    ASSERT_TRUE(a->Poll(0, s).ok());
  }
  std::this_thread::sleep_for(std::chrono::duration<double>(kLeaseS * 1.3));  // the lease expires in Redis
  for (int s = 6; s < 10; ++s) {
    Publish(&pub, "j", s, -1, rng);
    ASSERT_TRUE(a->Poll(0, s).ok());
  }
  EXPECT_GE(a->counters().leases_lost, 1u);
  EXPECT_EQ(a->counters().leases_taken, 2u) << "taken, lapsed, taken back";
  EXPECT_EQ(a->counters().replayed, 0u) << "its own state kept, not rebuilt from the record";
  EXPECT_EQ(a->jobs().at("j").view().steps_judged, 10u);
  const AgentSnapshot sa = a->Snapshot(10);
  const JobState* j = Job(sa, "j");
  ASSERT_TRUE(j && j->ownership);
  EXPECT_EQ(j->ownership->steps_judged_total, 10);
  EXPECT_TRUE(j->ownership->this_serve);
}

TEST(ServeLease, AStoppingServeHandsItsJobsOverAtOnce) {
  RedisTestServer redis;
  ASSERT_TRUE(redis.ready());
  std::mt19937 rng(4);
  StreamPublisher pub(redis.address(), {});
  auto a = Serve(redis, "serve-a"), b = Serve(redis, "serve-b");
  for (int s = 0; s < 3; ++s) Publish(&pub, "j", s, -1, rng);
  ASSERT_TRUE(a->Poll(0, 1).ok());
  ASSERT_TRUE(b->Poll(0, 1).ok());
  ASSERT_TRUE(a->Release().ok());
  const auto released = std::chrono::steady_clock::now();
  while (b->counters().jobs_owned == 0 && Seconds(released) < 2 * kLeaseS) ASSERT_TRUE(b->Poll(20, 2).ok());
  EXPECT_EQ(b->counters().jobs_owned, 1u);
  EXPECT_LE(Seconds(released), kLeaseS / 4 + 0.2) << "taken within one check, not after the lease's expiry";
  const AgentSnapshot sb = b->Snapshot(3);
  const JobState* j = Job(sb, "j");
  ASSERT_TRUE(j && j->ownership);
  EXPECT_EQ(j->ownership->steps_judged_total, 3);
  EXPECT_EQ(j->ownership->skipped_judged, 0u);
}

TEST(JobCommit, RoundTripsThroughHgetallAndNamesAMalformedField) {
  JobCommit c;
  c.owner = "serve-a";
  c.steps_judged = 42;
  c.summaries_judged = 336;
  c.resume_from = "(1700000000000-3";
  c.judged_own = {{0, 41}, {7, -2}};
  c.judged_start = 1796367331.183179;
  RedisReply reply;
  reply.kind = RedisReply::Kind::kArray;
  for (const std::string& w : EncodeCommit(c)) reply.elements.push_back({RedisReply::Kind::kString, w});
  bool found = false;
  auto back = DecodeCommit(reply, &found);
  ASSERT_TRUE(back.ok() && found);
  EXPECT_EQ(back.value().owner, "serve-a");
  EXPECT_EQ(back.value().steps_judged, 42u);
  EXPECT_EQ(back.value().summaries_judged, 336u);
  EXPECT_EQ(back.value().resume_from, c.resume_from);
  EXPECT_EQ(back.value().judged_own, c.judged_own);
  EXPECT_NEAR(back.value().judged_start, c.judged_start, 1e-6);
  reply.elements[3].text = "4x";  // steps_judged
  auto bad = DecodeCommit(reply, &found);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().find("steps_judged"), std::string::npos) << bad.error();
  reply.elements[3].text = "42";
  reply.elements[9].text = "17x";  // judged_start
  auto bad_start = DecodeCommit(reply, &found);
  ASSERT_FALSE(bad_start.ok());
  EXPECT_NE(bad_start.error().find("judged_start"), std::string::npos) << bad_start.error();
  auto none = DecodeCommit(RedisReply{RedisReply::Kind::kArray, "", 0, {}}, &found);
  EXPECT_TRUE(none.ok()) << none.error();
  EXPECT_FALSE(found);
  EXPECT_LT(StreamIdOrder("9-5"), StreamIdOrder("10-0")) << "ids order by number, not text";
}

online::RankStepSummary Own(int32_t rank, int64_t step, double start_unix = 0) {
  online::RankStepSummary s;
  s.rank = rank;
  s.step = step;
  s.step_s = 0.1;
  s.start_unix = start_unix;
  return s;
}

TEST(JobResume, ResumesAtTheOldestUnjudgedSummaryAndNeverGoesBack) {
  JobCommit base;
  base.steps_judged = 5;
  base.judged_own = {{0, 9}, {1, 9}};
  JobResume r(base, true);
  EXPECT_TRUE(r.JudgedBefore(Own(0, 9)));
  EXPECT_FALSE(r.JudgedBefore(Own(0, 10)));
  EXPECT_FALSE(r.JudgedBefore(Own(2, 0))) << "a rank the record does not know, no start known";
  r.TookSummary("10-0", 0, 10);
  r.TookSummary("11-0", 1, 10);
  r.Took("12-0");
  EXPECT_EQ(r.Record("b", nullptr).resume_from, "10-0");
  OnlineView v;
  v.steps_judged = 1;
  v.judged_own = {{0, 10}, {1, 3}};  // rank 1 counted lower by this serve: the record keeps the larger
  r.Prune(v);
  const JobCommit c = r.Record("b", &v);
  EXPECT_EQ(c.resume_from, "11-0") << "rank 1's step 10 is not judged yet";
  EXPECT_EQ(c.steps_judged, 6u);
  EXPECT_EQ(c.judged_own.at(0), 10);
  EXPECT_EQ(c.judged_own.at(1), 9);
  v.judged_own[1] = 10;
  r.Prune(v);
  EXPECT_EQ(r.Record("b", &v).resume_from, "(12-0") << "everything judged: past the newest entry";
  r.Replayed("12-0");
  EXPECT_TRUE(r.AlreadyReplayed("11-5"));
  EXPECT_FALSE(r.AlreadyReplayed("12-1"));
}

// A rank the record does not know (its summaries reached no earlier owner before that owner judged their steps
// without it) is skipped where its step started by the record's last judged step, and taken from the next on.
TEST(JobResume, ARankTheRecordDoesNotKnowIsSkippedUpToTheLastJudgedStart) {
  JobCommit base;
  base.judged_own = {{0, 9}};
  base.judged_start = 1000.9;  // step 9 of 100 ms steps from 1000.0
  JobResume r(base, true);
  EXPECT_TRUE(r.JudgedBefore(Own(4, 3, 1000.3)));
  EXPECT_TRUE(r.JudgedBefore(Own(4, 9, 1000.92))) << "the judged step itself, its start 20 ms off";
  EXPECT_FALSE(r.JudgedBefore(Own(4, 10, 1001.0))) << "the next step";
  EXPECT_FALSE(r.JudgedBefore(Own(4, 3, 0))) << "no start: only the rank's own steps can tell";
  OnlineView v;
  v.judged_through_start = 1001.4;
  EXPECT_DOUBLE_EQ(r.Record("b", &v).judged_start, 1001.4);
  v.judged_through_start = 0;
  EXPECT_DOUBLE_EQ(r.Record("b", &v).judged_start, 1000.9) << "never goes back";
}

// Publishes step `step` of `job` for ranks [from, to) with wall-clock starts (100 ms steps from `t0`).
void PublishStarted(StreamPublisher* p, const std::string& job, int64_t step, int from, int to, double t0) {
  for (int r = from; r < to; ++r) {
    online::RankStepSummary s;
    s.rank = r;
    s.step = step;
    s.step_s = 0.1;
    s.start_unix = t0 + 0.1 * static_cast<double>(step);
    s.oncpu_s = 0.06;
    s.wait_s = 0.04;
    p->Enqueue(job, EncodeSummary(s, r < 4 ? "node-a" : "node-b"));
  }
  p->Flush(0);
}

// The fleet test's failure (ctest agent_cluster_fleet, 2026-12-04: 397 steps judged of 360 published): an owner
// that saw only one node's ranks judged their steps and died; the other node's summaries of those steps came
// after (its agent reconnecting after a failover); the next owner must not judge those steps a second time.
TEST(ServeLease, StepsJudgedWithoutANodeAreNotJudgedAgainWhenItsSummariesComeLate) {
  RedisTestServer redis;
  ASSERT_TRUE(redis.ready());
  StreamPublisher pub(redis.address(), {});
  const double t0 = 1.7e9;
  auto a = Serve(redis, "serve-a"), b = Serve(redis, "serve-b");
  for (int s = 0; s < 10; ++s) {
    PublishStarted(&pub, "j", s, 0, 4, t0);
    ASSERT_TRUE(a->Poll(0, 100 + s).ok());
    ASSERT_TRUE(b->Poll(0, 100 + s).ok());
  }
  EXPECT_EQ(a->jobs().at("j").view().steps_judged, 10u) << "steps 0..9 of node a's four ranks";
  a.reset();                                                            // dies: its lease is not given up
  for (int s = 0; s < 10; ++s) PublishStarted(&pub, "j", s, 4, 8, t0);  // node b's, late
  const auto died = std::chrono::steady_clock::now();
  while (b->counters().jobs_owned == 0 && Seconds(died) < 3 * kLeaseS) ASSERT_TRUE(b->Poll(20, 111).ok());
  ASSERT_EQ(b->counters().jobs_owned, 1u) << "b never took the job over";
  for (int s = 10; s < 15; ++s) {
    PublishStarted(&pub, "j", s, 0, 8, t0);
    ASSERT_TRUE(b->Poll(0, 120 + s).ok());
  }
  const AgentSnapshot sb = b->Snapshot(140);
  const JobState* j = Job(sb, "j");
  ASSERT_TRUE(j && j->online && j->ownership);
  EXPECT_EQ(j->ownership->steps_judged_total, 15) << "steps 0..14, each once over both owners";
  EXPECT_EQ(j->ownership->summaries_judged_total, 80) << "a: 10 steps x 4 ranks; b: 5 x 8";
  EXPECT_EQ(j->online->steps_judged, 5u) << "b judged 10..14";
  EXPECT_EQ(j->ownership->skipped_judged, 40u) << "node b's 4 ranks x steps 0..9";
}

}  // namespace
}  // namespace strata::agent

#endif  // STRATA_HAVE_RECORDER
