// StreamConsumer: how `strata serve` reads every job's steps stream through one Redis consumer group
// (XREADGROUP, XACK). Jobs are found in the job set (stream_codec.h); each new job's group is created at
// the stream's start (XGROUP CREATE ... 0 MKSTREAM). After a (re)start a job is first drained of this
// consumer's own pending entries (read from id 0, delivered before but never acknowledged) and of entries
// pending on other consumers idle for `claim_idle_s` (XAUTOCLAIM), then reads new entries (id >).
// Invariants: an entry is acknowledged only by Ack, after the caller has taken it in, so a crash between
// reading and acknowledging re-delivers it and never loses it; entries are returned per job in stream order.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "agent/redis_connection.h"
#include "agent/stream_codec.h"

namespace strata::agent {

struct ConsumerOptions {
  std::string group = "strata-serve";
  std::string consumer = "serve";  // a restarted serve must reuse its name to re-read its pending entries
  size_t batch = 2000;             // entries per read per stream
  double claim_idle_s = 60;        // take over other consumers' entries pending this long
  double timeout_s = 2.0;
};

struct StreamEntry {
  std::string job, id;
  StreamFields fields;
  bool reclaimed = false;  // delivered before (pending) or claimed from another consumer
};

class StreamConsumer {
 public:
  StreamConsumer(RedisAddress address, ConsumerOptions options);

  /// Connects if needed and picks up jobs added to the job set since the last call.
  Status Discover();
  /// Reads up to `batch` entries per job, waiting up to `block_ms` when there is nothing new.
  Expected<std::vector<StreamEntry>> Read(int block_ms);
  /// Acknowledges entries taken in; returns how many Redis acknowledged.
  Expected<size_t> Ack(const std::vector<StreamEntry>& entries);
  /// Appends `fields` to job `job`'s requests stream (capped at about 1,000 entries).
  Status Request(const std::string& job, const StreamFields& fields);
  size_t jobs() const { return jobs_.size(); }

 private:
  struct JobCursor {
    std::string pending_from = "0";  // reading this consumer's pending entries from here; "" once drained
    bool claimed = false;            // XAUTOCLAIM done since (re)connecting
  };
  Status EnsureConnected();
  Expected<std::vector<StreamEntry>> ReadOnce(int block_ms);
  Status Claim(const std::string& job, JobCursor* cursor, std::vector<StreamEntry>* out);
  Expected<std::vector<RedisReply>> ReadGroup(const std::vector<std::string>& keys, const std::vector<std::string>& ids,
                                              int block_ms);

  RedisAddress address_;
  ConsumerOptions options_;
  RedisConnection conn_;
  std::map<std::string, JobCursor> jobs_;
};

}  // namespace strata::agent
