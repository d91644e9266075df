// Decoding a recording's rows into RecordedLayers (see recorded_layers.h).
#include "importers/recorded_layers.h"

#include <algorithm>
#include <iterator>
#include <optional>
#include <set>

#include "importers/main_process.h"
#include "store/probe_kind.h"

namespace strata {
namespace {

constexpr uint32_t kTaskUninterruptible = 2;

/// The job's processes of one segment: each rank's pids, and every pid of the job (with the recorder's own:
/// its CPU time is overhead, not another tenant, so it never counts as the one that held a CPU).
struct SegmentRanks {
  std::map<int32_t, std::set<uint32_t>> pids;
  std::set<uint32_t> job_pids;
};

SegmentRanks RanksOfSegment(const RecordedSegment& seg) {
  SegmentRanks out;
  for (const auto& [pid, p] : seg.processes)
    if (p.rank) {
      out.pids[*p.rank].insert(static_cast<uint32_t>(pid));
      out.job_pids.insert(static_cast<uint32_t>(pid));
    }
  if (seg.recorder_pid > 0) out.job_pids.insert(static_cast<uint32_t>(seg.recorder_pid));
  return out;
}

using SeriesPoints = std::map<uint32_t, RecordedPoints>;

/// Each counter series' samples by id, sorted by time.
SeriesPoints SeriesSamples(const RecordedSegment& seg) {
  SeriesPoints samples;
  for (const auto& c : seg.data.counters)
    if (c.series < seg.series.size()) samples[c.series].emplace_back(c.ts_ns, c.value);
  for (auto& [id, points] : samples) std::sort(points.begin(), points.end());
  return samples;
}

/// Each rank's collective calls: the training window (first to last) and the times alignment compares.
void DecodeCollectives(const RecordedSegment& seg, RecordedLayerSegment* out) {
  std::map<int32_t, RecordedSpan> whole;
  for (const auto& [rank, layers] : out->ranks) whole[rank] = {UINT64_MAX, 0};
  for (const auto& c : seg.data.calls) {
    if (c.probe >= seg.probes.size()) continue;
    const ProbeKind kind = seg.probes[c.probe].kind;
    if (!IsCollectiveCall(kind)) continue;
    auto rank = seg.RankOf(c.tgid);
    if (!rank) continue;
    RecordedSpan& w = whole[*rank];
    w.start = std::min(w.start, c.start_ns);
    w.end = std::max(w.end, c.end_ns);
    RecordedCollectiveTimes& times = out->ranks[*rank].collectives;
    if (kind == ProbeKind::kCollective) times.blocking_ends.push_back(static_cast<int64_t>(c.end_ns));
    if (kind == ProbeKind::kCollectiveEnqueue) times.enqueue_starts.push_back(static_cast<int64_t>(c.start_ns));
  }
  for (auto& [rank, layers] : out->ranks) layers.training = whole[rank];
}

/// A rank without collective calls: its processes' recorded life (first seen to exit or last off-CPU end).
void FallBackToLifetimes(const RecordedSegment& seg, const SegmentRanks& ranks, RecordedLayerSegment* out) {
  for (const auto& [rank, set] : ranks.pids) {
    RecordedSpan& w = out->ranks[rank].training;
    if (w.end > w.start) continue;
    for (uint32_t pid : set) {
      const RecordedProcess& p = seg.processes.at(static_cast<int>(pid));
      w.start = std::min(w.start, p.first_seen_ns);
      if (p.exited_ns) w.end = std::max(w.end, p.exited_ns);
    }
    for (const auto& o : seg.data.off_cpu)
      if (set.count(o.tgid)) w.end = std::max(w.end, o.end_ns);
  }
}

/// Main threads' run-queue waits and uninterruptible sleeps; every thread's GC pauses.
void DecodeScheduler(const RecordedSegment& seg, const SegmentRanks& ranks, RecordedLayerSegment* out) {
  for (const auto& o : seg.data.off_cpu) {
    if (o.tid != o.tgid) continue;  // the main thread runs the training loop (and the GC)
    auto rank = seg.RankOf(o.tgid);
    if (!rank) continue;
    RankLayers& layers = out->ranks[*rank];
    const uint64_t runnable_from = o.end_ns - std::min(o.runq_ns, o.end_ns);
    // Who kept it waiting: the process that took the CPU when it was preempted, else the one that ran
    // just before it came back (a helper thread of its own in between hides the first).
    const bool preempted = o.state == 0;
    const bool taken_by_other = preempted && o.preempted_by != 0 && !ranks.job_pids.count(o.preempted_by);
    const bool other_before = o.ran_before != 0 && !ranks.job_pids.count(o.ran_before);
    const bool uninterruptible = (o.state & kTaskUninterruptible) != 0;
    RunQueueWait wait{.start = runnable_from, .end = o.end_ns, .after_uninterruptible = uninterruptible};
    if (taken_by_other || other_before)
      wait.other_pid = taken_by_other ? o.preempted_by : o.ran_before;
    else
      wait.idle_cpu = o.ran_before == 0;
    if (wait.end > wait.start) layers.runq.push_back(wait);
    if (uninterruptible && runnable_from > o.start_ns) layers.dstate.push_back({o.start_ns, runnable_from});
  }
  for (const auto& g : seg.data.gcs)
    if (auto rank = seg.RankOf(g.tgid)) out->ranks[*rank].gcs.push_back({g.start_ns, g.end_ns});
}

/// The name of each process outside the job that held a rank's CPU.
void NameOtherProcesses(const RecordedSegment& seg, RecordedLayerSegment* out) {
  for (const auto& [rank, layers] : out->ranks)
    for (const RunQueueWait& w : layers.runq) {
      if (w.other_pid == 0 || out->process_names.count(w.other_pid)) continue;
      std::string name = "?";
      if (auto p = seg.processes.find(static_cast<int>(w.other_pid)); p != seg.processes.end())
        name = p->second.comm;
      else if (auto o = seg.other_processes.find(static_cast<int>(w.other_pid)); o != seg.other_processes.end())
        name = o->second;
      out->process_names[w.other_pid] = std::move(name);
    }
}

/// Each rank's processes' cumulative counters that the cross-layer comparison reads.
void DecodeCounters(const RecordedSegment& seg, const SeriesPoints& samples, RecordedLayerSegment* out) {
  for (const auto& [id, points] : samples) {
    const RecordedSeries& s = seg.series[id];
    if (s.pid <= 0) continue;
    auto rank = seg.RankOf(static_cast<uint32_t>(s.pid));
    if (!rank) continue;
    std::optional<RankCounter> counter;
    if (s.name == "cgroup.cpu.throttled_ns") counter = RankCounter::kCgroupThrottledNs;
    if (s.name == "cgroup.memory.failcnt" || s.name == "cgroup.memory.events.high" ||
        s.name == "cgroup.memory.events.max")
      counter = RankCounter::kMemoryCgroupFails;
    if (s.name == "proc.majflt") counter = RankCounter::kMajorFaults;
    if (s.name == "proc.stime_ns") counter = RankCounter::kSystemNs;
    if (counter) out->ranks[*rank].counters.push_back({*counter, points});
  }
}

// The network namespace of each rank: that of its main process (importers/main_process.h) among those the
// sampler gave a namespace for. Other processes carrying the rank's environment count for
// CPU, not for the namespace: a helper the launcher ran (`ip`, `tc`, a shell) may sit in another namespace,
// and counting it made the ranks look as if they shared one, which dropped every rank's NIC figures.
struct RankNamespaces {
  std::map<uint32_t, double> ns_of_pid;             // from the sampler's net.ns_inode series
  std::map<double, std::set<int32_t>> ranks_of_ns;  // the ranks whose main process is in the namespace
  std::map<int32_t, double> ns_of_rank;
};

RankNamespaces NamespacesOfRanks(const RecordedSegment& seg, const SegmentRanks& ranks, const SeriesPoints& samples) {
  RankNamespaces out;
  for (const auto& [id, points] : samples)
    if (seg.series[id].name == "net.ns_inode" && seg.series[id].pid > 0 && !points.empty())
      out.ns_of_pid[static_cast<uint32_t>(seg.series[id].pid)] = points.back().second;
  const MainProcessRule main_process(seg);
  for (const auto& [rank, set] : ranks.pids) {
    std::optional<uint32_t> main;  // the likeliest main process whose namespace the sampler gave
    for (uint32_t pid : set)
      if (out.ns_of_pid.count(pid) && (!main || main_process.Better(pid, *main))) main = pid;
    if (!main) continue;
    const double ns = out.ns_of_pid.at(*main);
    out.ranks_of_ns[ns].insert(rank);
    out.ns_of_rank[rank] = ns;
  }
  return out;
}

/// Interface series (the sampler gives each namespace's under one of its pids) of each rank's own namespace,
/// kept only when every rank has a namespace of its own.
void DecodeLinks(const RecordedSegment& seg, const SegmentRanks& ranks, const SeriesPoints& samples,
                 RecordedLayerSegment* out) {
  const RankNamespaces spaces = NamespacesOfRanks(seg, ranks, samples);
  out->own_namespaces = !spaces.ranks_of_ns.empty() && spaces.ranks_of_ns.size() == spaces.ns_of_rank.size() &&
                        spaces.ns_of_rank.size() == ranks.pids.size();
  if (!out->own_namespaces) return;
  for (const auto& [id, points] : samples) {
    const RecordedSeries& s = seg.series[id];
    std::optional<LinkSeries::Kind> kind;
    if (s.name == "net.rx_bytes") kind = LinkSeries::Kind::kRxBytes;
    if (s.name == "net.tx_bytes") kind = LinkSeries::Kind::kTxBytes;
    if (s.name == "net.link_capacity_bps") kind = LinkSeries::Kind::kCapacityBps;
    if (!kind || s.label == "lo" || s.pid <= 0) continue;
    auto ns = spaces.ns_of_pid.find(static_cast<uint32_t>(s.pid));
    if (ns == spaces.ns_of_pid.end()) continue;
    auto owners = spaces.ranks_of_ns.find(ns->second);
    if (owners == spaces.ranks_of_ns.end() || owners->second.size() != 1) continue;
    out->ranks[*owners->second.begin()].links.push_back({*kind, s.label, points});
  }
}

RecordedLayerSegment DecodeLayerSegment(const RecordedSegment& seg) {
  RecordedLayerSegment out;
  out.realtime_minus_monotonic_ns = seg.data.header.realtime_minus_monotonic_ns;
  for (const RecordedProbe& p : seg.probes) out.device_collectives |= p.kind == ProbeKind::kCollectiveDevice;
  const SegmentRanks ranks = RanksOfSegment(seg);
  for (const auto& [rank, set] : ranks.pids) out.ranks[rank];
  DecodeCollectives(seg, &out);
  FallBackToLifetimes(seg, ranks, &out);
  DecodeScheduler(seg, ranks, &out);
  NameOtherProcesses(seg, &out);
  const SeriesPoints samples = SeriesSamples(seg);
  DecodeCounters(seg, samples, &out);
  DecodeLinks(seg, ranks, samples, &out);
  return out;
}

}  // namespace

RecordedLayers DecodeRecordedLayers(const RecordedRun& run) {
  RecordedLayers out;
  out.segments.reserve(run.segments.size());
  for (const RecordedSegment& seg : run.segments) out.segments.push_back(DecodeLayerSegment(seg));
  return out;
}

}  // namespace strata
