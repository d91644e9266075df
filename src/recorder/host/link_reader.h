// Link capacity and egress-queue statistics, per network namespace: for every interface but loopback,
// the rate it can carry (the smaller of its ethtool link speed and the rate of a token-bucket root qdisc
// shaping it) and its root qdisc's queue counters, read over rtnetlink (libmnl) and SIOCETHTOOL from
// sockets opened inside the namespace. With the interface's byte counters (NetDevReader) this gives how
// long its link was busy: a rank on a slower link is busy longer for the same collective.
// Series (label = interface): net.link_capacity_bps (gauge, bits/s; only when known), and for a root qdisc
// net.qdisc.backlog_bytes (gauge), net.qdisc.{drops,overlimits} (cumulative).
// Invariants: the sampler's own thread never changes namespace (sockets for another namespace are made
// on a short-lived thread that enters it with setns(2) and are then used from here); a namespace that
// cannot be entered or read is warned once and skipped, but one whose process left before it was entered is
// tried again at the next sample (through whichever of its processes the caller names then); sockets of
// namespaces no longer sampled are closed.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "recorder/host/counter_sink.h"

namespace strata::recorder {

/// What one RTM_NEWQDISC message says about a root qdisc.
struct RootQdisc {
  int32_t ifindex = 0;
  std::string kind;                // "tbf", "fq_codel", "noqueue"...
  std::optional<double> rate_bps;  // shaping rate in bits/s (tbf)
  uint64_t backlog_bytes = 0, drops = 0, overlimits = 0;
  bool has_stats = false;
};

/// Parses one netlink message of a qdisc dump; nullopt when it is not a root qdisc or does not parse.
std::optional<RootQdisc> ParseQdiscMessage(const void* message, size_t length);

class LinkReader {
 public:
  explicit LinkReader(std::string proc_root);
  ~LinkReader();
  LinkReader(const LinkReader&) = delete;
  LinkReader& operator=(const LinkReader&) = delete;

  /// Reads the links of the namespace `inode` (the recorder's own when pid == -1, else the one that
  /// /proc/PID/ns/net names), for each of its `interfaces` (as /proc/PID/net/dev lists them; loopback is
  /// skipped). Series carry `pid`.
  void Sample(uint64_t inode, int32_t pid, const std::vector<std::string>& interfaces, CounterSink& sink);
  /// Closes the sockets of namespaces not in `inodes`.
  void Retain(const std::vector<uint64_t>& inodes);

 private:
  struct Sockets;
  Sockets* Open(uint64_t inode, int32_t pid, CounterSink& sink);

  std::string proc_root_;
  std::map<uint64_t, std::unique_ptr<Sockets>> sockets_;  // by namespace inode
};

}  // namespace strata::recorder
