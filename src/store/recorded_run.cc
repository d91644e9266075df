// A recording's index: its segments' clocks and ranks, and the NCCL plugin's segments folded in (see recorded_run.h).
#include "store/recorded_run.h"

#include <algorithm>
#include <set>

namespace strata {

std::map<std::pair<uint32_t, uint64_t>, int32_t> RecordedSegment::PythonStackOfSamples() const {
  std::map<std::pair<uint32_t, uint64_t>, int32_t> out;
  for (const auto& p : data.py_samples) out[{p.tid, p.ts_ns}] = p.py_stack;
  return out;
}

std::optional<int> RecordedSegment::RankOf(uint32_t pid) const {
  auto it = processes.find(static_cast<int>(pid));
  return it == processes.end() ? std::nullopt : it->second.rank;
}

std::optional<int64_t> RecordedSegment::ExitedUnixNs(const RecordedProcess& p) const {
  return p.exited_ns != 0 ? std::optional<int64_t>(UnixNs(p.exited_ns)) : std::nullopt;
}

double RecordedSegment::SinceUnixS(const RecordedThreadState& t) const {
  return t.since_ns != 0 ? static_cast<double>(UnixNs(t.since_ns)) / 1e9 : 0;
}

int64_t RecordedSegment::UnixNs(uint64_t mono_ns) const {
  constexpr int64_t kMax = int64_t{1} << 62;
  int64_t out = 0;
  if (mono_ns > static_cast<uint64_t>(kMax) ||
      __builtin_add_overflow(static_cast<int64_t>(mono_ns), data.header.realtime_minus_monotonic_ns, &out))
    return kMax;
  return std::clamp<int64_t>(out, 0, kMax);
}

uint64_t RecordedSegment::MonoNs(int64_t unix_ns) const {
  int64_t mono = 0;
  if (__builtin_sub_overflow(unix_ns, data.header.realtime_minus_monotonic_ns, &mono) || mono < 0) return 0;
  return static_cast<uint64_t>(mono);
}

std::optional<int> RecordedRun::RankOfPid(int64_t pid) const {
  if (pid <= 0 || pid > UINT32_MAX) return std::nullopt;
  std::optional<int> found;
  for (const RecordedSegment& seg : segments) {
    const std::optional<int> rank = seg.RankOf(static_cast<uint32_t>(pid));
    if (!rank) continue;
    if (found && *found != *rank) return std::nullopt;
    found = rank;
  }
  return found;
}

std::optional<int> TakeRootAsRankZero(RecordedSegment* seg) {
  std::optional<int> root;
  for (const auto& [pid, p] : seg->processes) {
    if (p.rank) return std::nullopt;
    if (seg->processes.count(p.ppid)) continue;
    if (root) return std::nullopt;  // two trees: which one is the job is not ours to guess
    root = pid;
  }
  if (!root) return std::nullopt;
  for (auto& [pid, p] : seg->processes) {
    std::set<int> seen;
    int at = pid;
    while (at != *root && seen.insert(at).second) {
      auto it = seg->processes.find(at);
      if (it == seg->processes.end()) break;
      at = it->second.ppid;
    }
    if (at == *root) p.rank = 0;
  }
  return root;
}

void MergePluginSegments(RecordedRun* run) {
  std::vector<RecordedSegment> kept;
  std::vector<RecordedSegment> plugins;
  for (RecordedSegment& seg : run->segments) (seg.source == "nccl_profiler" ? plugins : kept).push_back(std::move(seg));
  for (RecordedSegment& plugin : plugins) {
    RecordedSegment* home = nullptr;
    for (RecordedSegment& seg : kept) {
      if (seg.source != "strata record") continue;
      if (!seg.host.empty() && !plugin.host.empty() && seg.host != plugin.host) continue;
      for (const auto& [pid, p] : plugin.processes)
        if (seg.processes.count(pid)) home = &seg;
      if (home) break;
    }
    if (home == nullptr) {
      kept.push_back(std::move(plugin));
      continue;
    }
    // The plugin's probes, each the same as one already in the segment or appended.
    std::vector<uint32_t> remap(plugin.probes.size());
    for (size_t i = 0; i < plugin.probes.size(); ++i) {
      const RecordedProbe& p = plugin.probes[i];
      auto same = std::find_if(home->probes.begin(), home->probes.end(), [&](const RecordedProbe& q) {
        return q.symbol == p.symbol && q.op == p.op && q.kind == p.kind && q.library == p.library;
      });
      if (same == home->probes.end()) same = home->probes.insert(home->probes.end(), p);
      remap[i] = static_cast<uint32_t>(same - home->probes.begin());
    }
    for (CallRow row : plugin.data.calls) {
      row.probe = row.probe < remap.size() ? remap[row.probe] : UINT32_MAX;  // unknown stays unknown
      home->data.calls.push_back(row);
    }
    for (CallEnterRow row : plugin.data.call_enters) {
      row.probe = row.probe < remap.size() ? remap[row.probe] : UINT32_MAX;
      home->data.call_enters.push_back(row);
    }
    for (const RecordedCommunicator& c : plugin.communicators) home->communicators.push_back(c);
    home->alive_ns = std::max(home->alive_ns, plugin.alive_ns);
    for (const auto& [pid, p] : plugin.processes) {
      RecordedProcess& slot = home->processes[pid];
      if (!slot.rank) slot.rank = p.rank;
    }
    for (const std::string& problem : plugin.data.problems) home->notes.push_back(plugin.data.path + ": " + problem);
  }
  run->segments = std::move(kept);
}

}  // namespace strata
