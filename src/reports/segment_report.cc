// Rendering of a recorder segment's summary (see segment_report.h).
#include "reports/segment_report.h"

#include <fmt/format.h>

#include "core/text_escape.h"

#include <algorithm>
#include <map>
#include <vector>

#include "analysis/diagnosis/cross_layer.h"
#include "analysis/diagnosis/rank_whereabouts.h"
#include "core/round.h"
#include "core/skip_counts.h"
#include "importers/recorded_layers.h"
#include "reports/evidence_json.h"
#include "reports/skip_report.h"
#include "reports/text_format.h"
#include "store/stack_index.h"

namespace strata {

namespace {

/// The events the kernel dropped (ring buffer full), as a skip count.
SkipCounts DroppedCounts(const RecordedSegment& seg) {
  SkipCounts c;
  c.Add(SkipId::kRingBufferFull, seg.dropped_events);
  return c;
}

// The five Python functions sampled most, innermost frames only: {"Python f (file:line)": samples}.
nlohmann::ordered_json TopPython(const std::map<std::string, uint64_t>& counts) {
  std::vector<std::pair<uint64_t, std::string>> order;
  for (const auto& [name, n] : counts) order.emplace_back(n, name);
  std::sort(order.begin(), order.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  nlohmann::ordered_json out = nlohmann::ordered_json::object();
  for (size_t i = 0; i < order.size() && i < 5; ++i) out[order[i].second] = order[i].first;
  return out;
}

// The innermost Python frame of a thread_state record's stack ("Python f (file:line)"), null when none.
nlohmann::ordered_json InnermostPythonFrame(const RecordedSegment& seg, const RecordedThreadState& t) {
  auto it = seg.python_stacks.find({t.pid, t.py_stack});
  if (t.py_stack < 0 || it == seg.python_stacks.end() || it->second.empty()) return nullptr;
  return PythonFrameName(it->second.front());
}

// The threads the recorder found off CPU for a second or more (its thread_state records), as it saw them.
nlohmann::ordered_json StuckThreadsJson(const RecordedSegment& seg) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const RecordedThreadState& t : seg.thread_states) {
    auto proc = seg.processes.find(static_cast<int>(t.pid));
    nlohmann::ordered_json rank;
    if (proc != seg.processes.end() && proc->second.rank) rank = *proc->second.rank;
    out.push_back(
        {{"pid", t.pid},
         {"tid", t.tid},
         {"rank", rank},
         {"name", t.comm},
         {"state", diagnosis::StateText(diagnosis::BlockedState(t.syscall, t.wchan, t.state))},
         {"seen_unix", RoundTo(static_cast<double>(seg.UnixNs(t.ts_ns)) / 1e9, 3)},
         {"since_unix", t.since_ns ? nlohmann::ordered_json(RoundTo(seg.SinceUnixS(t), 3)) : nlohmann::ordered_json()},
         {"since_before_attach", t.since_before_attach},
         {"frame", InnermostPythonFrame(seg, t)}});
  }
  return out;
}
}  // namespace

nlohmann::ordered_json SegmentToJson(const RecordedSegment& seg) {
  const auto& d = seg.data;
  nlohmann::ordered_json j;
  j["schema"] = "strata.segment-summary/1";
  j["path"] = JsonSafe(d.path);
  j["format_version"] = d.header.version;
  j["created_unix_ns"] = d.header.created_unix_ns;
  j["blocks"] = d.blocks;
  j["problems"] = d.problems;
  j["rows"] = {{"meta", seg.meta_records},
               {"off_cpu", d.off_cpu.size()},
               {"sample", d.samples.size()},
               {"call", d.calls.size()},
               {"gc", d.gcs.size()},
               {"counter", d.counters.size()},
               {"py_sample", d.py_samples.size()},
               {"call_enter", d.call_enters.size()}};
  struct PerPid {
    std::map<std::string, std::map<std::string, uint64_t>> calls;  // kind -> op -> calls
    uint64_t gc_count = 0;
    double gc_ms = 0, gc_max_ms = 0;
    double off_cpu_ms[3] = {0, 0, 0};  // preempted, sleeping, uninterruptible
    double runq_ms = 0;
    uint64_t samples = 0;
    std::map<std::string, uint64_t> python;  // innermost Python function -> samples
  };
  std::map<uint32_t, PerPid> per_pid;
  for (const auto& c : d.calls) {
    const bool known = c.probe < seg.probes.size();
    ++per_pid[c.tgid].calls[known ? std::string(ProbeKindName(seg.probes[c.probe].kind)) : "?"]
                           [known ? seg.probes[c.probe].op : "?"];
  }
  for (const auto& g : d.gcs) {
    PerPid& p = per_pid[g.tgid];
    const double ms = static_cast<double>(g.end_ns - g.start_ns) / 1e6;
    ++p.gc_count;
    p.gc_ms += ms;
    p.gc_max_ms = std::max(p.gc_max_ms, ms);
  }
  for (const auto& o : d.off_cpu) {
    PerPid& p = per_pid[o.tgid];
    const int kind = o.state == 0 ? 0 : (o.state & 2) ? 2 : 1;
    p.off_cpu_ms[kind] += static_cast<double>(o.end_ns - o.start_ns) / 1e6;
    p.runq_ms += static_cast<double>(o.runq_ns) / 1e6;
  }
  for (const auto& s : d.samples) ++per_pid[s.tgid].samples;
  const PythonStacks& py_stacks = seg.python_stacks;
  for (const auto& s : d.py_samples)
    if (auto it = py_stacks.find({s.tgid, s.py_stack}); it != py_stacks.end() && !it->second.empty())
      ++per_pid[s.tgid].python[PythonFrameName(it->second.front())];
  nlohmann::ordered_json processes = nlohmann::ordered_json::array();
  for (const auto& [pid, p] : seg.processes) {
    const PerPid& pp = per_pid[static_cast<uint32_t>(pid)];
    nlohmann::ordered_json calls(nlohmann::ordered_json::object());
    for (const auto& [kind, ops] : pp.calls)
      for (const auto& [op, n] : ops) calls[kind][op] = n;
    processes.push_back(
        {{"pid", pid},
         {"ppid", p.ppid},
         {"rank", p.rank ? nlohmann::ordered_json(*p.rank) : nlohmann::ordered_json()},
         {"comm", p.comm},
         {"calls", calls},
         {"gc", {{"count", pp.gc_count}, {"total_ms", RoundTo(pp.gc_ms, 3)}, {"max_ms", RoundTo(pp.gc_max_ms, 3)}}},
         {"off_cpu_ms",
          {{"preempted", RoundTo(pp.off_cpu_ms[0], 3)},
           {"sleeping", RoundTo(pp.off_cpu_ms[1], 3)},
           {"uninterruptible", RoundTo(pp.off_cpu_ms[2], 3)}}},
         {"runq_ms", RoundTo(pp.runq_ms, 3)},
         {"cpu_samples", pp.samples},
         {"python_functions", TopPython(pp.python)}});
  }
  j["processes"] = processes;
  std::map<std::string, size_t> series_by_name;
  for (const auto& s : seg.series) ++series_by_name[s.name];
  j["counter_series"] = series_by_name;
  // Rows per counter name (over its series): how often each was read (the links more often: --link-hz).
  std::map<std::string, size_t> rows_by_name;
  for (const CounterRow& row : d.counters)
    if (row.series < seg.series.size()) ++rows_by_name[seg.series[row.series].name];
  j["counter_rows"] = rows_by_name;
  j["probes"] = seg.probes.size();
  j["dropped_events"] = seg.dropped_events;
  if (seg.dropped_events > 0) j["skip_reasons"] = SkipReasonsJson(DroppedCounts(seg));
  j["stats"] = seg.stats_record.empty() ? nlohmann::ordered_json()
                                        : nlohmann::ordered_json::parse(seg.stats_record, nullptr, false);
  j["notes"] = seg.notes;
  j["finished"] = seg.finished;
  // The CPU sampling rate the recorder says it ran at (its closing record; null before it closed): an agent's
  // deep-tracing chunk says its deep rate here.
  j["sample_hz"] = seg.sample_hz > 0 ? nlohmann::ordered_json(seg.sample_hz) : nlohmann::ordered_json();
  j["gaps"] = seg.gaps;
  j["stuck_threads"] = StuckThreadsJson(seg);
  RecordedRun one;
  one.segments.push_back(seg);
  nlohmann::ordered_json ranks(nlohmann::ordered_json::object());
  for (const auto& [rank, m] : diagnosis::MeasureRankLayers(DecodeRecordedLayers(one))) {
    nlohmann::ordered_json r = RankLayerMetricsJson(m);
    r["top_other_process"] = m.top_foreign;
    ranks[std::to_string(rank)] = std::move(r);
  }
  j["ranks"] = ranks;
  return j;
}

namespace {
// "12 meta, 1,619 off_cpu, ..." of the rows object.
std::string RowCounts(const nlohmann::ordered_json& rows) {
  std::string out;
  for (const auto& [table, n] : rows.items())
    if (n.get<uint64_t>() > 0) out += fmt::format("{}{} {}", out.empty() ? "" : ", ", n.get<uint64_t>(), table);
  return out.empty() ? "no rows" : out;
}

uint64_t CallCount(const nlohmann::ordered_json& calls) {
  uint64_t n = 0;
  for (const auto& [kind, ops] : calls.items())
    if (kind != "collective_enqueue")  // the same collectives, seen at c10d's enqueue
      for (const auto& [op, count] : ops.items()) n += count.get<uint64_t>();
  return n;
}

// One row per process of a rank or with anything recorded; quiet helper processes (a launcher's `ip`,
// `tc`, shells) are counted in one line under the table.
std::string ProcessTable(const nlohmann::ordered_json& processes) {
  text::Table t({">pid", ">rank", "process", ">calls", ">gc", ">gc time", ">preempted", ">sleeping", ">D-state",
                 ">run-queue", ">samples", "top Python function"});
  size_t quiet = 0;
  double quiet_ms = 0;
  for (const auto& p : processes) {
    const uint64_t calls = CallCount(p["calls"]), gcs = p["gc"]["count"].get<uint64_t>();
    const uint64_t samples = p["cpu_samples"].get<uint64_t>();
    if (p["rank"].is_null() && calls == 0 && gcs == 0 && samples == 0) {
      ++quiet;
      for (const auto& [state, ms] : p["off_cpu_ms"].items()) quiet_ms += ms.get<double>();
      continue;
    }
    const auto& off = p["off_cpu_ms"];
    std::string python;
    if (!p["python_functions"].empty()) python = p["python_functions"].items().begin().key();
    t.Add({std::to_string(p["pid"].get<int>()),
           p["rank"].is_null() ? std::string("-") : std::to_string(p["rank"].get<int>()),
           text::Clip(TerminalSafe(p["comm"].get<std::string>()), 16), std::to_string(calls), std::to_string(gcs),
           text::Duration(p["gc"]["total_ms"].get<double>()), text::Duration(off["preempted"].get<double>()),
           text::Duration(off["sleeping"].get<double>()), text::Duration(off["uninterruptible"].get<double>()),
           text::Duration(p["runq_ms"].get<double>()), std::to_string(samples), text::Clip(TerminalSafe(python), 48)});
  }
  std::string out = t.rows() ? t.Render("  ") : std::string("  no process with a rank or anything recorded\n");
  if (quiet)
    out += fmt::format("  (+ {} helper processes with no calls, GC or samples, {} off-CPU in all)\n", quiet,
                       text::Duration(quiet_ms));
  return out;
}

// The per-rank layer metrics diagnose compares (cross_layer.h), as percentages of each rank's window.
std::string SegmentRankTable(const nlohmann::ordered_json& ranks) {
  text::Table t({">rank", ">window", ">run-queue", ">other proc", ">throttled", ">GC", ">D-state", ">kernel",
                 ">maj faults/s", ">NIC MB/s", ">link busy", ">link", "top other process"});
  auto pct = [](const nlohmann::ordered_json& v) {
    return v.is_null() ? std::string("-") : text::Percent(v.get<double>());
  };
  auto num = [](const nlohmann::ordered_json& v) {
    return v.is_null() ? std::string("-") : text::Sig3(v.get<double>());
  };
  for (const auto& [rank, m] : ranks.items())
    t.Add({rank, text::Duration(1000 * m["window_s"].get<double>()), pct(m["runq_pct"]),
           pct(m["runq_other_process_pct"]), pct(m["cgroup_throttled_pct"]), pct(m["gc_pct"]),
           pct(m["uninterruptible_pct"]), pct(m["kernel_cpu_pct"]), num(m["major_faults_per_s"]),
           num(m["nic_mb_per_s"]), pct(m["link_busy_pct"]),
           m["link_capacity_mbit"].is_null() ? std::string("-") : num(m["link_capacity_mbit"]) + " Mbit/s",
           text::Clip(TerminalSafe(m["top_other_process"].get<std::string>()), 32)});
  return t.Render("  ");
}
}  // namespace

std::string SegmentToText(const RecordedSegment& seg, size_t width) {
  const auto j = SegmentToJson(seg);
  std::string out = fmt::format("{}: {} blocks, {}; {} probes, {} counter series, {} dropped events\n",
                                TerminalSafe(seg.data.path), seg.data.blocks, RowCounts(j["rows"]),
                                j["probes"].get<size_t>(), j["counter_series"].size(), seg.dropped_events);
  out += "processes:\n" + ProcessTable(j["processes"]);
  if (!j["ranks"].empty()) out += "ranks (share of each rank's training window):\n" + SegmentRankTable(j["ranks"]);
  if (!seg.finished)
    out +=
        "cut short: no closing record (the recorder was killed, or could not write): the recording ends at its "
        "last complete block\n";
  if (seg.dropped_events > 0)
    out += "dropped events:\n" + SkipReasonLines(DroppedCounts(seg), "  ", std::max(width, kMinTextWidth));
  for (const auto& g : seg.gaps) out += "gap: " + TerminalSafe(g) + "\n";
  size_t other_threads = 0;  // the text lists main threads; --format json has every one
  for (const auto& t : j["stuck_threads"]) {
    if (t["pid"] != t["tid"]) {
      ++other_threads;
      continue;
    }
    out += fmt::format(
        "stuck: pid {}{}: {} {}{}\n", t["pid"].get<uint32_t>(),
        t["rank"].is_null() ? "" : fmt::format(" (rank {})", t["rank"].get<int>()),
        TerminalSafe(t["state"].get<std::string>()),
        t["since_before_attach"].get<bool>() ? "since before the recorder attached" : "for a second or more",
        t["frame"].is_null() ? "" : " in " + TerminalSafe(t["frame"].get<std::string>()));
  }
  if (other_threads > 0)
    out += fmt::format("stuck: and {} other threads of these processes (--format json lists them)\n", other_threads);
  for (const auto& p : seg.data.problems) out += "problem: " + TerminalSafe(p) + "\n";
  for (const auto& n : seg.notes) out += "note: " + TerminalSafe(n) + "\n";
  return out;
}

}  // namespace strata
