// RedisConnection over hiredis (see redis_connection.h).
#include "agent/redis_connection.h"

#include <hiredis.h>

#include <cstdlib>

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

Expected<RedisAddress> ParseRedisUrl(const std::string& url) {
  constexpr std::string_view kScheme = "redis://";
  if (url.rfind(kScheme, 0) != 0) return Status::Error("--redis '" + url + "': expected redis://HOST:PORT");
  std::string rest = url.substr(kScheme.size());
  if (!rest.empty() && rest.back() == '/') rest.pop_back();
  RedisAddress a;
  const size_t colon = rest.rfind(':');
  a.host = rest.substr(0, colon);
  if (colon != std::string::npos) {
    const std::string port = rest.substr(colon + 1);
    char* end = nullptr;
    const long p = std::strtol(port.c_str(), &end, 10);
    if (port.empty() || *end != '\0' || p <= 0 || p > 65535)
      return Status::Error("--redis '" + url + "': port '" + port + "' is not a number in 1..65535");
    a.port = static_cast<int>(p);
  }
  if (a.host.empty()) return Status::Error("--redis '" + url + "': no host");
  return a;
}

RedisConnection::~RedisConnection() { Close(); }

void RedisConnection::Close() {
  if (ctx_ != nullptr) redisFree(ctx_);
  ctx_ = nullptr;
}

Status RedisConnection::Connect(const RedisAddress& address, double timeout_s) {
  Close();
  address_ = address;
  timeout_s_ = timeout_s;
  const timeval tv = ToTimeval(timeout_s);
  redisContext* c = redisConnectWithTimeout(address.host.c_str(), address.port, tv);
  if (c == nullptr) return Status::Error(address.Text() + ": cannot allocate a connection");
  if (c->err != 0) {
    std::string why = c->errstr;
    redisFree(c);
    return Status::Error(address.Text() + ": " + why);
  }
  redisSetTimeout(c, tv);
  ctx_ = c;
  return Status::Ok();
}

Status RedisConnection::IoError(const std::string& what) {
  std::string why = ctx_ != nullptr && ctx_->err != 0 ? ctx_->errstr : "connection lost";
  Close();
  return Status::Error(address_.Text() + ": " + what + ": " + why);
}

Expected<RedisReply> RedisConnection::Command(const std::vector<std::string>& argv) {
  auto replies = Pipeline({argv});
  if (!replies.ok()) return replies.status();
  RedisReply r = std::move(replies.value().front());
  if (r.kind == RedisReply::Kind::kError) return Status::Error(address_.Text() + ": " + argv[0] + ": " + r.text);
  return r;
}

Expected<std::vector<RedisReply>> RedisConnection::Pipeline(const std::vector<std::vector<std::string>>& commands) {
  if (ctx_ == nullptr) return Status::Error(address_.Text() + ": not connected");
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
