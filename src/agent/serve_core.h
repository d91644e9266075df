// ServeCore: the work of `strata serve` without its loop and HTTP: reads every job's step summaries from
// Redis (serve_consumer.h), takes each into that job's OnlineJob (ranks of all nodes aligned by job and
// rank, steps by each rank's own sequence), acknowledges them, and renders the same status and metrics as
// the agent. Findings agents publish are counted (serve runs its own detection over the whole job).
// Invariants: an entry is acknowledged only after it was taken in; a (rank, step) re-delivered after a
// crash is a duplicate in its OnlineJob and is not counted twice; a malformed entry is counted and
// acknowledged (it would never decode).
#pragma once

#include <map>
#include <string>

#include "agent/online_job.h"
#include "agent/serve_consumer.h"
#include "agent/status_render.h"

namespace strata::agent {

class ServeCore {
 public:
  ServeCore(RedisAddress address, ConsumerOptions consumer, OnlineJobOptions online = {});

  /// One poll: discover jobs, read (waiting up to `block_ms`), take in, acknowledge, judge ready steps.
  /// Returns the entries taken in.
  Expected<size_t> Poll(int block_ms, double now_unix);
  AgentSnapshot Snapshot(double now_unix) const;
  const ConsumerCounters& counters() const { return counters_; }
  const std::map<std::string, OnlineJob>& jobs() const { return jobs_; }

 private:
  void TakeIn(const StreamEntry& e);

  StreamConsumer consumer_;
  OnlineJobOptions online_options_;
  std::map<std::string, OnlineJob> jobs_;
  ConsumerCounters counters_;
};

}  // namespace strata::agent
