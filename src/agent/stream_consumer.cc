// StreamConsumer (see stream_consumer.h).
#include "agent/stream_consumer.h"

#include "agent/redis_slots.h"

#include <algorithm>
#include <chrono>
#include <thread>

namespace strata::agent {
namespace {

// One stream entry reply: [id, [field, value, ...]] (a deleted entry has a nil field list).
bool ParseEntry(const RedisReply& r, const std::string& job, StreamEntry* out) {
  if (r.kind != RedisReply::Kind::kArray || r.elements.size() != 2) return false;
  out->job = job;
  out->id = r.elements[0].text;
  out->fields.clear();
  const RedisReply& kv = r.elements[1];
  for (size_t i = 0; i + 1 < kv.elements.size(); i += 2)
    out->fields.emplace_back(kv.elements[i].text, kv.elements[i + 1].text);
  return true;
}

std::string JobOfKey(const std::string& key) {
  const size_t open = key.find('{'), close = key.find('}');
  return open == std::string::npos || close == std::string::npos ? key : key.substr(open + 1, close - open - 1);
}

}  // namespace

StreamConsumer::StreamConsumer(RedisAddress address, ConsumerOptions options)
    : address_(std::move(address)), options_(std::move(options)) {}

Status StreamConsumer::EnsureConnected() {
  if (conn_.connected()) return Status::Ok();
  Status st = conn_.Connect(address_, options_.timeout_s);
  if (!st.ok()) return st;
  // A new connection: re-read own pending entries and claim idle ones again (a restarted Redis or serve).
  for (auto& [job, cursor] : jobs_) cursor = JobCursor{};
  return Status::Ok();
}

Status StreamConsumer::Discover() {
  if (Status st = EnsureConnected(); !st.ok()) return st;
  auto members = conn_.Command({"SMEMBERS", kJobSetKey});
  if (!members.ok() && NodeDown(members.status()) && !jobs_.empty()) {  // the jobs known so far go on
    unreachable_.Note(members.error());
    return Status::Ok();
  }
  if (!members.ok()) return members.status();
  for (const RedisReply& m : members.value().elements) {
    if (jobs_.count(m.text)) continue;
    auto created = conn_.Command({"XGROUP", "CREATE", StepsStreamKey(m.text), options_.group, "0", "MKSTREAM"});
    if (!created.ok() && NodeDown(created.status())) {  // found again at the next call
      unreachable_.Note(created.error());
      continue;
    }
    if (!created.ok() && created.error().find("BUSYGROUP") == std::string::npos) return created.status();
    jobs_[m.text] = JobCursor{};
  }
  return Status::Ok();
}

Status StreamConsumer::Claim(const std::string& job, JobCursor* cursor, std::vector<StreamEntry>* out) {
  // XAUTOCLAIM pages with a cursor; "0-0" back means the whole pending list was scanned.
  std::string from = "0-0";
  const auto idle_ms = cursor->claim_all ? "0" : std::to_string(static_cast<long long>(options_.claim_idle_s * 1000));
  do {
    auto r = conn_.Command({"XAUTOCLAIM", StepsStreamKey(job), options_.group, options_.consumer, idle_ms, from,
                            "COUNT", std::to_string(options_.batch)});
    if (!r.ok()) return r.status();
    if (r.value().elements.size() < 2) return Status::Resource(address_.Text() + ": XAUTOCLAIM: unexpected reply");
    from = r.value().elements[0].text;
    for (const RedisReply& e : r.value().elements[1].elements) {
      StreamEntry entry;
      if (!ParseEntry(e, job, &entry)) continue;
      entry.reclaimed = true;
      out->push_back(std::move(entry));
    }
  } while (from != "0-0");
  cursor->claimed = true;
  return Status::Ok();
}

Expected<std::vector<StreamEntry>> StreamConsumer::Read(int block_ms) {
  // A read that only found pending lists drained goes on at once with new entries.
  for (int attempt = 0;; ++attempt) {
    bool draining = false;
    for (const auto& [job, cursor] : jobs_) draining = draining || (Readable(job) && !cursor.pending_from.empty());
    auto out = ReadOnce(block_ms);
    if (!out.ok() || !out.value().empty() || !draining || attempt > 0) return out;
  }
}

Expected<std::vector<StreamEntry>> StreamConsumer::ReadOnce(int block_ms) {
  if (Status st = EnsureConnected(); !st.ok()) return st;
  std::vector<StreamEntry> out;
  std::vector<std::string> keys, ids;
  bool draining = false;
  for (auto& [job, cursor] : jobs_) {
    if (!Readable(job)) continue;
    if (!cursor.claimed) {
      Status st = Claim(job, &cursor, &out);
      if (NodeDown(st)) {  // its node is down: the job waits, the others are read
        unreachable_.Note(st.message());
        continue;
      }
      if (!st.ok()) return st;
    }
    keys.push_back(StepsStreamKey(job));
    ids.push_back(cursor.pending_from.empty() ? ">" : cursor.pending_from);
    draining = draining || !cursor.pending_from.empty();
  }
  if (keys.empty()) {  // no job yet: wait as a blocking read would, so the caller's loop does not spin
    std::this_thread::sleep_for(std::chrono::milliseconds(block_ms));
    return out;
  }
  if (!out.empty()) return out;
  std::set<std::string> unread;  // streams on a node that was down
  auto replies = ReadGroup(keys, ids, draining ? 0 : block_ms, &unread);
  if (!replies.ok()) return replies.status();
  std::map<std::string, size_t> got;  // job -> entries in this reply
  for (const RedisReply& reply : replies.value())
    for (const RedisReply& stream : reply.elements) {
      if (stream.elements.size() != 2) continue;
      const std::string job = JobOfKey(stream.elements[0].text);
      auto cursor = jobs_.find(job);
      if (cursor == jobs_.end()) continue;
      const bool pending = !cursor->second.pending_from.empty();
      for (const RedisReply& e : stream.elements[1].elements) {
        StreamEntry entry;
        if (!ParseEntry(e, job, &entry)) continue;
        entry.reclaimed = pending;
        if (pending) cursor->second.pending_from = entry.id;
        ++got[job];
        out.push_back(std::move(entry));
      }
    }
  // A job whose pending read came back empty has been drained: from now on it reads new entries.
  for (auto& [job, cursor] : jobs_)
    if (Readable(job) && !cursor.pending_from.empty() && got[job] == 0 && !unread.count(StepsStreamKey(job)))
      cursor.pending_from.clear();
  return out;
}

// XREADGROUP of `keys` from `ids`, waiting up to `block_ms` (0: no wait) when nothing is there. On one
// server it is one command over all the streams; on a cluster, where one command may name the keys of one
// slot only, one command per slot, none blocking (a node would hold the others up), pipelined per node, and a
// wait of at most 50 ms when none had anything, so that a new entry waits at most that long. The streams of a
// node that was down are put in `unread` (their slot's reply is left empty).
Expected<std::vector<RedisReply>> StreamConsumer::ReadGroup(const std::vector<std::string>& keys,
                                                            const std::vector<std::string>& ids, int block_ms,
                                                            std::set<std::string>* unread) {
  const std::vector<std::string> head = {"XREADGROUP",      "GROUP", options_.group,
                                         options_.consumer, "COUNT", std::to_string(options_.batch)};
  std::map<int, std::pair<std::vector<std::string>, std::vector<std::string>>> by_slot;  // slot -> keys, ids
  for (size_t i = 0; i < keys.size(); ++i) {
    auto& slot = by_slot[conn_.cluster() ? KeySlot(keys[i]) : 0];
    slot.first.push_back(keys[i]);
    slot.second.push_back(ids[i]);
  }
  const bool one = by_slot.size() == 1;
  std::vector<std::vector<std::string>> commands;
  for (const auto& [slot, streams] : by_slot) {
    std::vector<std::string> argv = head;
    if (one && block_ms > 0) argv.insert(argv.end(), {"BLOCK", std::to_string(block_ms)});
    argv.push_back("STREAMS");
    argv.insert(argv.end(), streams.first.begin(), streams.first.end());
    argv.insert(argv.end(), streams.second.begin(), streams.second.end());
    commands.push_back(std::move(argv));
  }
  auto replies = conn_.Pipeline(commands);
  if (!replies.ok()) return replies.status();
  bool any = false;
  size_t k = 0;
  for (auto slot = by_slot.begin(); slot != by_slot.end(); ++slot, ++k) {
    RedisReply& r = replies.value()[k];
    if (NodeDown(r)) {
      unreachable_.Note(r.text);
      unread->insert(slot->second.first.begin(), slot->second.first.end());
      r = RedisReply{};
      continue;
    }
    if (r.kind == RedisReply::Kind::kError) return Status::Resource(address_.Text() + ": XREADGROUP: " + r.text);
    any = any || !r.elements.empty();
  }
  if (!one && !any && block_ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(std::min(block_ms, 50)));
  return replies;
}

Expected<std::vector<StreamEntry>> StreamConsumer::Replay(const std::string& job, const std::string& from) {
  if (Status st = EnsureConnected(); !st.ok()) return st;
  std::vector<StreamEntry> out;
  std::string start = from;
  for (;;) {
    auto r = conn_.Command({"XRANGE", StepsStreamKey(job), start, "+", "COUNT", std::to_string(options_.batch)});
    if (!r.ok()) return r.status();
    for (const RedisReply& e : r.value().elements) {
      StreamEntry entry;
      if (!ParseEntry(e, job, &entry)) continue;
      entry.replayed = true;
      out.push_back(std::move(entry));
    }
    if (r.value().elements.size() < options_.batch || out.empty()) return out;
    start = "(" + out.back().id;
  }
}

std::vector<std::string> StreamConsumer::job_names() const {
  std::vector<std::string> names;
  for (const auto& [job, cursor] : jobs_) names.push_back(job);
  return names;
}

Status StreamConsumer::Request(const std::string& job, const StreamFields& fields) {
  if (Status st = EnsureConnected(); !st.ok()) return st;
  std::vector<std::string> argv = {"XADD", RequestsStreamKey(job), "MAXLEN", "~", "1000", "*"};
  for (const auto& [k, v] : fields) {
    argv.push_back(k);
    argv.push_back(v);
  }
  auto r = conn_.Command(argv);
  return r.ok() ? Status::Ok() : r.status();
}

Expected<size_t> StreamConsumer::Ack(const std::vector<StreamEntry>& entries) {
  std::map<std::string, std::vector<std::string>> by_job;
  for (const StreamEntry& e : entries) by_job[e.job].push_back(e.id);
  std::vector<std::vector<std::string>> commands;
  for (const auto& [job, ids] : by_job) {
    std::vector<std::string> argv = {"XACK", StepsStreamKey(job), options_.group};
    argv.insert(argv.end(), ids.begin(), ids.end());
    commands.push_back(std::move(argv));
  }
  if (commands.empty()) return size_t{0};
  auto replies = conn_.Pipeline(commands);
  if (!replies.ok()) return replies.status();
  size_t acked = 0;
  for (const RedisReply& r : replies.value()) {
    if (NodeDown(r)) {  // left pending: delivered again, and counted once, when the node is back
      unreachable_.Note(r.text);
      continue;
    }
    if (r.kind == RedisReply::Kind::kError) return Status::Resource(address_.Text() + ": XACK: " + r.text);
    acked += static_cast<size_t>(r.integer);
  }
  return acked;
}

}  // namespace strata::agent
