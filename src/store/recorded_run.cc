// Indexing of recorder segments (see recorded_run.h).
#include "store/recorded_run.h"

#include "segments/segment_tables.h"
#include "store/stack_index.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>

#include <set>

namespace strata {

namespace {

template <typename T>
T Field(const nlohmann::json& j, const char* key, T fallback) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return fallback;
  try {
    return it->get<T>();
  } catch (const nlohmann::json::exception&) {
    return fallback;
  }
}

}  // namespace

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

namespace {

// A "thread_state" meta record (a stuck thread's state, stacks and lock owner, read at a suspected stall).
RecordedThreadState ThreadStateOf(const nlohmann::json& record) {
  RecordedThreadState t;
  t.pid = Field<uint32_t>(record, "pid", 0);
  t.tid = Field<uint32_t>(record, "tid", 0);
  t.ts_ns = Field<uint64_t>(record, "ts_ns", 0);
  t.since_ns = Field<uint64_t>(record, "since_ns", 0);
  t.state = Field<uint32_t>(record, "state", 0);
  t.syscall = Field<std::string>(record, "syscall", "");
  t.wchan = Field<std::string>(record, "wchan", "");
  t.comm = Field<std::string>(record, "comm", "");
  t.user_stack = Field<int32_t>(record, "user_stack", -1);
  t.kernel_stack = Field<int32_t>(record, "kernel_stack", -1);
  t.py_stack = Field<int32_t>(record, "py_stack", -1);
  t.lock_owner = Field<uint32_t>(record, "lock_owner", 0);
  t.since_before_attach = Field<bool>(record, "since_before_attach", false);
  return t;
}

}  // namespace

RecordedSegment IndexSegment(segments::SegmentData data) {
  RecordedSegment seg;
  for (const nlohmann::json& record : data.meta) {
    const std::string type = Field<std::string>(record, "type", "");
    if (type == "process") {
      RecordedProcess p;
      p.pid = Field<int>(record, "pid", 0);
      p.ppid = Field<int>(record, "ppid", 0);
      if (auto it = record.find("rank"); it != record.end() && it->is_number_integer()) p.rank = it->get<int>();
      p.comm = Field<std::string>(record, "comm", "");
      p.cgroup = Field<std::string>(record, "cgroup", "");
      p.first_seen_ns = Field<uint64_t>(record, "first_seen_ns", 0);
      p.exited_ns = Field<uint64_t>(record, "exited_ns", 0);
      if (auto it = record.find("world_size"); it != record.end() && it->is_number_integer())
        p.world_size = it->get<int>();
      if (auto it = record.find("local_rank"); it != record.end() && it->is_number_integer())
        p.local_rank = it->get<int>();
      if (auto it = record.find("cuda_visible_devices"); it != record.end() && it->is_string())
        p.visible_devices = it->get<std::string>();
      if (auto it = record.find("exit_code"); it != record.end() && it->is_number_integer())
        p.exit_code = it->get<int>();
      if (auto it = record.find("exit_signal"); it != record.end() && it->is_number_integer())
        p.exit_signal = it->get<int>();
      if (p.pid > 0) {
        RecordedProcess& slot = seg.processes[p.pid];
        if (!p.rank) p.rank = slot.rank;
        if (p.exited_ns == 0) p.exited_ns = slot.exited_ns;
        slot = p;
      }
    } else if (type == "probe") {
      const size_t id = Field<size_t>(record, "id", SIZE_MAX);
      if (id > 100000) continue;
      if (seg.probes.size() <= id) seg.probes.resize(id + 1);
      seg.probes[id] = {Field<std::string>(record, "symbol", ""), Field<std::string>(record, "op", ""),
                        segments::ParseProbeKind(Field<std::string>(record, "kind", "")),
                        Field<std::string>(record, "library", "")};
    } else if (type == "series") {
      const size_t id = Field<size_t>(record, "id", SIZE_MAX);
      if (id > 10000000) continue;
      if (seg.series.size() <= id) seg.series.resize(id + 1);
      seg.series[id] = {Field<std::string>(record, "name", ""), Field<int>(record, "pid", -1),
                        Field<int>(record, "index", -1),        Field<std::string>(record, "label", ""),
                        Field<std::string>(record, "unit", ""), Field<bool>(record, "cumulative", false)};
    } else if (type == "recording") {
      seg.recorder_pid = Field<int>(record, "recorder_pid", 0);
      seg.host = Field<std::string>(record, "host", seg.host);
      seg.source = Field<std::string>(record, "source", seg.source);
      seg.finished = true;
      if (auto it = record.find("sample_hz"); it != record.end() && it->is_number()) seg.sample_hz = it->get<double>();
      if (auto it = record.find("command"); it != record.end() && it->is_array() && !it->empty()) seg.launched = true;
    } else if (type == "source") {
      seg.source = Field<std::string>(record, "name", seg.source);
      seg.host = Field<std::string>(record, "host", seg.host);
    } else if (type == "gap") {
      std::string rows;
      if (auto it = record.find("dropped_rows"); it != record.end() && it->is_object())
        for (const auto& [table, n] : it->items())
          if (n.is_number_unsigned())
            rows += (rows.empty() ? "" : ", ") + std::to_string(n.get<uint64_t>()) + " " + table;
      const double seconds =
          static_cast<double>(Field<uint64_t>(record, "to_ns", 0) -
                              std::min(Field<uint64_t>(record, "to_ns", 0), Field<uint64_t>(record, "from_ns", 0))) /
          1e9;
      seg.gaps.push_back(fmt::format("{}: {} rows not recorded over {:.1f} s ({})",
                                     Field<std::string>(record, "reason", "gap"), rows.empty() ? "no" : rows, seconds,
                                     "the recorder could not write them"));
    } else if (type == "other_process") {
      const int pid = Field<int>(record, "pid", 0);
      if (pid > 0) seg.other_processes[pid] = Field<std::string>(record, "comm", "");
    } else if (type == "thread_state") {
      RecordedThreadState t = ThreadStateOf(record);
      if (t.pid > 0) seg.thread_states.push_back(std::move(t));
    } else if (type == "alive") {
      seg.alive_ns = std::max(seg.alive_ns, Field<uint64_t>(record, "ts_ns", 0));
    } else if (type == "attached") {
      seg.attached_ns = Field<uint64_t>(record, "ts_ns", 0);
    } else if (type == "communicator") {
      RecordedCommunicator c{Field<uint64_t>(record, "comm", 0), Field<int>(record, "nranks", 0),
                             Field<int>(record, "rank", -1), Field<uint32_t>(record, "pid", 0)};
      seg.communicators.push_back(c);
    } else if (type == "stats") {
      seg.end_ns = Field<uint64_t>(record, "end_ns", 0);
      seg.dropped_events = Field<uint64_t>(record, "dropped", 0);
      seg.stats_record = record.dump();
      if (auto it = record.find("notes"); it != record.end() && it->is_array())
        for (const auto& n : *it)
          if (n.is_string()) seg.notes.push_back(n.get<std::string>());
    }
  }
  // Processes without a RANK of their own (DataLoader workers, helpers) inherit their ancestor's.
  for (auto& [pid, p] : seg.processes) {
    if (p.rank) continue;
    std::set<int> seen{pid};
    for (int parent = p.ppid; parent > 0 && seen.insert(parent).second;) {
      auto it = seg.processes.find(parent);
      if (it == seg.processes.end()) break;
      if (it->second.rank) {
        p.rank = it->second.rank;
        break;
      }
      parent = it->second.ppid;
    }
  }
  seg.meta_records = data.meta.size();
  seg.user_stacks = IndexUserStacks(data.meta);
  seg.python_stacks = IndexPythonStacks(data.meta);
  seg.data = std::move(static_cast<segments::SegmentRows&>(data));
  return seg;
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
    for (segments::CallRow row : plugin.data.calls) {
      row.probe = row.probe < remap.size() ? remap[row.probe] : UINT32_MAX;  // unknown stays unknown
      home->data.calls.push_back(row);
    }
    for (segments::CallEnterRow row : plugin.data.call_enters) {
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
