// RedisNode: one synchronous connection to one Redis server through hiredis (Debian's libhiredis-dev), the
// transport under RedisConnection (which routes commands over one server or a Redis Cluster's nodes).
// Commands are sent as argument vectors (binary safe, no format strings); replies come back as a small owned
// tree so no hiredis type leaks to callers. With credentials, every new connection sends AUTH first.
// Invariants: a node that saw an I/O or protocol error is closed (`connected()` false) and must be reopened
// with Connect; errors name the server (host:port) and the command's name, never an argument (AUTH's password
// appears in no message).
#pragma once

#include <string>
#include <vector>

#include "core/status.h"

struct redisContext;

namespace strata::agent {

/// One server's address.
struct RedisEndpoint {
  std::string host;
  int port = 6379;
  std::string Text() const { return host + ":" + std::to_string(port); }
  bool operator==(const RedisEndpoint& o) const { return host == o.host && port == o.port; }
};

/// Redis ACL credentials (AUTH user password; AUTH password alone when `user` is empty). Never printed.
struct RedisCredentials {
  std::string user;
  std::string password;
  bool empty() const { return user.empty() && password.empty(); }
};

/// A reply: a status/string/error (text), an integer, nil, or an array of replies.
struct RedisReply {
  enum class Kind { kNil, kString, kInteger, kArray, kError } kind = Kind::kNil;
  std::string text;
  long long integer = 0;
  std::vector<RedisReply> elements;
};

class RedisNode {
 public:
  RedisNode() = default;
  ~RedisNode();
  RedisNode(const RedisNode&) = delete;
  RedisNode& operator=(const RedisNode&) = delete;

  /// Opens (or reopens) the connection within `timeout_s` (commands then time out after `timeout_s` too)
  /// and authenticates with `credentials` when there are any.
  Status Connect(const RedisEndpoint& endpoint, const RedisCredentials& credentials, double timeout_s);
  bool connected() const { return ctx_ != nullptr; }
  void Close();
  const RedisEndpoint& endpoint() const { return endpoint_; }

  /// Several commands in one round trip; replies in order (error replies as kError elements). An I/O
  /// error fails the whole batch and closes the connection.
  Expected<std::vector<RedisReply>> Pipeline(const std::vector<std::vector<std::string>>& commands);

 private:
  Status IoError(const std::string& what);
  redisContext* ctx_ = nullptr;
  RedisEndpoint endpoint_;
};

}  // namespace strata::agent
