// RedisNode over hiredis (see redis_node.h).
#include "agent/redis_node.h"

#include <hiredis.h>

namespace strata::agent {
namespace {

RedisReply Convert(const redisReply* r) {
  RedisReply out;
  if (r == nullptr) return out;
  switch (r->type) {
    case REDIS_REPLY_STRING:
    case REDIS_REPLY_STATUS:
      out.kind = RedisReply::Kind::kString;
      out.text.assign(r->str, r->len);
      break;
    case REDIS_REPLY_ERROR:
      out.kind = RedisReply::Kind::kError;
      out.text.assign(r->str, r->len);
      break;
    case REDIS_REPLY_INTEGER:
      out.kind = RedisReply::Kind::kInteger;
      out.integer = r->integer;
      break;
    case REDIS_REPLY_ARRAY:
      out.kind = RedisReply::Kind::kArray;
      for (size_t i = 0; i < r->elements; ++i) out.elements.push_back(Convert(r->element[i]));
      break;
    default:
      break;
  }
  return out;
}

timeval ToTimeval(double s) {
  timeval tv{};
  tv.tv_sec = static_cast<time_t>(s);
  tv.tv_usec = static_cast<suseconds_t>((s - static_cast<double>(tv.tv_sec)) * 1e6);
  return tv;
}

}  // namespace

RedisNode::~RedisNode() { Close(); }

void RedisNode::Close() {
  if (ctx_ != nullptr) redisFree(ctx_);
  ctx_ = nullptr;
}

Status RedisNode::Connect(const RedisEndpoint& endpoint, const RedisCredentials& credentials, double timeout_s) {
  Close();
  endpoint_ = endpoint;
  const timeval tv = ToTimeval(timeout_s);
  redisContext* c = redisConnectWithTimeout(endpoint.host.c_str(), endpoint.port, tv);
  if (c == nullptr) return Status::Resource(endpoint.Text() + ": cannot allocate a connection");
  if (c->err != 0) {
    std::string why = c->errstr;
    redisFree(c);
    return Status::Resource(endpoint.Text() + ": " + why);
  }
  redisSetTimeout(c, tv);
  ctx_ = c;
  if (credentials.empty()) return Status::Ok();
  std::vector<std::string> auth = {"AUTH"};
  if (!credentials.user.empty()) auth.push_back(credentials.user);
  auth.push_back(credentials.password);
  auto r = Pipeline({auth});
  if (!r.ok()) return r.status();
  if (r.value().front().kind == RedisReply::Kind::kError) {
    Close();
    return Status::Resource(endpoint.Text() + ": AUTH: " + r.value().front().text);
  }
  return Status::Ok();
}

Status RedisNode::IoError(const std::string& what) {
  std::string why = ctx_ != nullptr && ctx_->err != 0 ? ctx_->errstr : "connection lost";
  Close();
  return Status::Resource(endpoint_.Text() + ": " + what + ": " + why);
}

Expected<std::vector<RedisReply>> RedisNode::Pipeline(const std::vector<std::vector<std::string>>& commands) {
  if (ctx_ == nullptr) return Status::Resource(endpoint_.Text() + ": not connected");
  std::vector<const char*> args;
  std::vector<size_t> lens;
  for (const auto& argv : commands) {
    args.clear();
    lens.clear();
    for (const std::string& a : argv) {
      args.push_back(a.data());
      lens.push_back(a.size());
    }
    if (redisAppendCommandArgv(ctx_, static_cast<int>(args.size()), args.data(), lens.data()) != REDIS_OK)
      return IoError(commands.front()[0]);
  }
  std::vector<RedisReply> out;
  out.reserve(commands.size());
  for (size_t i = 0; i < commands.size(); ++i) {
    void* raw = nullptr;
    if (redisGetReply(ctx_, &raw) != REDIS_OK || raw == nullptr) return IoError(commands[i][0]);
    out.push_back(Convert(static_cast<redisReply*>(raw)));
    freeReplyObject(raw);
  }
  return out;
}

}  // namespace strata::agent
