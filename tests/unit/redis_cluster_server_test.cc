// RedisConnection and StreamConsumer against a real 3-master Redis Cluster the test starts
// (redis_test_cluster.h): commands reach the master of their key's slot, a slot moved behind the connection's
// back is followed (MOVED), a slot being migrated is followed (ASK), a stalled master is retried through, a
// dead one alone fails after the attempts and the connection reconnects, a dead one among live ones costs only
// its own commands, a dead master's promoted replica is found, and
// serve's consumer reads jobs whose streams are on different masters (one XREADGROUP per slot: one over all would be
// CROSSSLOT). A plain server is still one server (no cluster);
// ACL credentials are sent on connecting and never appear in an error. The harness does not take another
// server's answer for its own.
#include <gtest/gtest.h>

#include <set>

#include "agent/redis_connection.h"
#include "agent/redis_slots.h"
#include "agent/stream_consumer.h"
#include "agent/stream_publisher.h"
#include "redis_test_cluster.h"

namespace strata::agent {
namespace {

RedisAddress Seeds(const RedisTestCluster& c) {
  RedisAddress a("127.0.0.1", c.ports()[0]);
  a.seeds.push_back({"127.0.0.1", c.ports()[1]});
  return a;
}

// The port of the master serving `slot`, from the node on `from` (CLUSTER SLOTS; the first node by default).
int OwnerPort(const RedisTestCluster& c, int slot, int from = 0) {
  const RedisReply slots = c.Raw(from != 0 ? from : c.ports()[0], {"CLUSTER", "SLOTS"});
  for (const RedisReply& r : slots.elements)
    if (r.elements.size() >= 3 && r.elements[0].integer <= slot && slot <= r.elements[1].integer)
      return static_cast<int>(r.elements[2].elements[1].integer);
  return -1;
}

// A key whose slot the master on `port` serves.
std::string KeyOn(const RedisTestCluster& c, int port, const std::string& prefix) {
  for (int i = 0;; ++i) {
    const std::string key = prefix + std::to_string(i);
    if (OwnerPort(c, KeySlot(key)) == port) return key;
  }
}

TEST(RedisClusterServer, CommandsReachTheirSlotsMaster) {
  RedisTestCluster cluster;
  ASSERT_TRUE(cluster.ready()) << "redis-server / redis-cli --cluster create";
  RedisConnection conn;
  ASSERT_TRUE(conn.Connect(Seeds(cluster), 2.0).ok());
  EXPECT_TRUE(conn.cluster());
  std::vector<std::vector<std::string>> sets;
  for (int port : cluster.ports()) sets.push_back({"SET", KeyOn(cluster, port, "k"), std::to_string(port)});
  auto replies = conn.Pipeline(sets);
  ASSERT_TRUE(replies.ok()) << replies.error();
  for (const RedisReply& r : replies.value()) EXPECT_EQ(r.text, "OK");
  for (const auto& set : sets) {
    const int port = std::stoi(set[2]);
    EXPECT_EQ(cluster.Text(port, {"GET", set[1]}), set[2]) << "stored on its slot's master";
    auto got = conn.Command({"GET", set[1]});
    ASSERT_TRUE(got.ok()) << got.error();
    EXPECT_EQ(got.value().text, set[2]);
  }
}

TEST(RedisClusterServer, FollowsMovedAndAsk) {
  RedisTestCluster cluster;
  ASSERT_TRUE(cluster.ready());
  const int a = cluster.ports()[0], b = cluster.ports()[1];
  RedisConnection conn;
  ASSERT_TRUE(conn.Connect(Seeds(cluster), 2.0).ok());
  // MOVED: an empty slot of a's handed to b on every node, the connection's map now stale.
  const std::string moved = KeyOn(cluster, a, "moved");
  const std::string slot = std::to_string(KeySlot(moved)), b_id = cluster.Text(b, {"CLUSTER", "MYID"});
  for (int port : cluster.ports()) ASSERT_EQ(cluster.Text(port, {"CLUSTER", "SETSLOT", slot, "NODE", b_id}), "OK");
  auto set = conn.Command({"SET", moved, "v"});
  ASSERT_TRUE(set.ok()) << set.error();
  EXPECT_EQ(cluster.Text(b, {"GET", moved}), "v") << "written at the slot's new master";
  // ASK: a slot of a's migrating to b; a key a does not have is asked at b.
  const std::string asked = KeyOn(cluster, a, "asked");
  const std::string aslot = std::to_string(KeySlot(asked)), a_id = cluster.Text(a, {"CLUSTER", "MYID"});
  ASSERT_EQ(cluster.Text(b, {"CLUSTER", "SETSLOT", aslot, "IMPORTING", a_id}), "OK");
  ASSERT_EQ(cluster.Text(a, {"CLUSTER", "SETSLOT", aslot, "MIGRATING", b_id}), "OK");
  auto ask = conn.Command({"SET", asked, "w"});
  ASSERT_TRUE(ask.ok()) << ask.error();
  auto back = conn.Command({"GET", asked});
  ASSERT_TRUE(back.ok()) << back.error();
  EXPECT_EQ(back.value().text, "w");
  EXPECT_EQ(cluster.Raw(a, {"GET", asked}).text.rfind("ASK ", 0), 0u) << "not on the old master";
}

TEST(RedisClusterServer, ConsumerReadsJobsOnDifferentMasters) {
  RedisTestCluster cluster;
  ASSERT_TRUE(cluster.ready());
  std::vector<std::string> jobs;
  for (int port : cluster.ports()) jobs.push_back(KeyOn(cluster, port, "job-"));
  StreamPublisher publisher(Seeds(cluster), {});
  for (const std::string& job : jobs) publisher.Enqueue(job, {{"kind", "summary"}, {"job", job}});
  publisher.Flush(0);
  EXPECT_EQ(publisher.counters().published, jobs.size()) << publisher.counters().last_error;
  StreamConsumer consumer(Seeds(cluster), {});
  ASSERT_TRUE(consumer.Discover().ok());
  EXPECT_EQ(consumer.jobs(), jobs.size());
  std::set<std::string> read;
  for (int i = 0; i < 5 && read.size() < jobs.size(); ++i) {
    auto entries = consumer.Read(100);
    ASSERT_TRUE(entries.ok()) << entries.error();
    for (const StreamEntry& e : entries.value()) read.insert(e.job);
    auto acked = consumer.Ack(entries.value());
    ASSERT_TRUE(acked.ok()) << acked.error();
    EXPECT_EQ(acked.value(), entries.value().size());
  }
  EXPECT_EQ(read, std::set<std::string>(jobs.begin(), jobs.end()));
}

TEST(RedisClusterServer, RetriesThroughAStallAndGivesUpOnADeadMasterAlone) {
  RedisTestCluster cluster;
  ASSERT_TRUE(cluster.ready());
  RedisConnection conn;
  ASSERT_TRUE(conn.Connect(RedisAddress("127.0.0.1", cluster.ports()[2]), 0.5).ok());
  const std::string stalled = KeyOn(cluster, cluster.ports()[1], "stalled");
  const std::string dead = KeyOn(cluster, cluster.ports()[0], "dead");
  ASSERT_TRUE(conn.Command({"SET", stalled, "1"}).ok());
  // A master that answers nothing for 0.8 s: the command times out, reconnects and goes through.
  ASSERT_EQ(cluster.Text(cluster.ports()[1], {"CLIENT", "PAUSE", "800", "ALL"}), "OK");
  auto after_stall = conn.Command({"SET", stalled, "2"});
  EXPECT_TRUE(after_stall.ok()) << after_stall.error();
  EXPECT_TRUE(conn.connected());
  // A master gone for good (no replica): the command fails after its attempts, as its node's failure alone (the
  // others still give the map); once every master is gone the connection closes.
  cluster.Kill(0);
  auto lost = conn.Command({"SET", dead, "1"});
  ASSERT_FALSE(lost.ok());
  EXPECT_NE(lost.error().find("attempts"), std::string::npos) << lost.error();
  EXPECT_TRUE(NodeDown(lost.status())) << lost.error();
  EXPECT_TRUE(conn.connected());
  auto got = conn.Command({"GET", stalled});
  ASSERT_TRUE(got.ok()) << got.error();
  EXPECT_EQ(got.value().text, "2");
  cluster.Kill(1);
  cluster.Kill(2);
  auto none = conn.Command({"GET", stalled});
  ASSERT_FALSE(none.ok());
  EXPECT_FALSE(conn.connected()) << "no node to read the map from: " << none.error();
}

// One dead master costs only its own commands (issue 49's fleet runs: while a master was dead every serve's poll
// failed on it and the leases of jobs on the healthy masters lapsed): a batch over three masters answers the two
// live ones and gives the dead one's command a NODEDOWN reply, the connection stays open, the dead node is then
// left alone for a while (answered at once, not sent), and serve's consumer reads and acknowledges the live
// masters' jobs.
TEST(RedisClusterServer, ADeadMasterCostsOnlyItsOwnCommands) {
  RedisTestCluster cluster;
  ASSERT_TRUE(cluster.ready());
  const std::vector<int>& ports = cluster.ports();
  RedisAddress live_seeds("127.0.0.1", ports[1]);
  live_seeds.seeds.push_back({"127.0.0.1", ports[2]});
  std::vector<std::string> jobs;
  for (int port : ports) jobs.push_back(KeyOn(cluster, port, "job-"));
  StreamPublisher publisher(live_seeds, {});
  for (const std::string& job : jobs) publisher.Enqueue(job, {{"kind", "summary"}, {"job", job}});
  publisher.Flush(0);
  ASSERT_EQ(publisher.counters().published, jobs.size()) << publisher.counters().last_error;
  StreamConsumer consumer(live_seeds, {});
  ASSERT_TRUE(consumer.Discover().ok());
  ASSERT_EQ(consumer.jobs(), jobs.size());
  RedisConnection conn;
  ASSERT_TRUE(conn.Connect(live_seeds, 0.5).ok());
  std::vector<std::vector<std::string>> sets;
  for (int port : ports) sets.push_back({"SET", KeyOn(cluster, port, "k"), std::to_string(port)});
  ASSERT_TRUE(conn.Pipeline(sets).ok());

  cluster.Kill(0);
  auto replies = conn.Pipeline(sets);
  ASSERT_TRUE(replies.ok()) << replies.error();
  EXPECT_TRUE(NodeDown(replies.value()[0])) << replies.value()[0].text;
  EXPECT_NE(replies.value()[0].text.find("attempts"), std::string::npos) << "tried: " << replies.value()[0].text;
  EXPECT_EQ(replies.value()[1].text, "OK");
  EXPECT_EQ(replies.value()[2].text, "OK");
  EXPECT_TRUE(conn.connected()) << "the live masters' connections stay";
  auto again = conn.Pipeline(sets);
  ASSERT_TRUE(again.ok()) << again.error();
  EXPECT_TRUE(NodeDown(again.value()[0]));
  EXPECT_NE(again.value()[0].text.find("left alone"), std::string::npos) << "held, not sent: " << again.value()[0].text;
  EXPECT_EQ(again.value()[2].text, "OK");
  auto alone = conn.Command({"GET", sets[0][1]});
  ASSERT_FALSE(alone.ok());
  EXPECT_TRUE(NodeDown(alone.status())) << alone.error();

  std::set<std::string> read;
  for (int i = 0; i < 5 && read.size() < 2; ++i) {
    auto entries = consumer.Read(100);
    ASSERT_TRUE(entries.ok()) << entries.error();
    for (const StreamEntry& e : entries.value()) read.insert(e.job);
    auto acked = consumer.Ack(entries.value());
    ASSERT_TRUE(acked.ok()) << acked.error();
    EXPECT_EQ(acked.value(), entries.value().size());
  }
  EXPECT_EQ(read, (std::set<std::string>{jobs[1], jobs[2]})) << "the live masters' jobs, not the dead one's";
  EXPECT_GT(consumer.unreachable().count, 0u);
  EXPECT_NE(consumer.unreachable().last.find("NODEDOWN"), std::string::npos) << consumer.unreachable().last;
}

TEST(RedisClusterServer, FollowsAFailoverToThePromotedReplica) {
  RedisTestCluster cluster(1);
  ASSERT_TRUE(cluster.ready()) << "3 masters, 3 replicas";
  const std::vector<int>& ports = cluster.ports();
  RedisAddress seeds("127.0.0.1", ports[0]);
  for (size_t i = 1; i < ports.size(); ++i) seeds.seeds.push_back({"127.0.0.1", ports[i]});
  RedisConnection conn;
  ASSERT_TRUE(conn.Connect(seeds, 0.5).ok());
  const std::string key = "failover{job-7}";
  const int master = OwnerPort(cluster, KeySlot(key));
  // WAIT counts the replicas that have its own connection's writes: the SET and the WAIT on one connection.
  const auto written = cluster.RawPipeline(master, {{"SET", key, "1"}, {"WAIT", "1", "2000"}});
  ASSERT_EQ(written.size(), 2u);
  ASSERT_EQ(written[1].integer, 1) << "the replica has the key";
  cluster.KillPort(master);
  // As the agent and serve do: a failed command closes the connection, the next try reconnects.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  Expected<RedisReply> got = Status::Internal("not tried");
  while (std::chrono::steady_clock::now() < deadline) {
    if (conn.connected() || conn.Connect(seeds, 0.5).ok()) got = conn.Command({"GET", key});
    if (got.ok()) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  ASSERT_TRUE(got.ok()) << got.error();
  EXPECT_EQ(got.value().text, "1");
  const int live = master == ports[0] ? ports[1] : ports[0];
  const int promoted = OwnerPort(cluster, KeySlot(key), live);
  EXPECT_NE(promoted, master);
  EXPECT_EQ(cluster.Raw(promoted, {"GET", key}).text, "1") << "read from the promoted replica";
}

TEST(RedisClusterServer, APlainServerIsOneServer) {
  RedisTestServer server;
  ASSERT_TRUE(server.ready());
  RedisConnection conn;
  ASSERT_TRUE(conn.Connect(server.address(), 1.0).ok());
  EXPECT_FALSE(conn.cluster());
  ASSERT_TRUE(conn.Command({"SET", "a{x}", "1"}).ok());
  auto multi = conn.Command({"MGET", "a{x}", "b{y}"});  // two slots: fine on one server
  ASSERT_TRUE(multi.ok()) << multi.error();
  EXPECT_EQ(multi.value().elements.size(), 2u);
}

TEST(RedisClusterServer, AclCredentialsAndNoPasswordInErrors) {
  RedisTestServer server;
  ASSERT_TRUE(server.ready());
  RedisConnection admin;
  ASSERT_TRUE(admin.Connect(server.address(), 1.0).ok());
  ASSERT_TRUE(admin.Command({"ACL", "SETUSER", "strata", "on", ">topsecret", "~*", "+@all"}).ok());
  ASSERT_TRUE(admin.Command({"ACL", "SETUSER", "default", "off"}).ok());
  RedisAddress good = server.address(), bad = server.address();
  good.credentials = {"strata", "topsecret"};
  bad.credentials = {"strata", "wrongsecret"};
  RedisConnection conn;
  ASSERT_TRUE(conn.Connect(good, 1.0).ok());
  auto who = conn.Command({"ACL", "WHOAMI"});
  ASSERT_TRUE(who.ok()) << who.error();
  EXPECT_EQ(who.value().text, "strata");
  const Status refused = conn.Connect(bad, 1.0);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.message().find("AUTH"), std::string::npos) << refused.message();
  EXPECT_EQ(refused.message().find("wrongsecret"), std::string::npos) << refused.message();
  EXPECT_EQ(good.Text().find("topsecret"), std::string::npos) << good.Text();
}

// The harness itself: a server whose port another server holds is not ready (its child exits; the other
// server's PING answer is not taken for its own), which is what lets a node lose a port race to a parallel test
// and be started again elsewhere.
TEST(RedisTestHarness, AServerOnAPortAnotherHoldsIsNotReady) {
  RedisTestServer first;
  ASSERT_TRUE(first.ready());
  RedisTestServer second(first.port());
  EXPECT_FALSE(second.ready());
  EXPECT_TRUE(first.ready());
}

}  // namespace
}  // namespace strata::agent
