// Discovery: finds the training processes on this node by themselves, as `strata agent` watches them: a
// process belongs to a job when its environment names a rank (RANK, SLURM_PROCID, OMPI_COMM_WORLD_RANK,
// PMI_RANK); the job is named by TORCHELASTIC_RUN_ID, else SLURM_JOB_ID, else MASTER_ADDR:MASTER_PORT,
// else "local". Children that inherit the environment (DataLoader workers) belong to their rank's job.
// With OnlyNetworkNamespace, processes in other network namespaces are not this agent's (one agent per
// container, or per emulated node on one host); that is checked on every scan, not cached.
// Invariants: a scan reads each new process's environment once (cached by pid and start time, so a reused
// pid is read again); processes that cannot be read (another user's, gone) are skipped, never fatal.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <utility>

namespace strata::agent {

struct DiscoveredJob {
  std::map<int, int> rank_of_pid;  // pid -> rank (every process of the job with a rank in its environment)
};

class Discovery {
 public:
  explicit Discovery(std::string proc_root = "/proc") : proc_root_(std::move(proc_root)) {}
  /// The jobs running now, by job id.
  std::map<std::string, DiscoveredJob> Scan();
  /// From now on, only processes whose network namespace is `inode` (stat of /proc/PID/ns/net).
  void OnlyNetworkNamespace(uint64_t inode) { netns_ = inode; }

 private:
  struct Seen {
    uint64_t start_time = 0;
    std::string job;  // empty: not a training process
    int rank = -1;
  };
  std::string proc_root_;
  std::map<int, Seen> seen_;
  uint64_t netns_ = 0;  // 0: any
};

/// The inode of the network namespace of `pid` under `proc_root` ("self" for this process), 0 when unreadable.
uint64_t NetworkNamespaceOf(const std::string& proc_root, const std::string& pid);

/// The job id from a NUL-separated environment block (see above); empty when it names no rank.
std::string JobIdOf(const std::string& environ);

}  // namespace strata::agent
