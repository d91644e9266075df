// StreamConsumer: how `strata serve` reads every job's steps stream through one Redis consumer group
// (XREADGROUP, XACK). Jobs are found in the job set (stream_codec.h); each new job's group is created at
// the stream's start (XGROUP CREATE ... 0 MKSTREAM). After a (re)start a job is first drained of this
// consumer's own pending entries (read from id 0, delivered before but never acknowledged) and of entries
// pending on other consumers idle for `claim_idle_s` (XAUTOCLAIM), then reads new entries (id >).
// With leases (job_lease.h), Read is limited to the jobs this serve owns (SetReadable), and a job taken over
// is first replayed from its judged record's resume point (Replay: XRANGE, outside the group).
// On a cluster a node that cannot be reached (redis_connection.h NodeDown) costs only its own jobs: they are not
// read, claimed or acknowledged this time (counted in unreachable()), the other nodes' jobs are.
// Invariants: an entry is acknowledged only by Ack, after the caller has taken it in, so a crash between
// reading and acknowledging re-delivers it and never loses it; entries are returned per job in stream order.
#pragma once

#include <map>
#include <set>
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
  bool replayed = false;   // read by Replay (outside the group: never acknowledged)
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
  /// Limits Read to these jobs (all discovered jobs until called).
  void SetReadable(std::set<std::string> jobs) { readable_ = std::move(jobs), limited_ = true; }
  /// Every entry of `job`'s stream from `from` (an XRANGE start: an id, `(ID` for past it, or `-`), in
  /// pages of `batch`.
  Expected<std::vector<StreamEntry>> Replay(const std::string& job, const std::string& from);
  /// `job` re-reads this consumer's pending entries and claims every other consumer's at its next Read (a job
  /// taken over: they were its earlier owners').
  void Rewind(const std::string& job) {
    if (jobs_.count(job)) jobs_[job] = JobCursor{.claim_all = true};
  }
  /// The jobs discovered so far.
  std::vector<std::string> job_names() const;
  /// Appends `fields` to job `job`'s requests stream (capped at about 1,000 entries).
  Status Request(const std::string& job, const StreamFields& fields);
  size_t jobs() const { return jobs_.size(); }
  /// Commands skipped because their node was down (the jobs on it wait for the next read).
  const NodeDownTally& unreachable() const { return unreachable_; }

 private:
  struct JobCursor {
    std::string pending_from = "0";  // reading this consumer's pending entries from here; "" once drained
    bool claimed = false;            // XAUTOCLAIM done since (re)connecting
    bool claim_all = false;          // the next XAUTOCLAIM takes every pending entry (a job taken over)
  };
  Status EnsureConnected();
  Expected<std::vector<StreamEntry>> ReadOnce(int block_ms);
  Status Claim(const std::string& job, JobCursor* cursor, std::vector<StreamEntry>* out);
  Expected<std::vector<RedisReply>> ReadGroup(const std::vector<std::string>& keys, const std::vector<std::string>& ids,
                                              int block_ms, std::set<std::string>* unread);

  RedisAddress address_;
  ConsumerOptions options_;
  RedisConnection conn_;
  std::map<std::string, JobCursor> jobs_;
  std::set<std::string> readable_;
  bool limited_ = false;
  NodeDownTally unreachable_;
  bool Readable(const std::string& job) const { return !limited_ || readable_.count(job) > 0; }
};

}  // namespace strata::agent
