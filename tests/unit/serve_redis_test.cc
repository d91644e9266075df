// The multi-node path of issue 13 through a real redis-server: agents' publishers (two "nodes") send step
// summaries, `strata serve`'s core consumes them in a consumer group and names a slow rank in the same
// /api/v1/status the agent serves; serve resumes after a restart without reprocessing or losing entries;
// a publisher with Redis down keeps a bounded buffer and counts what it drops; streams stay capped.
#include <gtest/gtest.h>

#ifdef STRATA_HAVE_RECORDER

#include <httplib.h>

#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "agent/http_front.h"
#include "agent/request_listener.h"
#include "agent/serve.h"
#include "agent/serve_core.h"
#include "agent/stream_codec.h"
#include "agent/stream_publisher.h"
#include "redis_test_server.h"

namespace strata::agent {
namespace {

constexpr int kRanks = 8;

// One step's summary of `rank`: 100 ms steps, 60 ms own work (+ jitter), `slow` adds 15 ms of compute.
online::RankStepSummary Summary(int rank, int64_t step, bool slow, std::mt19937& rng) {
  std::normal_distribution<double> jitter(0, 0.0005);
  online::RankStepSummary s;
  s.rank = rank;
  s.step = step;
  s.step_s = 0.1;
  const double work = 0.06 + jitter(rng) + (slow ? 0.015 : 0);
  s.wait_s = s.step_s - work;
  s.oncpu_s = work;
  return s;
}

// Two nodes: ranks 0-3 publish through one publisher, ranks 4-7 through the other.
struct TwoNodes {
  explicit TwoNodes(const RedisAddress& a) : node{StreamPublisher(a, {}), StreamPublisher(a, {})} {}
  void PublishStep(const std::string& job, int64_t step, int slow_rank, std::mt19937& rng) {
    for (int r = 0; r < kRanks; ++r)
      node[r / 4].Enqueue(job, EncodeSummary(Summary(r, step, r == slow_rank, rng), r < 4 ? "node-a" : "node-b"));
    node[0].Flush(0);
    node[1].Flush(0);
  }
  // Each round of in-flight states of job "h": node a holds ranks 0 (waiting in all_reduce since 100) and 1
  // (idle since its last completion at 99.5, where `rank1` says), node b ranks 2 and 3 (waiting).
  void PublishInflight(double now, const std::optional<diagnosis::RankState>& rank1) {
    for (int r = 0; r < 4; ++r) {
      diagnosis::RankInflight in;
      in.rank = r;
      in.inside = r != 1;
      in.comm = "pg0";
      in.op = in.inside ? "all_reduce" : "";
      in.seq = in.inside ? 74 : -1;
      in.since_unix = in.inside ? 100.0 : 0;
      in.last_progress_unix = 99.5;
      in.threshold_s = 5;
      in.world_size = 4;
      if (r == 1) {
        in.state = rank1;
        in.frame = "Python rank_main (job.py:60)";
      }
      node[r / 2].Enqueue("h", EncodeInflight(in, r < 2 ? "node-a" : "node-b", now));
    }
    node[0].Flush(0);
    node[1].Flush(0);
  }
  StreamPublisher node[2];
};

const diagnosis::RankState kLocked{diagnosis::RankStateKind::kLock, "futex", ""};

nlohmann::json Status(int port) {
  httplib::Client client("127.0.0.1", port);
  auto res = client.Get("/api/v1/status");
  if (!res || res->status != 200) return {};
  return nlohmann::json::parse(res->body);
}

// Publishes `steps` steps (rank `slow_rank` slow from `slow_from`) and returns, per step, the ranks serve's
// status names in its findings for `job` after that step was consumed.
std::vector<std::vector<int>> RunJob(const RedisTestServer& redis, const std::string& job, int steps, int slow_rank,
                                     int slow_from) {
  std::mt19937 rng(7);
  TwoNodes nodes(redis.address());
  ServeCore core(redis.address(), ConsumerOptions{});
  HttpFront http("strata serve");
  EXPECT_TRUE(http.Start("127.0.0.1:0").ok());
  std::vector<std::vector<int>> named;
  for (int s = 0; s < steps; ++s) {
    nodes.PublishStep(job, s, s >= slow_from ? slow_rank : -1, rng);
    EXPECT_TRUE(core.Poll(0, 1000.0 + s).ok());
    const AgentSnapshot snap = core.Snapshot(1000.0 + s);
    http.Publish(StatusJson(snap).dump(), MetricsText(snap));
    std::vector<int> ranks;
    const nlohmann::json st = Status(http.port());
    for (const auto& j : st["jobs"])
      if (j["job"] == job)
        for (const auto& f : j["findings"]) ranks.push_back(f["rank"].get<int>());
    named.push_back(ranks);
  }
  return named;
}

TEST(ServeRedis, NamesTheSlowRankOfAJobSpreadOverTwoNodes) {
  RedisTestServer redis;
  ASSERT_TRUE(redis.ready()) << "redis-server did not start (is it installed? scripts/setup.sh)";
  constexpr int kSlow = 5, kFrom = 8, kWithin = 7;  // 100 ms steps: clearly late in 7 of the last 10 (a second)
  const auto named = RunJob(redis, "job-a", 16, kSlow, kFrom);
  for (int s = 0; s < kFrom; ++s) EXPECT_TRUE(named[s].empty()) << "step " << s << ": a finding before the fault";
  int first = -1;
  for (int s = kFrom; s < 16 && first < 0; ++s)
    if (!named[s].empty()) first = s;
  ASSERT_GE(first, 0) << "rank " << kSlow << " never named";
  EXPECT_EQ(named[first], std::vector<int>{kSlow});
  EXPECT_LT(first - kFrom, kWithin) << "named " << first - kFrom + 1 << " steps after its first slow step";
  EXPECT_EQ(named.back(), std::vector<int>{kSlow});
}

// serve's first answer is a status with no job, not an empty object, even while its first poll waits on a Redis
// that does not answer (a socket that listens and never replies): the status is published before the HTTP front
// opens, not after the first poll.
TEST(ServeRedis, AnswersAStatusBeforeItsFirstPollEnds) {
  const int silent_fd = BindLoopback();
  ASSERT_GE(silent_fd, 0);
  ASSERT_EQ(listen(silent_fd, 4), 0);
  ServeOptions options;
  options.redis = "redis://127.0.0.1:" + std::to_string(PortOf(silent_fd));
  const int port = FreePort();
  options.listen = "127.0.0.1:" + std::to_string(port);
  options.run_s = 1;
  strata::Status ran = strata::Status::Ok();
  std::thread serve([&] { ran = RunServe(options); });
  httplib::Client client("127.0.0.1", port);
  std::optional<std::string> body;  // the first answer
  for (int i = 0; i < 200 && !body; ++i) {
    if (auto res = client.Get("/api/v1/status"); res && res->status == 200)
      body = res->body;
    else
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  serve.join();
  close(silent_fd);
  ASSERT_TRUE(body);
  const nlohmann::json status = nlohmann::json::parse(*body);
  ASSERT_TRUE(status.contains("jobs")) << *body;
  EXPECT_TRUE(status["jobs"].is_array() && status["jobs"].empty()) << *body;
  EXPECT_TRUE(ran.ok()) << ran.message();
}

// Memory across jobs: node b (ranks 4-7) is named in three jobs out of four, node a in none; serve says node b
// is a suspect machine on /api/v1/nodes and in /metrics, and a serve started afresh reads it back from Redis.
TEST(ServeRedis, RemembersAcrossJobsWhichNodeKeepsBeingNamed) {
  RedisTestServer redis;
  ASSERT_TRUE(redis.ready()) << "redis-server did not start (is it installed? scripts/setup.sh)";
  for (int job = 0; job < 4; ++job) RunJob(redis, "mem-" + std::to_string(job), 14, job == 1 ? -1 : 5 + job % 2, 6);
  ServeCore fresh(redis.address(), ConsumerOptions{});
  ASSERT_TRUE(fresh.Poll(0, 2000.0).ok());
  const AgentSnapshot snap = fresh.Snapshot(2000.0);
  HttpFront http("strata serve");
  ASSERT_TRUE(http.Start("127.0.0.1:0").ok());
  http.Publish(StatusJson(snap).dump(), MetricsText(snap));
  http.PublishNodes(NodesJson(snap).dump());
  httplib::Client client("127.0.0.1", http.port());
  auto res = client.Get("/api/v1/nodes");
  ASSERT_TRUE(res && res->status == 200);
  std::map<std::string, nlohmann::json> by_node;
  const nlohmann::json doc = nlohmann::json::parse(res->body);
  for (const auto& n : doc["nodes"]) by_node[n["node"].get<std::string>()] = n;
  ASSERT_EQ(by_node.size(), 2u) << res->body;
  EXPECT_EQ(by_node["node-b"]["recent_jobs"], 4);
  EXPECT_EQ(by_node["node-b"]["named_jobs"], 3);
  EXPECT_TRUE(by_node["node-b"]["suspect"].get<bool>());
  EXPECT_EQ(by_node["node-a"]["named_jobs"], 0);
  EXPECT_FALSE(by_node["node-a"]["suspect"].get<bool>());
  EXPECT_EQ(by_node["node-b"]["jobs"][0]["job"], "mem-3");  // newest first
  EXPECT_EQ(by_node["node-b"]["jobs"][0]["named"][0]["rank"], 6);
  auto metrics = client.Get("/metrics");
  ASSERT_TRUE(metrics && metrics->status == 200);
  EXPECT_NE(metrics->body.find("strata_node_suspect{node=\"node-b\"} 1"), std::string::npos) << metrics->body;
  EXPECT_NE(metrics->body.find("strata_node_suspect{node=\"node-a\"} 0"), std::string::npos);
  http.Stop();
}

// serve asks for the suspect's flight-recorder window; the agent holding that rank (node b) hears the request
// and answers with its window diagnosis's finding, which serve shows beside its own.
TEST(ServeRedis, AsksTheSuspectsAgentForItsWindow) {
  RedisTestServer redis;
  ASSERT_TRUE(redis.ready());
  std::mt19937 rng(11);
  TwoNodes nodes(redis.address());
  RequestListener node_b(redis.address(), 1);
  ServeCore core(redis.address(), ConsumerOptions{});
  std::vector<WindowRequest> heard;
  for (int s = 0; s < 14 && heard.empty(); ++s) {
    nodes.PublishStep("j", s, s >= 6 ? 5 : -1, rng);
    ASSERT_TRUE(core.Poll(0, 100.0 + s).ok());
    auto r = node_b.Poll("j", 0);
    ASSERT_TRUE(r.ok()) << r.error();
    heard = r.value();
  }
  ASSERT_EQ(heard.size(), 1u) << "no request for the suspect's window";
  EXPECT_EQ(heard[0].ranks.front(), 5);
  EXPECT_EQ(heard[0].ranks.size(), 4u) << "the suspect and three peers";
  EXPECT_EQ(core.counters().window_requests, 1u);
  nodes.node[1].Enqueue(
      "j", EncodeWindowFinding({5, "slow_compute", "rank 5: matmul 12 ms longer", "node-b", 14.0, 0.9, 120.0}));
  nodes.node[1].Flush(0);
  ASSERT_TRUE(core.Poll(0, 121).ok());
  const nlohmann::ordered_json st = StatusJson(core.Snapshot(121));
  bool window = false, online = false;
  for (const auto& f : st["jobs"][0]["findings"]) {
    if (f["source"] == "window" && f["rank"] == 5 && f["cause"] == "slow_compute") {
      window = true;
      EXPECT_NE(f["summary"].get<std::string>().find("node-b"), std::string::npos);
    }
    if (f["source"] == "online" && f["rank"] == 5) online = true;
  }
  EXPECT_TRUE(window) << st.dump(1);
  EXPECT_TRUE(online) << st.dump(1);
  // The window's answer describes that window: gone once kWindowFindingShownS passed with no new answer.
  ASSERT_TRUE(core.Poll(0, 120.0 + kWindowFindingShownS - 1).ok());
  EXPECT_NE(StatusJson(core.Snapshot(149)).dump().find("\"source\":\"window\""), std::string::npos) << "still shown";
  ASSERT_TRUE(core.Poll(0, 120.0 + kWindowFindingShownS + 1).ok());
  EXPECT_EQ(StatusJson(core.Snapshot(151)).dump().find("\"source\":\"window\""), std::string::npos)
      << StatusJson(core.Snapshot(151)).dump(1);
  auto again = node_b.Poll("j", 0);
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE(again.value().empty()) << "a request is heard once";
}

// Node a holds ranks 0 (waiting in all_reduce) and 1 (blocked on a lock); node b ranks 2 and 3 (waiting). No
// agent alone can name rank 1 against ranks 2 and 3; serve, from their in-flight entries, does, and only once
// nothing has completed for the threshold. The entries round-trip through the codec.
TEST(ServeRedis, NamesTheStoppedRankFromTheNodesInflightStates) {
  RedisTestServer redis;
  ASSERT_TRUE(redis.ready());
  TwoNodes nodes(redis.address());
  ServeCore core(redis.address(), ConsumerOptions{});
  auto publish = [&](double now) { nodes.PublishInflight(now, kLocked); };
  publish(102);
  ASSERT_TRUE(core.Poll(0, 102).ok());
  EXPECT_TRUE(StatusJson(core.Snapshot(102))["jobs"][0]["findings"].empty()) << "stalled 2.5 s: under the threshold";
  publish(106);
  ASSERT_TRUE(core.Poll(0, 106).ok());
  EXPECT_TRUE(StatusJson(core.Snapshot(106))["jobs"][0]["findings"].empty())
      << "stalled, but the same ranks have not been missing for kInflightConfirmS yet";
  publish(108);
  ASSERT_TRUE(core.Poll(0, 108).ok());
  const nlohmann::ordered_json st = StatusJson(core.Snapshot(108));
  const auto& findings = st["jobs"][0]["findings"];
  ASSERT_EQ(findings.size(), 1u) << st.dump(1);
  EXPECT_EQ(findings[0]["rank"], 1);
  EXPECT_EQ(findings[0]["cause"], "hang");
  EXPECT_EQ(findings[0]["source"], "inflight");
  EXPECT_EQ(findings[0]["detected_at"], 108);
  const std::string summary = findings[0]["summary"];
  EXPECT_NE(summary.find("rank(s) 0, 2, 3 have waited 8.5 s in all_reduce (pg0 #74)"), std::string::npos) << summary;
  EXPECT_NE(summary.find("blocked on a lock (futex) in Python rank_main (job.py:60)"), std::string::npos) << summary;
  EXPECT_EQ(st["jobs"][0]["stalled"], true);
  EXPECT_NE(MetricsText(core.Snapshot(108)).find("strata_job_stalled{training_job=\"h\"} 1"), std::string::npos);
  // Still stalled a round later: the finding keeps when it was first reported.
  publish(109);
  ASSERT_TRUE(core.Poll(0, 109).ok());
  EXPECT_EQ(StatusJson(core.Snapshot(109))["jobs"][0]["findings"][0]["detected_at"], 108);
}

// The same stall, but rank 1's agent sent no whereabouts (its state not looked up): serve waits for them twice
// as long as it confirms a stall with them (kInflightConfirmS), then names rank 1 all the same.
TEST(ServeRedis, WaitsForTheMissingRanksWhereaboutsBeforeNamingIt) {
  RedisTestServer redis;
  ASSERT_TRUE(redis.ready());
  TwoNodes nodes(redis.address());
  ServeCore core(redis.address(), ConsumerOptions{});
  for (double now : {106.0, 108.0}) {
    nodes.PublishInflight(now, std::nullopt);
    ASSERT_TRUE(core.Poll(0, now).ok());
    EXPECT_TRUE(StatusJson(core.Snapshot(now))["jobs"][0]["findings"].empty()) << "at " << now;
  }
  nodes.PublishInflight(110, std::nullopt);
  ASSERT_TRUE(core.Poll(0, 110).ok());
  const auto findings = StatusJson(core.Snapshot(110))["jobs"][0]["findings"];
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0]["rank"], 1);
  const std::string summary = findings[0]["summary"];
  EXPECT_NE(summary.find("rank 1 is not inside the collective (its whereabouts not reported)"), std::string::npos)
      << summary;
}

// Jobs of 2 and 3 ranks through Redis (issue 25: until then steps of fewer than 4 ranks were not judged and
// serve raised nothing): the last rank, on node b, works 15 ms longer from step 20; serve names it by its self
// score within 2 steps, with the onset at step 20 and that step's start, lasting, both scores in the status;
// nothing is named before.
TEST(ServeRedis, NamesTheSlowRankOfTwoAndThreeRankJobs) {
  RedisTestServer redis;
  ASSERT_TRUE(redis.ready());
  for (int ranks : {2, 3}) {
    const std::string job = "small-" + std::to_string(ranks);
    std::mt19937 rng(static_cast<uint32_t>(ranks));
    StreamPublisher node[2] = {StreamPublisher(redis.address(), {}), StreamPublisher(redis.address(), {})};
    ServeCore core(redis.address(), ConsumerOptions{});
    const double t0 = 1.7e9;
    int named_at = -1;
    nlohmann::ordered_json finding;
    for (int s = 0; s < 30 && named_at < 0; ++s) {
      for (int r = 0; r < ranks; ++r) {
        online::RankStepSummary sum = Summary(r, s, r == ranks - 1 && s >= 20, rng);
        sum.start_unix = t0 + 0.1 * s;
        node[r == ranks - 1].Enqueue(job, EncodeSummary(sum, r == ranks - 1 ? "node-b" : "node-a"));
      }
      node[0].Flush(0);
      node[1].Flush(0);
      ASSERT_TRUE(core.Poll(0, t0 + 0.1 * s + 0.1).ok());
      const nlohmann::ordered_json st = StatusJson(core.Snapshot(t0 + 0.1 * s + 0.1));
      for (const auto& j : st["jobs"])
        if (j["job"] == job && !j["findings"].empty()) {
          named_at = s;
          finding = j["findings"][0];
        }
    }
    ASSERT_GE(named_at, 20) << ranks << " ranks: named before the fault: " << finding.dump();
    EXPECT_LE(named_at, 26) << ranks << " ranks: clearly late in 7 of 10 steps of 100 ms (2 of 3 over a second)";
    EXPECT_EQ(finding["rank"], ranks - 1);
    EXPECT_EQ(finding["source"], "online");
    EXPECT_EQ(finding["onset_step"], 20);
    EXPECT_NEAR(finding["onset_unix"].get<double>(), t0 + 2.0, 1e-3);
    EXPECT_EQ(finding["persistence"], "lasting");
    EXPECT_EQ(finding["scores"]["decided_by"], "self");
    EXPECT_EQ(finding["scores"]["peer"]["peers"], ranks - 1);
    EXPECT_NEAR(finding["scores"]["self"]["late_ms"].get<double>(), 15, 2);
  }
}

TEST(ServeRedis, CleanJobRaisesNothing) {
  RedisTestServer redis;
  ASSERT_TRUE(redis.ready());
  const auto named = RunJob(redis, "job-clean", 24, -1, 0);
  for (size_t s = 0; s < named.size(); ++s) EXPECT_TRUE(named[s].empty()) << "step " << s;
}

TEST(ServeRedis, StatusCountsAllRanksAndSteps) {
  RedisTestServer redis;
  ASSERT_TRUE(redis.ready());
  std::mt19937 rng(1);
  TwoNodes nodes(redis.address());
  for (int s = 0; s < 5; ++s) nodes.PublishStep("j", s, -1, rng);
  ServeCore core(redis.address(), ConsumerOptions{});
  ASSERT_TRUE(core.Poll(0, 0).ok());
  const OnlineView& v = core.jobs().at("j").view();
  EXPECT_EQ(v.summaries, 5u * kRanks);
  EXPECT_EQ(v.last_step.size(), static_cast<size_t>(kRanks));
  EXPECT_EQ(v.judged_through, 4);
  EXPECT_EQ(v.gaps, 0u);
  EXPECT_EQ(core.counters().acked, 5u * kRanks);
}

TEST(ServeRedis, RestartResumesFromTheConsumerGroup) {
  RedisTestServer redis;
  ASSERT_TRUE(redis.ready());
  std::mt19937 rng(3);
  TwoNodes nodes(redis.address());
  ConsumerOptions co;
  co.consumer = "serve-1";
  {
    for (int s = 0; s < 10; ++s) nodes.PublishStep("j", s, -1, rng);
    ServeCore first(redis.address(), co);
    ASSERT_TRUE(first.Poll(0, 0).ok());
    EXPECT_EQ(first.jobs().at("j").view().summaries, 10u * kRanks);
  }  // serve stops
  for (int s = 10; s < 20; ++s) nodes.PublishStep("j", s, -1, rng);
  // A serve that read steps 20..21 but died before acknowledging them: they stay pending on its name.
  for (int s = 20; s < 22; ++s) nodes.PublishStep("j", s, -1, rng);
  RedisConnection c;
  ASSERT_TRUE(c.Connect(redis.address(), 1).ok());
  auto read = c.Command({"XREADGROUP", "GROUP", co.group, co.consumer, "STREAMS", StepsStreamKey("j"), ">"});
  ASSERT_TRUE(read.ok()) << read.error();
  ASSERT_EQ(read.value().elements.at(0).elements.at(1).elements.size(), 12u * kRanks);
  // The restarted serve: it reads the 16 entries it had taken but not acknowledged, and nothing it had.
  nodes.PublishStep("j", 22, -1, rng);
  ServeCore second(redis.address(), co);
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(second.Poll(0, 0).ok());
  const OnlineView& v = second.jobs().at("j").view();
  EXPECT_EQ(v.summaries, 13u * kRanks) << "steps 10..22, each once";
  EXPECT_EQ(v.duplicates, 0u);
  EXPECT_EQ(second.counters().reclaimed, 12u * kRanks);
  for (const auto& [rank, step] : v.last_step) EXPECT_EQ(step, 22) << "rank " << rank;
  auto pending = c.Command({"XPENDING", StepsStreamKey("j"), co.group});
  ASSERT_TRUE(pending.ok());
  EXPECT_EQ(pending.value().elements.at(0).integer, 0) << "everything acknowledged";
}

TEST(ServeRedis, ClaimsEntriesLeftPendingByAnotherConsumer) {
  RedisTestServer redis;
  ASSERT_TRUE(redis.ready());
  std::mt19937 rng(4);
  TwoNodes nodes(redis.address());
  ServeCore setup(redis.address(), ConsumerOptions{});  // creates the group
  ASSERT_TRUE(setup.Poll(0, 0).ok());
  for (int s = 0; s < 3; ++s) nodes.PublishStep("j", s, -1, rng);
  ASSERT_TRUE(setup.Poll(0, 0).ok());  // discovers job j and its group
  for (int s = 3; s < 6; ++s) nodes.PublishStep("j", s, -1, rng);
  RedisConnection c;
  ASSERT_TRUE(c.Connect(redis.address(), 1).ok());
  ASSERT_TRUE(c.Command({"XREADGROUP", "GROUP", "strata-serve", "dead", "STREAMS", StepsStreamKey("j"), ">"}).ok());
  ASSERT_TRUE(setup.Release().ok());  // a serve reads only the jobs it owns: setup stops and gives j up
  ConsumerOptions co;
  co.consumer = "other";
  co.claim_idle_s = 0;
  ServeCore other(redis.address(), co);
  ASSERT_TRUE(other.Poll(0, 0).ok());
  EXPECT_EQ(other.counters().reclaimed, 3u * kRanks);
  EXPECT_EQ(other.jobs().at("j").view().summaries, 3u * kRanks);
}

TEST(StreamPublisher, BuffersBoundedWhileRedisIsDownThenDelivers) {
  const int port = FreePort();
  PublisherOptions po;
  po.buffer_max = 10;
  po.backoff_min_s = 1;
  StreamPublisher p(RedisAddress{"127.0.0.1", port}, po);
  std::mt19937 rng(5);
  for (int s = 0; s < 25; ++s) p.Enqueue("j", EncodeSummary(Summary(0, s, false, rng), "n"));
  p.Flush(0);
  EXPECT_EQ(p.counters().dropped, 15u);
  EXPECT_EQ(p.counters().buffered, 10u);
  EXPECT_EQ(p.counters().published, 0u);
  EXPECT_GE(p.counters().failures, 1u);
  EXPECT_FALSE(p.counters().connected);
  p.Flush(0.5);  // within the backoff: no new attempt
  EXPECT_EQ(p.counters().failures, 1u);
  RedisTestServer redis(port);
  ASSERT_TRUE(redis.ready());
  p.Flush(2);
  EXPECT_EQ(p.counters().published, 10u);
  EXPECT_EQ(p.counters().buffered, 0u);
  RedisConnection c;
  ASSERT_TRUE(c.Connect(redis.address(), 1).ok());
  auto len = c.Command({"XLEN", StepsStreamKey("j")});
  ASSERT_TRUE(len.ok());
  EXPECT_EQ(len.value().integer, 10) << "the newest 10 of 25 entries";
  auto first = c.Command({"XRANGE", StepsStreamKey("j"), "-", "+", "COUNT", "1"});
  ASSERT_TRUE(first.ok());
  StreamFields f;
  const auto& kv = first.value().elements.at(0).elements.at(1).elements;
  for (size_t i = 0; i + 1 < kv.size(); i += 2) f.emplace_back(kv[i].text, kv[i + 1].text);
  auto decoded = DecodeSummary(f);
  ASSERT_TRUE(decoded.ok()) << decoded.error();
  EXPECT_EQ(decoded.value().step, 15);
  const std::string metrics = MetricsText(AgentSnapshot{.publisher = p.counters()});
  EXPECT_NE(metrics.find("strata_redis_dropped_total 15\n"), std::string::npos) << metrics;
}

TEST(StreamPublisher, StreamStaysCapped) {
  RedisTestServer redis;
  ASSERT_TRUE(redis.ready());
  PublisherOptions po;
  po.maxlen = 100;
  po.buffer_max = 100000;
  StreamPublisher p(redis.address(), po);
  std::mt19937 rng(6);
  for (int s = 0; s < 3000; ++s) p.Enqueue("j", EncodeSummary(Summary(1, s, false, rng), "n"));
  p.Flush(0);
  EXPECT_EQ(p.counters().published, 3000u);
  RedisConnection c;
  ASSERT_TRUE(c.Connect(redis.address(), 1).ok());
  auto len = c.Command({"XLEN", StepsStreamKey("j")});
  ASSERT_TRUE(len.ok());
  EXPECT_GE(len.value().integer, 100);
  EXPECT_LE(len.value().integer, 300) << "MAXLEN ~ 100 trims whole nodes (100 entries each by default)";
}

TEST(StreamCodec, SummaryRoundTripsAndRejectsBadFields) {
  online::RankStepSummary s;
  s.rank = 3;
  s.group = 1;
  s.step = 42;
  s.step_s = 0.123456789012345;
  s.wait_s = 0.01;
  s.gc_s = 0.002;
  auto back = DecodeSummary(EncodeSummary(s, "h"));
  ASSERT_TRUE(back.ok()) << back.error();
  EXPECT_EQ(back.value().rank, 3);
  EXPECT_EQ(back.value().step, 42);
  EXPECT_EQ(back.value().step_s, s.step_s);
  EXPECT_EQ(back.value().gc_s, s.gc_s);
  StreamFields bad = EncodeSummary(s, "h");
  bad[5].second = "nan";
  EXPECT_FALSE(DecodeSummary(bad).ok());
  bad = EncodeSummary(s, "h");
  bad.erase(bad.begin() + 4);  // no step
  EXPECT_NE(DecodeSummary(bad).error().find("'step'"), std::string::npos);
  EXPECT_FALSE(ParseRedisUrl("http://x:1").ok());
  EXPECT_FALSE(ParseRedisUrl("redis://x:99999").ok());
  EXPECT_EQ(ParseRedisUrl("redis://h").value().seeds[0].port, 6379);
}

}  // namespace
}  // namespace strata::agent

#endif  // STRATA_HAVE_RECORDER
