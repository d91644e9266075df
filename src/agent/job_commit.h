// JobCommit: what the serve owning a job has judged of it, kept in Redis beside the job's stream so that the
// serve taking the job over (job_lease.h) resumes where the last owner stopped. It is a hash in the job's own
// slot, `strata:job:{JOB}:judged`: `owner` (the serve that wrote it), `steps_judged` (steps judged by all the
// job's owners so far), `summaries_judged` (the summaries in those steps), `resume_from` (an XRANGE start: the
// oldest step-summary entry taken in but not yet in a judged step, or `(ID` just past the last entry taken in
// when every one was), `judged_start` (the wall-clock start, Unix seconds, of the last step judged; absent in
// records written before it existed), `job_step` (that step's number in the job's numbering, which every owner
// seeded from the record continues), one `rank:R` field per rank: R's own step number (its agent's count, not
// serve's renumbering) of the last step judged, and one `offset:R` per rank: job step − R's own step, the
// anchoring that lines R's steps up with the other nodes' (the next owner starts from it instead of anchoring
// every rank anew by extrapolating from the nearest start it knows, which a step's jitter can put one step off;
// `job_step` and `offset:R` are absent in records written before 2026-12-04).
// Invariants: the record is written only under the job's lease (the fenced script in job_lease.cc); a summary
// of rank R at or below `rank:R`, or of any rank starting before half a step past `judged_start`, was judged by
// an earlier owner (with R, or with R as a gap) and is never judged again; decoding never trusts the hash: a
// malformed field is an error naming it.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "agent/redis_node.h"
#include "core/status.h"

namespace strata::agent {

struct JobCommit {
  std::string owner;
  uint64_t steps_judged = 0;
  uint64_t summaries_judged = 0;
  std::string resume_from = "-";          // XRANGE start ("-": the stream's beginning)
  double judged_start = 0;                // start of the last judged step (Unix s); 0: not known
  std::map<int32_t, int64_t> judged_own;  // rank -> its own step number of the last judged step
  int64_t job_step = -1;                  // the job's number of the last judged step; -1: not known
  std::map<int32_t, int64_t> offset;      // rank -> job step − its own step (its anchoring)
};

std::string JudgedKey(const std::string& job);
/// The record as HSET's field/value words.
std::vector<std::string> EncodeCommit(const JobCommit& c);
/// From HGETALL's reply; an empty hash is "no record" (nullopt-like: ok with `found` false).
Expected<JobCommit> DecodeCommit(const RedisReply& hgetall, bool* found);

/// A stream entry id (MS-SEQ) as a pair that orders as Redis orders ids; {0, 0} for a malformed one.
std::pair<uint64_t, uint64_t> StreamIdOrder(const std::string& id);

}  // namespace strata::agent
