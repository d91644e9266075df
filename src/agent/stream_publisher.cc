// StreamPublisher (see stream_publisher.h).
#include "agent/stream_publisher.h"

#include <algorithm>

namespace strata::agent {

StreamPublisher::StreamPublisher(RedisAddress address, PublisherOptions options)
    : address_(std::move(address)), options_(options) {}

void StreamPublisher::Enqueue(const std::string& job, StreamFields fields) {
  ++counters_.enqueued;
  buffer_.push_back({job, std::move(fields)});
  while (buffer_.size() > options_.buffer_max) {
    buffer_.pop_front();
    ++counters_.dropped;
  }
  counters_.buffered = buffer_.size();
}

void StreamPublisher::Failed(const Status& why, double now_s) {
  ++counters_.failures;
  counters_.last_error = why.message();
  counters_.connected = false;
  conn_.Close();
  announced_.clear();
  backoff_s_ = backoff_s_ == 0 ? options_.backoff_min_s : std::min(backoff_s_ * 2, options_.backoff_max_s);
  retry_at_ = now_s + backoff_s_;
}

bool StreamPublisher::EnsureConnected(double now_s) {
  if (conn_.connected()) return true;
  if (now_s < retry_at_) return false;
  Status st = conn_.Connect(address_, options_.timeout_s);
  if (!st.ok()) {
    Failed(st, now_s);
    return false;
  }
  ++counters_.connects;
  counters_.connected = true;
  return true;
}

void StreamPublisher::Flush(double now_s) {
  constexpr size_t kBatch = 512;
  while (!buffer_.empty() && EnsureConnected(now_s)) {
    const size_t n = std::min(kBatch, buffer_.size());
    std::vector<std::vector<std::string>> commands;
    std::vector<size_t> entry_of;  // command index -> buffer index, or SIZE_MAX for SADD
    for (size_t i = 0; i < n; ++i) {
      const Entry& e = buffer_[i];
      if (!announced_.count(e.job)) {
        commands.push_back({"SADD", kJobSetKey, e.job});
        entry_of.push_back(SIZE_MAX);
        announced_.insert(e.job);
      }
      std::vector<std::string> argv = {"XADD", StepsStreamKey(e.job),           "MAXLEN",
                                       "~",    std::to_string(options_.maxlen), "*"};
      for (const auto& [k, v] : e.fields) {
        argv.push_back(k);
        argv.push_back(v);
      }
      commands.push_back(std::move(argv));
      entry_of.push_back(i);
    }
    auto replies = conn_.Pipeline(commands);
    if (!replies.ok()) {
      Failed(replies.status(), now_s);
      break;
    }
    // Entries are acknowledged in order; the first error reply stops the batch there.
    size_t sent = 0;
    std::string error;
    for (size_t c = 0; c < replies.value().size(); ++c) {
      if (replies.value()[c].kind == RedisReply::Kind::kError) {
        error = replies.value()[c].text;
        break;
      }
      if (entry_of[c] != SIZE_MAX) sent = entry_of[c] + 1;
    }
    buffer_.erase(buffer_.begin(), buffer_.begin() + static_cast<std::ptrdiff_t>(sent));
    counters_.published += sent;
    if (!error.empty()) {
      Failed(Status::Resource(address_.Text() + ": XADD: " + error), now_s);
      break;
    }
    backoff_s_ = 0;
  }
  counters_.buffered = buffer_.size();
}

}  // namespace strata::agent
