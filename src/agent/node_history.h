// NodeHistory: what `strata serve` remembers across jobs about each node (host): the jobs its ranks ran in,
// first-seen order, and in which of them one of its ranks was named by the online detector (rank slot and
// cause). A node named in most of its recent jobs is a suspect machine (thresholds.h: kSuspectNode*): a
// bad GPU, a throttled host or a flaky link slows whichever job lands there, and no single job's diagnosis
// can tell the machine from the job. Bounded: the last kNodeHistoryJobs jobs per node.
// Each node's record is one JSON value (ToJson / FromJson), kept in Redis by the serve loop so a restarted
// serve keeps what it knew (key strata:node:{HOST}, its members in the set strata:nodes).
// Invariants: a job counts once per node; a (rank, cause) naming counts once per job; a naming of a job the
// node was never seen in is ignored (the rank's host is learned from the job's own summaries).
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <deque>
#include <map>
#include <string>
#include <vector>

#include "core/status.h"

namespace strata::agent {

/// One job of a node: when the node was first seen in it and the ranks of the node named in it, with cause.
struct NodeJob {
  std::string job;
  double first_seen = 0;  // Unix seconds
  std::vector<std::pair<int32_t, std::string>> named;
};

struct NodeRecord {
  std::string host;
  std::deque<NodeJob> jobs;  // oldest first, at most kNodeHistoryJobs

  /// Of the last `recent` jobs: how many, and in how many a rank of the node was named.
  std::pair<size_t, size_t> RecentJobs(size_t recent) const;
  bool Suspect() const;
  nlohmann::json ToJson() const;
  static Expected<NodeRecord> FromJson(const nlohmann::json& j);
};

class NodeHistory {
 public:
  /// Rank `rank` of `job` runs on `host`. Returns true when the node's record changed (a job new to it).
  bool SeeRank(const std::string& host, const std::string& job, int32_t rank, double now_unix);
  /// Rank `rank` of `job` was named with `cause`; the node is the one SeeRank placed it on. Returns the
  /// host whose record changed, "" when none did (unknown rank, or already named so).
  std::string Named(const std::string& job, int32_t rank, const std::string& cause);
  /// A record read back (a restarted serve); replaces what was known of that host.
  void Restore(NodeRecord record);
  const std::map<std::string, NodeRecord>& nodes() const { return nodes_; }

 private:
  std::map<std::string, NodeRecord> nodes_;
  std::map<std::pair<std::string, int32_t>, std::string> host_of_;  // (job, rank) -> host
};

}  // namespace strata::agent
