// RedisConnection: one synchronous connection to a Redis server through hiredis (Debian's libhiredis-dev),
// for the stream publisher and `strata serve`. Commands are sent as argument vectors (binary safe, no
// format strings); replies come back as a small owned tree so no hiredis type leaks to callers.
// Invariants: a connection that saw an I/O or protocol error is closed (`connected()` false) and must be
// reopened with Connect; every error names the server and the command.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/status.h"

struct redisContext;

namespace strata::agent {

/// redis://HOST:PORT (port 6379 when left out).
struct RedisAddress {
  std::string host;
  int port = 6379;
  std::string Text() const { return "redis://" + host + ":" + std::to_string(port); }
};
Expected<RedisAddress> ParseRedisUrl(const std::string& url);

/// A reply: a status/string/error (text), an integer, nil, or an array of replies.
struct RedisReply {
  enum class Kind { kNil, kString, kInteger, kArray, kError } kind = Kind::kNil;
  std::string text;
  long long integer = 0;
  std::vector<RedisReply> elements;
};

class RedisConnection {
 public:
  RedisConnection() = default;
  ~RedisConnection();
  RedisConnection(const RedisConnection&) = delete;
  RedisConnection& operator=(const RedisConnection&) = delete;

  /// Opens (or reopens) the connection within `timeout_s`; commands then time out after `timeout_s` too.
  Status Connect(const RedisAddress& address, double timeout_s);
  bool connected() const { return ctx_ != nullptr; }
  void Close();

  /// One command; an error reply is returned as an error Status (the connection stays open).
  Expected<RedisReply> Command(const std::vector<std::string>& argv);
  /// Several commands in one round trip; replies in order (error replies as kError elements). An I/O
  /// error fails the whole batch and closes the connection.
  Expected<std::vector<RedisReply>> Pipeline(const std::vector<std::vector<std::string>>& commands);

 private:
  Status IoError(const std::string& what);
  redisContext* ctx_ = nullptr;
  RedisAddress address_;
  double timeout_s_ = 1.0;
};

}  // namespace strata::agent
