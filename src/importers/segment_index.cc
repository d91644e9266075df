// Indexing of a read segment file into the store's RecordedSegment (see segment_index.h).
#include "importers/segment_index.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <set>

#include "store/stack_index.h"

namespace strata {

namespace {

template <typename T>
T MetaField(const nlohmann::json& j, const char* key, T fallback) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return fallback;
  try {
    return it->get<T>();
  } catch (const nlohmann::json::exception&) {
    return fallback;
  }
}

// A "thread_state" meta record (a stuck thread's state, stacks and lock owner, read at a suspected stall).
RecordedThreadState ThreadStateOf(const nlohmann::json& record) {
  RecordedThreadState t;
  t.pid = MetaField<uint32_t>(record, "pid", 0);
  t.tid = MetaField<uint32_t>(record, "tid", 0);
  t.ts_ns = MetaField<uint64_t>(record, "ts_ns", 0);
  t.since_ns = MetaField<uint64_t>(record, "since_ns", 0);
  t.state = MetaField<uint32_t>(record, "state", 0);
  t.syscall = MetaField<std::string>(record, "syscall", "");
  t.wchan = MetaField<std::string>(record, "wchan", "");
  t.comm = MetaField<std::string>(record, "comm", "");
  t.user_stack = MetaField<int32_t>(record, "user_stack", -1);
  t.kernel_stack = MetaField<int32_t>(record, "kernel_stack", -1);
  t.py_stack = MetaField<int32_t>(record, "py_stack", -1);
  t.lock_owner = MetaField<uint32_t>(record, "lock_owner", 0);
  t.since_before_attach = MetaField<bool>(record, "since_before_attach", false);
  return t;
}

}  // namespace

RecordedSegment IndexSegment(segments::SegmentData data) {
  RecordedSegment seg;
  for (const nlohmann::json& record : data.meta) {
    const std::string type = MetaField<std::string>(record, "type", "");
    if (type == "process") {
      RecordedProcess p;
      p.pid = MetaField<int>(record, "pid", 0);
      p.ppid = MetaField<int>(record, "ppid", 0);
      if (auto it = record.find("rank"); it != record.end() && it->is_number_integer()) p.rank = it->get<int>();
      p.comm = MetaField<std::string>(record, "comm", "");
      p.cgroup = MetaField<std::string>(record, "cgroup", "");
      p.first_seen_ns = MetaField<uint64_t>(record, "first_seen_ns", 0);
      p.exited_ns = MetaField<uint64_t>(record, "exited_ns", 0);
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
      const size_t id = MetaField<size_t>(record, "id", SIZE_MAX);
      if (id > 100000) continue;
      if (seg.probes.size() <= id) seg.probes.resize(id + 1);
      seg.probes[id] = {MetaField<std::string>(record, "symbol", ""), MetaField<std::string>(record, "op", ""),
                        ParseProbeKind(MetaField<std::string>(record, "kind", "")),
                        MetaField<std::string>(record, "library", "")};
    } else if (type == "series") {
      const size_t id = MetaField<size_t>(record, "id", SIZE_MAX);
      if (id > 10000000) continue;
      if (seg.series.size() <= id) seg.series.resize(id + 1);
      seg.series[id] = {MetaField<std::string>(record, "name", ""), MetaField<int>(record, "pid", -1),
                        MetaField<int>(record, "index", -1),        MetaField<std::string>(record, "label", ""),
                        MetaField<std::string>(record, "unit", ""), MetaField<bool>(record, "cumulative", false)};
    } else if (type == "recording") {
      seg.recorder_pid = MetaField<int>(record, "recorder_pid", 0);
      seg.host = MetaField<std::string>(record, "host", seg.host);
      seg.source = MetaField<std::string>(record, "source", seg.source);
      seg.finished = true;
      if (auto it = record.find("sample_hz"); it != record.end() && it->is_number()) seg.sample_hz = it->get<double>();
      if (auto it = record.find("command"); it != record.end() && it->is_array() && !it->empty()) seg.launched = true;
    } else if (type == "source") {
      seg.source = MetaField<std::string>(record, "name", seg.source);
      seg.host = MetaField<std::string>(record, "host", seg.host);
    } else if (type == "gap") {
      std::string rows;
      if (auto it = record.find("dropped_rows"); it != record.end() && it->is_object())
        for (const auto& [table, n] : it->items())
          if (n.is_number_unsigned())
            rows += (rows.empty() ? "" : ", ") + std::to_string(n.get<uint64_t>()) + " " + table;
      const double seconds = static_cast<double>(MetaField<uint64_t>(record, "to_ns", 0) -
                                                 std::min(MetaField<uint64_t>(record, "to_ns", 0),
                                                          MetaField<uint64_t>(record, "from_ns", 0))) /
                             1e9;
      seg.gaps.push_back(fmt::format("{}: {} rows not recorded over {:.1f} s ({})",
                                     MetaField<std::string>(record, "reason", "gap"), rows.empty() ? "no" : rows,
                                     seconds, "the recorder could not write them"));
    } else if (type == "other_process") {
      const int pid = MetaField<int>(record, "pid", 0);
      if (pid > 0) seg.other_processes[pid] = MetaField<std::string>(record, "comm", "");
    } else if (type == "thread_state") {
      RecordedThreadState t = ThreadStateOf(record);
      if (t.pid > 0) seg.thread_states.push_back(std::move(t));
    } else if (type == "alive") {
      seg.alive_ns = std::max(seg.alive_ns, MetaField<uint64_t>(record, "ts_ns", 0));
    } else if (type == "attached") {
      seg.attached_ns = MetaField<uint64_t>(record, "ts_ns", 0);
    } else if (type == "communicator") {
      RecordedCommunicator c{MetaField<uint64_t>(record, "comm", 0), MetaField<int>(record, "nranks", 0),
                             MetaField<int>(record, "rank", -1), MetaField<uint32_t>(record, "pid", 0)};
      seg.communicators.push_back(c);
    } else if (type == "stats") {
      seg.end_ns = MetaField<uint64_t>(record, "end_ns", 0);
      seg.dropped_events = MetaField<uint64_t>(record, "dropped", 0);
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
  seg.data = std::move(static_cast<RecordedRows&>(data));
  return seg;
}

}  // namespace strata
