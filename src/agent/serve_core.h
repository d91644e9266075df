// ServeCore: the work of `strata serve` without its loop and HTTP: reads every job's step summaries from
// Redis (stream_consumer.h), takes each into that job's OnlineJob (ranks of all nodes aligned by job and
// rank, steps by each rank's own sequence), acknowledges them, and renders the same status and metrics as
// the agent. Findings agents publish are counted (serve runs its own detection over the whole job). When a
// detection opens, serve asks for the flight-recorder windows of the suspect and a few peers (a request on
// the job's requests stream); the agents holding those ranks answer with their window diagnosis's findings
// (`window_finding` entries), shown among the job's findings with source "window". Each rank's latest in-flight
// state (`inflight` entries, one per rank per agent round) is judged with the stall rule across nodes
// (diagnosis::JudgeInflight): a rank on one node missing from a collective ranks on another node wait in is
// named with where its agent saw it (findings with cause hang, open from when first judged).
// Across jobs, serve remembers which node each rank ran on and which jobs named one of a node's ranks
// (node_history.h), kept in Redis (strata:node:{HOST}, members in strata:nodes) and read back at start.
// Several serves share the jobs (issue 49 item 2): each judges only the jobs whose lease it holds
// (job_lease.h), reads only their streams, and commits with each renewal what it has judged (job_commit.h);
// a job it takes over (free, or its owner's lease expired) starts from that record (job_resume.h): the
// entries from the record's resume point are replayed, summaries the earlier owner judged are skipped. Jobs
// owned by other serves are listed with their owner only. A lease that lapsed here (renewals late) keeps the
// job's state, neither read nor judged, until another serve owns the job (then dropped) or this one takes the
// lease back with the record as it wrote it last (then judging goes on from that state). On a Redis Cluster a
// dead master costs only the jobs on it (redis_connection.h NodeDown): they are neither read nor renewed while
// it is down (counted `unreachable`), the other masters' jobs are read, judged and renewed as before.
// Invariants: a job is judged only while this serve holds its lease (JobLeases::Mine); a step judged and
// committed by one owner is judged by no other; an entry is acknowledged only after it was taken in; a (rank, step)
// re-delivered after a crash is a duplicate in its OnlineJob and is not counted twice; a malformed entry is counted and
// acknowledged (it would never decode).
#pragma once

#include <map>
#include <string>

#include <set>

#include "agent/job_lease.h"
#include "agent/job_resume.h"
#include "agent/node_history.h"
#include "agent/online_job.h"
#include "agent/redis_connection.h"
#include "agent/status_render.h"
#include "agent/stream_consumer.h"

namespace strata::agent {

class ServeCore {
 public:
  ServeCore(RedisAddress address, ConsumerOptions consumer, OnlineJobOptions online = {}, LeaseOptions lease = {});

  /// One poll: discover jobs, read (waiting up to `block_ms`), take in, acknowledge, judge ready steps.
  /// Returns the entries taken in.
  Expected<size_t> Poll(int block_ms, double now_unix);
  AgentSnapshot Snapshot(double now_unix) const;
  /// Commits what was judged and gives up the leases (a serve that stops: another takes its jobs at once).
  Status Release();
  const ConsumerCounters& counters() const { return counters_; }
  const std::map<std::string, OnlineJob>& jobs() const { return jobs_; }

 private:
  void TakeIn(const StreamEntry& e, double now_unix);
  void TakeSummary(const StreamEntry& e, const online::RankStepSummary& s, double now_unix);
  Status Leases(double now_unix);
  Status TakeOver(const JobLeases::Taken& t, double now_unix);
  Status CommitJudged(bool all);
  void Drop(const std::string& job);
  Status LoadNodes();
  Status SaveNodes();
  void TakeWindowFinding(const std::string& job, const WindowFinding& w);
  void ExpireWindowFindings(double now_unix);
  void JudgeStalls(double now_unix);

  StreamConsumer consumer_;
  OnlineJobOptions online_options_;
  std::map<std::string, OnlineJob> jobs_;
  JobLeases leases_;
  std::map<std::string, JobResume> resume_;    // by job owned
  std::set<std::string> judged_now_;           // jobs that judged steps since their last commit
  std::map<std::string, uint64_t> committed_;  // by job: steps_judged of the last record this serve wrote
  std::map<std::string, std::vector<OpenFinding>> window_findings_;   // agents' answers, by job
  std::map<std::string, std::map<int32_t, InflightEntry>> inflight_;  // each rank's latest in-flight state, by job
  std::map<std::string, std::vector<OpenFinding>> stall_findings_;    // hangs judged across nodes, by job
  // A judgment not yet reported: its missing ranks and since when they have been the same (kInflightConfirmS).
  struct PendingStall {
    std::vector<int32_t> missing;
    double since = 0;
  };
  std::map<std::string, PendingStall> pending_stalls_;
  bool Confirmed(const std::string& job, const std::vector<diagnosis::Finding>& judged, double now_unix);
  ConsumerCounters counters_;
  RedisAddress address_;
  RedisConnection memory_;  // the node records (its own connection: the consumer's blocks on reads)
  NodeHistory history_;
  std::set<std::string> unsaved_;  // hosts whose record changed since it was last written
  NodeDownTally unreachable_;      // renewals, requests and records skipped: their node was down
  void TallyUnreachable();
  bool loaded_ = false;
};

/// Seconds an agent's window finding stays in serve's status after the last answer that found it: twice the
/// agents' default window (--window-s 15), so an answer is seen by a few polls of the status, and a fault that
/// ended leaves it within that.
constexpr double kWindowFindingShownS = 30.0;

/// What serve asks the agents for when `d` opens: the suspect's and up to three peers' windows.
WindowRequest RequestFor(const OnlineJob& job, const online::Detection& d, double now_unix);

}  // namespace strata::agent
