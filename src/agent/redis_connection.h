// RedisConnection: strata's one way to Redis, for the stream publisher, the request listener and `strata
// serve`. It talks to one plain Redis server or to a Redis Cluster, found out when it connects: a server
// that refuses CLUSTER SLOTS (cluster support disabled) is used as one server, every command sent to it as
// before; otherwise the slot map from CLUSTER SLOTS routes each command to the master owning its key's slot
// (redis_slots.h), a MOVED reply updates the map and retries at the node it names, an ASK reply sends ASKING
// and the command once to the node it names, and a connection error or CLUSTERDOWN/TRYAGAIN reconnects,
// re-reads the map and retries, a bounded number of times (kRedisAttempts). Every node is connected
// (and authenticated) lazily, on its first command.
// One node's failure is that node's: on a cluster, a command whose node still cannot be reached after the
// attempts gets a NODEDOWN error reply (NodeDown; Command: an error Status NodeDown tells), the other nodes'
// commands their own replies, and the node is left alone for kNodeDownHoldS (its commands answered NODEDOWN at
// once, unsent) before it is tried again (with the map re-read, so a promoted replica takes its slots): a dead
// master holds up none of the others' jobs.
// Invariants: a failure with no node left to read the slot map from (the whole cluster unreachable), or of the
// one plain server, closes the whole connection (`connected()` false; the caller reconnects with its own
// backoff); replies come back in the order of the commands; the password is in no message this class writes
// (RedisAddress::Text leaves it out).
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "agent/redis_node.h"
#include "core/status.h"

namespace strata::agent {

/// Attempts at one command against a cluster (first send included) before the connection gives up.
constexpr int kRedisAttempts = 5;

/// Seconds a cluster node that failed its attempts is left alone before it is tried again.
constexpr double kNodeDownHoldS = 1.0;
/// An error reply standing for a command not answered because its node could not be reached (the batch's other
/// commands were): the caller may carry on with the rest.
bool NodeDown(const RedisReply& reply);
/// The same for an error Status (RedisConnection::Command's).
bool NodeDown(const Status& status);

/// Commands a caller skipped because their node was down (NodeDown), and the last such error: what serve counts
/// as `strata_serve_redis_unreachable_total` while the rest of its work goes on.
struct NodeDownTally {
  uint64_t count = 0;
  std::string last;
  void Note(const std::string& error) { ++count, last = error; }
};

/// What --redis names: seed nodes (one plain server is one seed) and optional ACL credentials.
struct RedisAddress {
  RedisAddress() = default;
  RedisAddress(std::string host, int port) : seeds{{std::move(host), port}} {}
  std::vector<RedisEndpoint> seeds;
  RedisCredentials credentials;
  /// redis://[USER@]HOST:PORT[,HOST:PORT...]: the password is never in it.
  std::string Text() const;
};
/// redis://[USER:PASSWORD@]HOST[:PORT][,HOST[:PORT]...] (port 6379 when left out; `redis://:PASSWORD@...`
/// for the default user). An error names the --redis argument with its password masked.
Expected<RedisAddress> ParseRedisUrl(const std::string& url);

class RedisConnection {
 public:
  RedisConnection() = default;
  RedisConnection(const RedisConnection&) = delete;
  RedisConnection& operator=(const RedisConnection&) = delete;

  /// Opens the connection through the first seed that answers within `timeout_s` (commands then time
  /// out after `timeout_s` too) and reads whether it is a cluster, and its slot map if so.
  Status Connect(const RedisAddress& address, double timeout_s);
  bool connected() const { return open_; }
  bool cluster() const { return cluster_; }
  void Close();

  /// One command; an error reply is returned as an error Status (the connection stays open).
  Expected<RedisReply> Command(const std::vector<std::string>& argv);
  /// Several commands; replies in order (error replies as kError elements). One round trip to one server;
  /// on a cluster one per node owning some of the commands' slots. A failure past the attempts fails the
  /// whole batch and closes the connection (commands of it may have been applied on other nodes).
  Expected<std::vector<RedisReply>> Pipeline(const std::vector<std::vector<std::string>>& commands);

 private:
  struct Batch;
  RedisNode* NodeAt(const RedisEndpoint& endpoint, Status* error);
  Status ReadSlots(RedisNode* node, bool* is_cluster);
  Status RefreshSlots();
  int MasterIndex(const RedisEndpoint& endpoint);
  RedisEndpoint OwnerOf(const std::vector<std::string>& argv) const;
  bool SendGroup(const RedisEndpoint& endpoint, Batch* batch, const std::vector<size_t>& group);
  bool HeldDown(const RedisEndpoint& endpoint) const;
  Expected<std::vector<RedisReply>> Finish(Batch* batch, const std::vector<size_t>& failed);
  void Settle(Batch* batch, size_t i, RedisReply reply, const RedisEndpoint& from);
  Expected<std::vector<RedisReply>> ClusterPipeline(const std::vector<std::vector<std::string>>& commands);

  RedisAddress address_;
  double timeout_s_ = 1.0;
  bool open_ = false;
  bool cluster_ = false;
  RedisEndpoint single_;                                     // the server, when not a cluster
  std::map<std::string, std::unique_ptr<RedisNode>> nodes_;  // by host:port, connected on first use
  std::vector<RedisEndpoint> masters_;                       // the slot map's masters
  std::vector<int> slot_owner_;                              // slot -> index in masters_, -1: unknown
  std::map<std::string, double> down_until_;                 // host:port -> monotonic s it is left alone until
};

}  // namespace strata::agent
