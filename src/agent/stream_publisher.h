// StreamPublisher: how an agent sends step summaries and findings to Redis (`--redis`). Entries are queued
// in a bounded buffer and sent by Flush, one pipelined XADD per entry with `MAXLEN ~ maxlen` so every
// stream stays capped; a job's id is added to the job set once per connection. When Redis cannot be
// reached the agent keeps running: entries wait in the buffer, the oldest are dropped (and counted) past
// `buffer_max`, and the connection is retried with exponential backoff (`backoff_min_s` doubling to
// `backoff_max_s`).
// Invariants: buffered + published + dropped == enqueued; an entry leaves the buffer only once Redis
// acknowledged its XADD (an entry whose reply was lost may be sent twice; readers dedupe by (rank, step)).
#pragma once

#include <cstdint>
#include <deque>
#include <set>
#include <string>

#include "agent/redis_connection.h"
#include "agent/stream_codec.h"

namespace strata::agent {

struct PublisherOptions {
  size_t buffer_max = 10000;   // entries kept while Redis is unreachable
  size_t maxlen = 100000;      // approximate cap of each job's stream (XADD MAXLEN ~)
  double timeout_s = 0.5;      // connect and command timeout
  double backoff_min_s = 0.5;  // first retry delay after a failure
  double backoff_max_s = 30;   // longest retry delay
};

struct PublisherCounters {
  uint64_t enqueued = 0, published = 0, dropped = 0, connects = 0, failures = 0;
  size_t buffered = 0;
  bool connected = false;
  std::string last_error;
};

class StreamPublisher {
 public:
  StreamPublisher(RedisAddress address, PublisherOptions options);

  /// Queues one entry for job `job`'s steps stream (drops the oldest when the buffer is full).
  void Enqueue(const std::string& job, StreamFields fields);
  /// Sends what is buffered if connected or a retry is due at monotonic time `now_s`; never blocks longer
  /// than about timeout_s per attempt.
  void Flush(double now_s);
  const PublisherCounters& counters() const { return counters_; }

 private:
  struct Entry {
    std::string job;
    StreamFields fields;
  };
  bool EnsureConnected(double now_s);
  void Failed(const Status& why, double now_s);

  RedisAddress address_;
  PublisherOptions options_;
  RedisConnection conn_;
  std::deque<Entry> buffer_;
  std::set<std::string> announced_;  // jobs added to the job set on this connection
  double retry_at_ = 0, backoff_s_ = 0;
  PublisherCounters counters_;
};

}  // namespace strata::agent
