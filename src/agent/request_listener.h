// RequestListener: how an agent with `--redis` hears `strata serve` ask for its flight-recorder window
// (stream_codec.h, `strata:job:{JOB}:requests`). Every agent reads every request of its jobs (plain XREAD,
// no group: each node answers for its own ranks); a job's first poll starts at the stream's end, so old
// requests are not answered again after a restart. Polls never block; after a failure the connection is
// retried with backoff like the publisher's.
// Invariants: each request is returned once per agent run; a failed poll returns an error and no request.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "agent/redis_connection.h"
#include "agent/stream_codec.h"

namespace strata::agent {

class RequestListener {
 public:
  RequestListener(RedisAddress address, double timeout_s) : address_(std::move(address)), timeout_s_(timeout_s) {}
  /// Requests added to job `job`'s stream since the last poll (monotonic now `now_s` for the backoff).
  Expected<std::vector<WindowRequest>> Poll(const std::string& job, double now_s);

 private:
  Status Connected(double now_s);

  RedisAddress address_;
  double timeout_s_;
  RedisConnection conn_;
  std::map<std::string, std::string> last_id_;  // by job
  double retry_at_ = 0, backoff_s_ = 0;
};

}  // namespace strata::agent
