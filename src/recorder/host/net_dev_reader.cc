// Per-namespace network interface counters (see net_dev_reader.h).
#include "recorder/host/net_dev_reader.h"

#include <sys/stat.h>

#include <algorithm>
#include <array>
#include <unordered_set>

namespace strata::recorder {
namespace {

std::optional<uint64_t> NamespaceInode(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) return std::nullopt;
  return static_cast<uint64_t>(st.st_ino);
}

// Columns after "iface:": rx bytes packets errs drop fifo frame compressed multicast, then tx bytes
// packets errs drop fifo colls carrier compressed.
struct NetDevColumn {
  size_t index;
  const char* name;
  const char* unit;
};
constexpr std::array<NetDevColumn, 8> kNetDevColumns = {{
    {0, "net.rx_bytes", "bytes"},
    {1, "net.rx_packets", "packets"},
    {2, "net.rx_errs", "packets"},
    {3, "net.rx_drop", "packets"},
    {8, "net.tx_bytes", "bytes"},
    {9, "net.tx_packets", "packets"},
    {10, "net.tx_errs", "packets"},
    {11, "net.tx_drop", "packets"},
}};

}  // namespace

void NetDevReader::ReadNetDev(const std::string& path, int32_t pid, CounterSink& sink, bool bytes_only) {
  interfaces_.clear();
  if (!sink.Read(&file_, path, /*warn_if_missing=*/pid == -1)) return;
  ForEachLine(file_.text(), [&](std::string_view line) {
    const size_t colon = line.find(':');
    if (colon == std::string_view::npos) return;  // the two header lines
    const std::string_view name = Trim(line.substr(0, colon));
    if (name.empty() || name.find('|') != std::string_view::npos) return;
    if (SplitFields(line.substr(colon + 1), &fields_) < 16) return sink.Malformed(path, "short interface line");
    interfaces_.emplace_back(name);
    std::array<uint64_t, kNetDevColumns.size()> values{};
    for (size_t c = 0; c < kNetDevColumns.size(); ++c) {
      const auto v = ParseU64(fields_[kNetDevColumns[c].index]);
      if (!v) return sink.Malformed(path, "non-numeric counter");
      values[c] = *v;
    }
    for (size_t c = 0; c < kNetDevColumns.size(); ++c) {
      if (bytes_only && std::string_view(kNetDevColumns[c].unit) != "bytes") continue;
      sink.Emit({.name = kNetDevColumns[c].name,
                 .pid = pid,
                 .label = name,
                 .unit = kNetDevColumns[c].unit,
                 .cumulative = true},
                static_cast<double>(values[c]));
    }
  });
}

void NetDevReader::SampleBytes(CounterSink& sink) {
  for (const auto& [pid, path] : read_last_) ReadNetDev(path, pid, sink, /*bytes_only=*/true);
}

void NetDevReader::Sample(const std::vector<int>& pids, CounterSink& sink) {
  LinkReader* const links = links_.get();
  read_last_.clear();
  read_last_.emplace_back(-1, proc_root_ + "/net/dev");
  const auto own = NamespaceInode(proc_root_ + "/self/ns/net");
  ReadNetDev(proc_root_ + "/net/dev", -1, sink);
  std::vector<uint64_t> sampled;
  if (links && own) {
    links->Sample(*own, -1, interfaces_, sink);
    sampled.push_back(*own);
  }

  // Namespace of each traced pid; a pid whose namespace cannot be seen (gone, no permission) is skipped.
  std::vector<std::pair<int, uint64_t>> found;
  for (const int pid : pids) {
    const auto inode = NamespaceInode(proc_root_ + "/" + std::to_string(pid) + "/ns/net");
    if (!inode) continue;
    found.emplace_back(pid, *inode);
    sink.Emit({.name = "net.ns_inode", .pid = pid, .unit = "inode"}, static_cast<double>(*inode));
  }
  std::unordered_set<uint64_t> done;
  for (const auto& [pid, inode] : found) {
    if ((own && inode == *own) || !done.insert(inode).second) continue;
    // Keep the namespace's pid while it is still traced and alive, so that its series stay the same.
    auto [it, inserted] = representative_.try_emplace(inode, pid);
    const int current = it->second;
    const uint64_t ns = inode;  // a structured binding cannot be captured before C++20 support in clang 16
    const bool alive = std::any_of(found.begin(), found.end(),
                                   [&](const auto& entry) { return entry.first == current && entry.second == ns; });
    if (!alive) it->second = pid;
    read_last_.emplace_back(it->second, proc_root_ + "/" + std::to_string(it->second) + "/net/dev");
    ReadNetDev(read_last_.back().second, it->second, sink);
    if (links) {
      links->Sample(inode, it->second, interfaces_, sink);
      sampled.push_back(inode);
    }
  }
  if (links) links->Retain(sampled);
}

}  // namespace strata::recorder
