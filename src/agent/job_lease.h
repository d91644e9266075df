// JobLeases: which serve judges which job when several `strata serve` share the jobs (issue 49 item 2). Each
// job has a lease, `strata:job:{JOB}:lease`, in the job's own slot: a string whose value is the owning serve's
// name (its --consumer) that expires `lease_s` after it was last set. A serve reads every job's owner, takes a
// free lease with SET NX PX, and renews a lease it holds with a script that extends it only when the value is
// still its name; the same script writes the job's judged record (job_commit.h), so a serve that lost the lease
// can neither renew it nor overwrite the new owner's record. Stopping, a serve deletes the leases it holds
// (again only where the value is its name), so another takes its jobs at once; a serve that dies stops
// renewing and its leases expire, so another takes them within `lease_s` plus one check (lease_s / 4).
// A serve judges a job only while it is sure it holds the lease: within 3/4 of `lease_s` of the start of its
// last successful renewal, so no other serve can have taken it since (clocks' rates assumed within 25%).
// A job whose slot's node is down (redis_connection.h NodeDown) is left as it was at this check (not taken, its
// renewal not written: counted in unreachable()); the other jobs' leases go on.
// Invariants: at most one serve holds a job's lease at a time (Redis's SET NX on one key); a serve's name is
// the lease's value, so a serve restarted under the same name gets its leases back at once (and resumes from
// the judged record like any new owner); serves sharing a group need distinct names.
#pragma once

#include <chrono>
#include <map>
#include <string>
#include <vector>

#include "agent/job_commit.h"
#include "agent/redis_connection.h"

namespace strata::agent {

struct LeaseOptions {
  std::string owner;     // this serve's name, the leases' value (serve uses its consumer name when empty)
  double lease_s = 3.0;  // a lease not renewed for this long expires
};

std::string LeaseKey(const std::string& job);

class JobLeases {
 public:
  using Clock = std::chrono::steady_clock;
  /// A job this serve just took: the lease was free, or held under its name by an earlier process.
  struct Taken {
    std::string job;
    JobCommit commit;  // the judged record (default when none)
    bool had_record = false;
  };

  explicit JobLeases(LeaseOptions options) : options_(std::move(options)) {}

  /// Every lease_s / 4 (or when `jobs` names a job not seen before): reads every job's owner, takes the free
  /// leases and reads their judged records; a job held here that another serve now owns is dropped (lost).
  Expected<std::vector<Taken>> Refresh(RedisConnection* conn, const std::vector<std::string>& jobs);
  /// Renews `job`'s lease and writes `c` in one fenced script; false, and the job dropped, when the lease is
  /// no longer this serve's.
  Expected<bool> Commit(RedisConnection* conn, const std::string& job, const JobCommit& c);
  /// Deletes the leases held here (each only if still this serve's); none is held afterwards.
  Status ReleaseAll(RedisConnection* conn);

  /// This serve holds `job`'s lease (judging it may still wait for a renewal: Mine).
  bool Holds(const std::string& job) const { return held_.count(job) > 0; }
  /// This serve holds `job`'s lease and renewed it recently enough to judge it now.
  bool Mine(const std::string& job) const;
  /// A renewal is due for `job` (a quarter of lease_s since the last one).
  bool RenewDue(const std::string& job) const;
  /// Jobs held whose renewals failed past the point where judging is safe: dropped, returned (lost).
  std::vector<std::string> Expire();

  const std::string& owner() const { return options_.owner; }
  /// Each job's owner as last read ("" when its lease was free).
  const std::map<std::string, std::string>& owners() const { return owners_; }
  uint64_t taken() const { return taken_; }
  uint64_t lost() const { return lost_; }
  size_t held() const { return held_.size(); }
  /// Commands skipped because their job's node was down.
  const NodeDownTally& unreachable() const { return unreachable_; }

 private:
  Status ReadOwners(RedisConnection* conn, const std::vector<std::string>& jobs, std::vector<std::string>* read);
  Expected<bool> Take(RedisConnection* conn, const std::string& job, const std::string& owner);
  Expected<Taken> ReadRecord(RedisConnection* conn, const std::string& job);
  double SafeS() const { return options_.lease_s * 0.75; }

  LeaseOptions options_;
  std::map<std::string, Clock::time_point> held_;  // job -> start of its last successful renewal
  std::map<std::string, std::string> owners_;
  Clock::time_point checked_{};
  uint64_t taken_ = 0, lost_ = 0;
  NodeDownTally unreachable_;
};

}  // namespace strata::agent
