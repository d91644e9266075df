// RedisConnection: one server or a Redis Cluster (see redis_connection.h).
#include "agent/redis_connection.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <thread>

#include "agent/redis_slots.h"

namespace strata::agent {
namespace {

// HOST[:PORT] of a --redis URL or of a MOVED/ASK reply; an empty host is `fallback_host`.
Expected<RedisEndpoint> ParseEndpoint(const std::string& text, const std::string& fallback_host) {
  RedisEndpoint e;
  const size_t colon = text.rfind(':');
  e.host = text.substr(0, colon);
  if (e.host.empty()) e.host = fallback_host;
  if (colon != std::string::npos) {
    const std::string port = text.substr(colon + 1);
    char* end = nullptr;
    const long p = std::strtol(port.c_str(), &end, 10);
    if (port.empty() || *end != '\0' || p <= 0 || p > 65535)
      return Status::Usage("port '" + port + "' is not a number in 1..65535");
    e.port = static_cast<int>(p);
  }
  if (e.host.empty()) return Status::Usage("no host in '" + text + "'");
  return e;
}

// The URL with its password (if any) replaced by ***, for error messages.
std::string Masked(const std::string& url) {
  const size_t at = url.rfind('@');
  if (at == std::string::npos) return url;
  const size_t scheme = url.find("://");
  const size_t start = scheme == std::string::npos ? 0 : scheme + 3;
  const size_t colon = url.find(':', start);
  if (colon == std::string::npos || colon > at) return url;
  return url.substr(0, colon + 1) + "***" + url.substr(at);
}

// A MOVED or ASK error reply: "MOVED 3999 127.0.0.1:6381" (the host may be empty: the replying node's).
struct Redirect {
  bool ask = false;
  int slot = -1;
  RedisEndpoint to;
};
std::optional<Redirect> ParseRedirect(const RedisReply& r, const RedisEndpoint& from) {
  if (r.kind != RedisReply::Kind::kError) return std::nullopt;
  const bool moved = r.text.rfind("MOVED ", 0) == 0, ask = r.text.rfind("ASK ", 0) == 0;
  if (!moved && !ask) return std::nullopt;
  const size_t first = r.text.find(' '), second = r.text.find(' ', first + 1);
  if (second == std::string::npos) return std::nullopt;
  auto to = ParseEndpoint(r.text.substr(second + 1), from.host);
  if (!to.ok()) return std::nullopt;
  return Redirect{ask, std::atoi(r.text.c_str() + first + 1), to.value()};
}

// An error reply after which the same command is worth sending again once the map is re-read.
bool Transient(const RedisReply& r) {
  return r.kind == RedisReply::Kind::kError &&
         (r.text.rfind("TRYAGAIN", 0) == 0 || r.text.rfind("CLUSTERDOWN", 0) == 0);
}

constexpr std::string_view kNodeDownPrefix = "NODEDOWN ";

double MonotonicS() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

RedisReply NodeDownReply(const RedisEndpoint& node, const std::string& why) {
  return {RedisReply::Kind::kError, std::string(kNodeDownPrefix) + node.Text() + ": " + why, 0, {}};
}

}  // namespace

bool NodeDown(const RedisReply& reply) {
  return reply.kind == RedisReply::Kind::kError && reply.text.rfind(kNodeDownPrefix, 0) == 0;
}

bool NodeDown(const Status& status) {
  return !status.ok() && status.message().find(kNodeDownPrefix) != std::string::npos;
}

std::string RedisAddress::Text() const {
  std::string out = "redis://";
  if (!credentials.user.empty()) out += credentials.user + "@";
  for (size_t i = 0; i < seeds.size(); ++i) out += (i ? "," : "") + seeds[i].Text();
  return out;
}

Expected<RedisAddress> ParseRedisUrl(const std::string& url) {
  constexpr std::string_view kScheme = "redis://";
  const std::string shown = "--redis '" + Masked(url) + "'";
  if (url.rfind(kScheme, 0) != 0)
    return Status::Usage(shown + ": expected redis://[USER:PASSWORD@]HOST:PORT[,HOST:PORT...]");
  std::string rest = url.substr(kScheme.size());
  if (!rest.empty() && rest.back() == '/') rest.pop_back();
  RedisAddress a;
  const size_t at = rest.rfind('@');
  if (at != std::string::npos) {
    const std::string userinfo = rest.substr(0, at);
    const size_t colon = userinfo.find(':');
    if (colon == std::string::npos || colon + 1 == userinfo.size())
      return Status::Usage(shown + ": credentials must be USER:PASSWORD@ or :PASSWORD@");
    a.credentials = {userinfo.substr(0, colon), userinfo.substr(colon + 1)};
    rest = rest.substr(at + 1);
  }
  size_t from = 0;
  while (from <= rest.size()) {
    const size_t comma = std::min(rest.find(',', from), rest.size());
    auto seed = ParseEndpoint(rest.substr(from, comma - from), "");
    if (!seed.ok()) return seed.status().Reworded(shown + ": " + seed.error());
    a.seeds.push_back(seed.value());
    from = comma + 1;
  }
  return a;
}

void RedisConnection::Close() {
  nodes_.clear();
  down_until_.clear();
  masters_.clear();
  slot_owner_.clear();
  open_ = false;
  cluster_ = false;
}

RedisNode* RedisConnection::NodeAt(const RedisEndpoint& endpoint, Status* error) {
  std::unique_ptr<RedisNode>& node = nodes_[endpoint.Text()];
  if (node == nullptr) node = std::make_unique<RedisNode>();
  if (node->connected()) return node.get();
  *error = node->Connect(endpoint, address_.credentials, timeout_s_);
  return error->ok() ? node.get() : nullptr;
}

// CLUSTER SLOTS from `node`: each entry [first, last, [host, port, id...], replicas...]. An error reply is a
// server without cluster support (*is_cluster false).
Status RedisConnection::ReadSlots(RedisNode* node, bool* is_cluster) {
  auto r = node->Pipeline({{"CLUSTER", "SLOTS"}});
  if (!r.ok()) return r.status();
  const RedisReply& slots = r.value().front();
  *is_cluster = slots.kind != RedisReply::Kind::kError;
  if (!*is_cluster) return Status::Ok();
  masters_.clear();
  slot_owner_.assign(kRedisSlots, -1);
  for (const RedisReply& range : slots.elements) {
    if (range.elements.size() < 3 || range.elements[2].elements.size() < 2) continue;
    const RedisReply& master = range.elements[2];
    std::string host = master.elements[0].text;
    if (host.empty() || host == "?") host = node->endpoint().host;
    const int owner = MasterIndex({host, static_cast<int>(master.elements[1].integer)});
    const long long first = range.elements[0].integer, last = range.elements[1].integer;
    for (long long s = std::max(0LL, first); s <= last && s < kRedisSlots; ++s)
      slot_owner_[static_cast<size_t>(s)] = owner;
  }
  return Status::Ok();
}

Status RedisConnection::Connect(const RedisAddress& address, double timeout_s) {
  Close();
  address_ = address;
  timeout_s_ = timeout_s;
  std::string why;
  for (const RedisEndpoint& seed : address_.seeds) {
    Status st;
    RedisNode* node = NodeAt(seed, &st);
    bool is_cluster = false;
    if (node != nullptr) st = ReadSlots(node, &is_cluster);
    if (!st.ok()) {
      why += (why.empty() ? "" : "; ") + st.message();
      continue;
    }
    open_ = true;
    cluster_ = is_cluster;
    single_ = seed;
    return Status::Ok();
  }
  return Status::Resource(address_.Text() + ": " + (why.empty() ? "no seed node" : why));
}

// The map again, from the first known master or seed that answers.
Status RedisConnection::RefreshSlots() {
  std::vector<RedisEndpoint> candidates = masters_;
  candidates.insert(candidates.end(), address_.seeds.begin(), address_.seeds.end());
  Status last = Status::Resource(address_.Text() + ": no node to read the slot map from");
  for (const RedisEndpoint& e : candidates) {
    if (HeldDown(e)) continue;
    RedisNode* node = NodeAt(e, &last);
    bool is_cluster = false;
    if (node != nullptr) last = ReadSlots(node, &is_cluster);
    if (last.ok()) return last;
  }
  return last;
}

int RedisConnection::MasterIndex(const RedisEndpoint& endpoint) {
  for (size_t i = 0; i < masters_.size(); ++i)
    if (masters_[i] == endpoint) return static_cast<int>(i);
  masters_.push_back(endpoint);
  return static_cast<int>(masters_.size() - 1);
}

RedisEndpoint RedisConnection::OwnerOf(const std::vector<std::string>& argv) const {
  const auto key = CommandKey(argv);
  if (key && !slot_owner_.empty()) {
    const int owner = slot_owner_[static_cast<size_t>(KeySlot(*key))];
    if (owner >= 0) return masters_[static_cast<size_t>(owner)];
  }
  return masters_.empty() ? single_ : masters_.front();
}

Expected<RedisReply> RedisConnection::Command(const std::vector<std::string>& argv) {
  auto replies = Pipeline({argv});
  if (!replies.ok()) return replies.status();
  RedisReply r = std::move(replies.value().front());
  if (r.kind == RedisReply::Kind::kError) return Status::Resource(address_.Text() + ": " + argv[0] + ": " + r.text);
  return r;
}

Expected<std::vector<RedisReply>> RedisConnection::Pipeline(const std::vector<std::vector<std::string>>& commands) {
  if (!open_) return Status::Resource(address_.Text() + ": not connected");
  if (cluster_) return ClusterPipeline(commands);
  Status st;
  RedisNode* node = NodeAt(single_, &st);
  auto replies = node != nullptr ? node->Pipeline(commands) : Expected<std::vector<RedisReply>>(st);
  if (!replies.ok()) {
    Close();
    return replies.status().Reworded(address_.Text() + ": " + replies.error());
  }
  // A server taken for one plain Redis that answers MOVED is a cluster (its CLUSTER SLOTS failed at Connect):
  // route from here on, and send again only the commands it redirected.
  std::vector<size_t> moved;
  std::vector<std::vector<std::string>> again;
  for (size_t i = 0; i < replies.value().size(); ++i)
    if (ParseRedirect(replies.value()[i], single_)) {
      moved.push_back(i);
      again.push_back(commands[i]);
    }
  bool is_cluster = false;
  if (moved.empty() || !ReadSlots(node, &is_cluster).ok() || !is_cluster) return replies;
  cluster_ = true;
  auto rerouted = ClusterPipeline(again);
  if (!rerouted.ok()) return rerouted.status();
  for (size_t k = 0; k < moved.size(); ++k) replies.value()[moved[k]] = std::move(rerouted.value()[k]);
  return replies;
}

// One ClusterPipeline call's state: each command's reply once settled, the ones still to send.
struct RedisConnection::Batch {
  const std::vector<std::vector<std::string>>& commands;
  std::vector<RedisReply> out;
  std::vector<size_t> again;                    // to send in the next attempt
  bool reread_map = false;                      // a MOVED, an I/O error or a transient error: re-read the map first
  bool wait = false;                            // an I/O error or CLUSTERDOWN/TRYAGAIN: wait before the next attempt
  Status last;                                  // the last failure, for the error when attempts run out
  std::map<size_t, RedisEndpoint> unreachable;  // command -> the node its last attempt could not reach
  Status map = Status::Ok();                    // the last re-reading of the slot map
};

// Sends the commands `group` of the batch to `endpoint` in one round trip and settles their replies.
bool RedisConnection::SendGroup(const RedisEndpoint& endpoint, Batch* batch, const std::vector<size_t>& group) {
  std::vector<std::vector<std::string>> sent;
  for (size_t i : group) sent.push_back(batch->commands[i]);
  Status st;
  RedisNode* node = NodeAt(endpoint, &st);
  auto replies = node != nullptr ? node->Pipeline(sent) : Expected<std::vector<RedisReply>>(st);
  if (!replies.ok()) {
    batch->last = replies.status();
    batch->again.insert(batch->again.end(), group.begin(), group.end());
    for (size_t i : group) batch->unreachable[i] = endpoint;
    batch->reread_map = batch->wait = true;
    return false;
  }
  for (size_t i : group) batch->unreachable.erase(i);
  for (size_t k = 0; k < group.size(); ++k) Settle(batch, group[k], std::move(replies.value()[k]), endpoint);
  return true;
}

// A reply: kept, or (MOVED, TRYAGAIN, CLUSTERDOWN) the command is sent again, or (ASK) sent once to the
// node named after ASKING.
void RedisConnection::Settle(Batch* batch, size_t i, RedisReply reply, const RedisEndpoint& from) {
  const auto redirect = ParseRedirect(reply, from);
  if (Transient(reply) || (redirect && !redirect->ask)) {
    if (redirect && redirect->slot >= 0 && redirect->slot < kRedisSlots && !slot_owner_.empty()) {
      slot_owner_[static_cast<size_t>(redirect->slot)] = MasterIndex(redirect->to);
    }
    batch->last = Status::Resource(from.Text() + ": " + batch->commands[i][0] + ": " + reply.text);
    batch->again.push_back(i);
    batch->reread_map = true;
    batch->wait = batch->wait || Transient(reply);
    return;
  }
  if (redirect) {
    Status st;
    RedisNode* node = NodeAt(redirect->to, &st);
    auto asked =
        node != nullptr ? node->Pipeline({{"ASKING"}, batch->commands[i]}) : Expected<std::vector<RedisReply>>(st);
    if (!asked.ok()) {
      batch->last = asked.status();
      batch->again.push_back(i);
      batch->reread_map = batch->wait = true;
      return;
    }
    reply = std::move(asked.value().back());
  }
  batch->out[i] = std::move(reply);
}

bool RedisConnection::HeldDown(const RedisEndpoint& endpoint) const {
  const auto it = down_until_.find(endpoint.Text());
  return it != down_until_.end() && MonotonicS() < it->second;
}

// The batch's end: the commands in `failed` (past their attempts) answered NODEDOWN and their unreachable nodes
// held down; when no node could give the slot map at the last attempt (the whole cluster unreachable) the
// connection closes and the batch fails whole.
Expected<std::vector<RedisReply>> RedisConnection::Finish(Batch* batch, const std::vector<size_t>& failed) {
  if (!failed.empty() && !batch->map.ok()) {
    Close();
    return batch->last.Reworded(address_.Text() + ": " + batch->last.message() + " (after " +
                                std::to_string(kRedisAttempts) + " attempts)");
  }
  for (size_t i : failed) {
    const auto node = batch->unreachable.find(i);
    const RedisEndpoint owner = node != batch->unreachable.end() ? node->second : OwnerOf(batch->commands[i]);
    if (node != batch->unreachable.end()) down_until_[owner.Text()] = MonotonicS() + kNodeDownHoldS;
    batch->out[i] =
        NodeDownReply(owner, batch->last.message() + " (after " + std::to_string(kRedisAttempts) + " attempts)");
  }
  return std::move(batch->out);
}

Expected<std::vector<RedisReply>> RedisConnection::ClusterPipeline(
    const std::vector<std::vector<std::string>>& commands) {
  Batch batch{commands, std::vector<RedisReply>(commands.size()), {}, false, false, Status::Ok(), {}, Status::Ok()};
  std::vector<size_t> todo;  // the commands of a node held down are answered NODEDOWN unsent
  for (size_t i = 0; i < commands.size(); ++i) {
    const RedisEndpoint owner = OwnerOf(commands[i]);
    if (HeldDown(owner))
      batch.out[i] = NodeDownReply(owner, "failed lately, left alone for a second");
    else
      todo.push_back(i);
  }
  for (int attempt = 0; attempt < kRedisAttempts && !todo.empty(); ++attempt) {
    if (batch.wait) std::this_thread::sleep_for(std::chrono::milliseconds(100 * attempt));
    // On failure the old map stays and the attempt that follows fails with its own error (batch.last, what the
    // caller is told); the map's status only tells Finish whether any node answered at all.
    if (batch.reread_map) batch.map = RefreshSlots();
    batch.reread_map = batch.wait = false;
    std::map<std::string, std::pair<RedisEndpoint, std::vector<size_t>>> groups;  // node -> its commands
    for (size_t i : todo) {
      const RedisEndpoint owner = OwnerOf(commands[i]);
      auto& group = groups[owner.Text()];
      group.first = owner;
      group.second.push_back(i);
    }
    batch.again.clear();
    for (const auto& [name, group] : groups) SendGroup(group.first, &batch, group.second);
    todo = batch.again;
  }
  return Finish(&batch, todo);
}

}  // namespace strata::agent
