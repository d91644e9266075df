// Per-namespace link capacity and root-qdisc statistics (see link_reader.h).
#include "recorder/host/link_reader.h"

#include <fcntl.h>
#include <libmnl/libmnl.h>
#include <linux/ethtool.h>
#include <linux/gen_stats.h>
#include <linux/pkt_sched.h>
#include <linux/rtnetlink.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <set>
#include <thread>

namespace strata::recorder {
namespace {

// Attributes of one netlink attribute table, by type (those above `max` are ignored).
struct AttrTable {
  explicit AttrTable(uint16_t max) : slots(max + 1u, nullptr) {}
  std::vector<const nlattr*> slots;
  const nlattr* operator[](uint16_t type) const { return type < slots.size() ? slots[type] : nullptr; }
};

int CollectAttr(const nlattr* attr, void* data) {
  auto* table = static_cast<AttrTable*>(data);
  const uint16_t type = mnl_attr_get_type(attr);
  if (type < table->slots.size()) table->slots[type] = attr;
  return MNL_CB_OK;
}

template <typename T>
const T* PayloadAs(const nlattr* attr) {
  if (!attr || mnl_attr_get_payload_len(attr) < sizeof(T)) return nullptr;
  return static_cast<const T*>(mnl_attr_get_payload(attr));
}

int OnQdisc(const nlmsghdr* message, void* data) {
  if (auto q = ParseQdiscMessage(message, message->nlmsg_len))
    static_cast<std::vector<RootQdisc>*>(data)->push_back(*q);
  return MNL_CB_OK;
}

}  // namespace

std::optional<RootQdisc> ParseQdiscMessage(const void* message, size_t length) {
  if (length < sizeof(nlmsghdr)) return std::nullopt;
  const auto* nlh = static_cast<const nlmsghdr*>(message);
  if (!mnl_nlmsg_ok(nlh, static_cast<int>(std::min<size_t>(length, INT32_MAX))) || nlh->nlmsg_type != RTM_NEWQDISC ||
      mnl_nlmsg_get_payload_len(nlh) < sizeof(tcmsg))
    return std::nullopt;
  const auto* tcm = static_cast<const tcmsg*>(mnl_nlmsg_get_payload(nlh));
  if (tcm->tcm_parent != TC_H_ROOT) return std::nullopt;
  AttrTable top(TCA_MAX);
  if (mnl_attr_parse(nlh, sizeof(tcmsg), CollectAttr, &top) != MNL_CB_OK) return std::nullopt;
  RootQdisc q;
  q.ifindex = tcm->tcm_ifindex;
  // Every qdisc has a kind; without one the attributes did not parse (libmnl stops at a bad length).
  const nlattr* kind = top[TCA_KIND];
  if (!kind || mnl_attr_validate(kind, MNL_TYPE_NUL_STRING) < 0) return std::nullopt;
  q.kind = mnl_attr_get_str(kind);
  if (q.kind == "tbf" && top[TCA_OPTIONS]) {
    AttrTable tbf(TCA_TBF_MAX);
    if (mnl_attr_parse_nested(top[TCA_OPTIONS], CollectAttr, &tbf) != MNL_CB_OK) return std::nullopt;
    if (const auto* rate64 = PayloadAs<uint64_t>(tbf[TCA_TBF_RATE64])) {
      q.rate_bps = 8.0 * static_cast<double>(*rate64);
    } else if (const auto* parms = PayloadAs<tc_tbf_qopt>(tbf[TCA_TBF_PARMS])) {
      if (parms->rate.rate > 0) q.rate_bps = 8.0 * parms->rate.rate;
    }
  }
  if (top[TCA_STATS2]) {
    AttrTable stats(TCA_STATS_MAX);
    if (mnl_attr_parse_nested(top[TCA_STATS2], CollectAttr, &stats) == MNL_CB_OK) {
      if (const auto* queue = PayloadAs<gnet_stats_queue>(stats[TCA_STATS_QUEUE])) {
        q.backlog_bytes = queue->backlog;
        q.drops = queue->drops;
        q.overlimits = queue->overlimits;
        q.has_stats = true;
      }
    }
  }
  if (!q.has_stats) {
    if (const auto* old = PayloadAs<tc_stats>(top[TCA_STATS])) {
      q.backlog_bytes = old->backlog;
      q.drops = old->drops;
      q.overlimits = old->overlimits;
      q.has_stats = true;
    }
  }
  return q;
}

struct LinkReader::Sockets {
  mnl_socket* netlink = nullptr;
  int ioctl_fd = -1;
  unsigned seq = 0;
  std::vector<char> buffer = std::vector<char>(64 * 1024);
  ~Sockets() {
    if (netlink) mnl_socket_close(netlink);
    if (ioctl_fd >= 0) ::close(ioctl_fd);
  }
  // Called in the namespace to read: the sockets stay bound to it. Empty string when both are open.
  std::string Make() {
    netlink = mnl_socket_open2(NETLINK_ROUTE, SOCK_CLOEXEC);
    if (!netlink) return std::string("netlink socket: ") + std::strerror(errno);
    if (mnl_socket_bind(netlink, 0, MNL_SOCKET_AUTOPID) < 0)
      return std::string("netlink bind: ") + std::strerror(errno);
    // A dump always ends; the timeout only guards the sampler against a kernel that does not answer.
    timeval timeout{.tv_sec = 0, .tv_usec = 200000};
    ::setsockopt(mnl_socket_get_fd(netlink), SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
    ioctl_fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (ioctl_fd < 0) return std::string("ioctl socket: ") + std::strerror(errno);
    return {};
  }
  // Every root qdisc of the namespace; false when the dump failed.
  bool DumpRootQdiscs(std::vector<RootQdisc>* out) {
    nlmsghdr* request = mnl_nlmsg_put_header(buffer.data());
    request->nlmsg_type = RTM_GETQDISC;
    request->nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
    request->nlmsg_seq = ++seq;
    auto* tcm = static_cast<tcmsg*>(mnl_nlmsg_put_extra_header(request, sizeof(tcmsg)));
    tcm->tcm_family = AF_UNSPEC;
    if (mnl_socket_sendto(netlink, request, request->nlmsg_len) < 0) return false;
    const unsigned portid = mnl_socket_get_portid(netlink);
    for (;;) {
      const ssize_t n = mnl_socket_recvfrom(netlink, buffer.data(), buffer.size());
      if (n <= 0) return false;
      const int status = mnl_cb_run(buffer.data(), static_cast<size_t>(n), seq, portid, OnQdisc, out);
      if (status == MNL_CB_STOP) return true;
      if (status < 0) return false;
    }
  }
  std::string InterfaceName(int32_t ifindex) const {
    ifreq ifr{};
    ifr.ifr_ifindex = ifindex;
    if (::ioctl(ioctl_fd, SIOCGIFNAME, &ifr) != 0) return {};
    return std::string(ifr.ifr_name, strnlen(ifr.ifr_name, IFNAMSIZ));
  }
  // The negotiated link speed in bits/s, when the driver reports one.
  std::optional<double> LinkSpeed(const std::string& name) const {
    ethtool_cmd command{};
    command.cmd = ETHTOOL_GSET;
    ifreq ifr{};
    std::memcpy(ifr.ifr_name, name.data(), std::min(name.size(), static_cast<size_t>(IFNAMSIZ - 1)));
    ifr.ifr_data = reinterpret_cast<char*>(&command);
    if (::ioctl(ioctl_fd, SIOCETHTOOL, &ifr) != 0) return std::nullopt;
    const uint32_t mbit = ethtool_cmd_speed(&command);
    if (mbit == 0 || mbit == static_cast<uint32_t>(SPEED_UNKNOWN)) return std::nullopt;
    return 1e6 * mbit;
  }
};

LinkReader::LinkReader(std::string proc_root) : proc_root_(std::move(proc_root)) {}
LinkReader::~LinkReader() = default;

LinkReader::Sockets* LinkReader::Open(uint64_t inode, int32_t pid, CounterSink& sink) {
  if (auto it = sockets_.find(inode); it != sockets_.end()) return it->second.get();
  auto sockets = std::make_unique<Sockets>();
  std::string error;
  if (pid == -1) {
    error = sockets->Make();
  } else {
    const std::string path = proc_root_ + "/" + std::to_string(pid) + "/ns/net";
    const int ns = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (ns < 0 && (errno == ENOENT || errno == ESRCH)) {
      // The process left between the namespace's discovery and this open: the namespace is not unreadable.
      // Nothing is cached, so the next sample tries again through another of its processes (a lab rank's
      // short-lived helper was that process once, and its slowed link went unread for the whole job).
      return nullptr;
    }
    if (ns < 0) {
      error = path + ": " + std::strerror(errno);
    } else {
      // setns(2) moves only the calling thread: a thread of its own enters, makes the sockets and ends.
      std::thread enter([&] {
        if (::setns(ns, CLONE_NEWNET) != 0)
          error = "entering " + path + ": " + std::strerror(errno);
        else
          error = sockets->Make();
      });
      enter.join();
      ::close(ns);
    }
  }
  if (!error.empty()) {
    sink.diag().WarnOnce("link:" + std::to_string(inode),
                         "link capacity and queue statistics not read for a network namespace: " + error);
    sockets_[inode] = nullptr;  // not tried again while the namespace is sampled
    return nullptr;
  }
  return (sockets_[inode] = std::move(sockets)).get();
}

void LinkReader::Sample(uint64_t inode, int32_t pid, const std::vector<std::string>& interfaces, CounterSink& sink) {
  Sockets* sockets = Open(inode, pid, sink);
  if (!sockets) return;
  std::vector<RootQdisc> dumped;
  if (!sockets->DumpRootQdiscs(&dumped)) {
    ++sink.diag().stats.files_unreadable;
    sink.diag().WarnOnce("link-dump:" + std::to_string(inode),
                         std::string("the qdisc dump of a network namespace failed: ") + std::strerror(errno));
    dumped.clear();
  }
  std::map<std::string, RootQdisc> qdiscs;  // by interface name
  for (const RootQdisc& q : dumped) qdiscs[sockets->InterfaceName(q.ifindex)] = q;
  for (const std::string& name : interfaces) {
    if (name.empty() || name == "lo") continue;
    auto q = qdiscs.find(name);
    std::optional<double> capacity = sockets->LinkSpeed(name);
    if (q != qdiscs.end() && q->second.rate_bps)
      capacity = capacity ? std::min(*capacity, *q->second.rate_bps) : *q->second.rate_bps;
    if (capacity) sink.Emit({.name = "net.link_capacity_bps", .pid = pid, .label = name, .unit = "bits/s"}, *capacity);
    if (q == qdiscs.end() || !q->second.has_stats) continue;
    const RootQdisc& qd = q->second;
    sink.Emit({.name = "net.qdisc.backlog_bytes", .pid = pid, .label = name, .unit = "bytes"},
              static_cast<double>(qd.backlog_bytes));
    sink.Emit({.name = "net.qdisc.drops", .pid = pid, .label = name, .unit = "packets", .cumulative = true},
              static_cast<double>(qd.drops));
    sink.Emit({.name = "net.qdisc.overlimits", .pid = pid, .label = name, .unit = "events", .cumulative = true},
              static_cast<double>(qd.overlimits));
  }
}

void LinkReader::Retain(const std::vector<uint64_t>& inodes) {
  const std::set<uint64_t> keep(inodes.begin(), inodes.end());
  std::erase_if(sockets_, [&](const auto& entry) { return !keep.count(entry.first); });
}

}  // namespace strata::recorder
