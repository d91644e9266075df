// DecodeRecordedCalls: a recording's collective calls per rank process (see recorded_calls.h).
#include "importers/recorded_calls.h"

#include <algorithm>
#include <map>
#include <optional>

#include "importers/gloo_buffer_bytes.h"
#include "store/slice_names.h"

namespace strata {
namespace {

// One process's call rows: entries in time order, returns by entry key.
struct ProcessRows {
  std::vector<const CallEnterRow*> enters;
  std::map<CallEntryKey, uint64_t> returns;  // (tid, probe, start) -> end
};

std::map<uint32_t, ProcessRows> RowsByProcess(const RecordedSegment& seg) {
  std::map<uint32_t, ProcessRows> out;
  for (const CallEnterRow& e : seg.data.call_enters) out[e.tgid].enters.push_back(&e);
  for (auto& [pid, p] : out)
    std::stable_sort(p.enters.begin(), p.enters.end(),
                     [](const auto* a, const auto* b) { return a->ts_ns < b->ts_ns; });
  for (const CallRow& c : seg.data.calls) {
    auto it = out.find(c.tgid);
    if (it != out.end()) it->second.returns[{c.tid, c.probe, c.start_ns}] = c.end_ns;
  }
  return out;
}

// The source of a probe's calls; nullopt for probes that are not a collective's (buffers, data loading...).
std::optional<RecordedCallSource> SourceOf(const RecordedProbe& probe) {
  switch (probe.kind) {
    case ProbeKind::kCollectiveDeviceEnqueue:
      return RecordedCallSource::kPluginEnqueue;
    case ProbeKind::kCollectiveDeviceStart:
      return RecordedCallSource::kPluginStart;
    case ProbeKind::kCollectiveDeviceDone:
      return RecordedCallSource::kPluginDone;
    case ProbeKind::kCollective:
      return RecordedCallSource::kAlgorithm;
    case ProbeKind::kCollectiveEnqueue:
      return CollectiveKindOf(probe.symbol) == CollectiveKind::kC10dMethod ? RecordedCallSource::kC10d
                                                                           : RecordedCallSource::kNcclApi;
    default:
      return std::nullopt;
  }
}

// The end of a segment's recording: the recorder's end record, else its latest row or "alive" record.
uint64_t SegmentEnd(const RecordedSegment& seg) {
  uint64_t end = seg.end_ns;
  if (end != 0) return end;
  end = seg.alive_ns;
  for (const auto& r : seg.data.off_cpu) end = std::max(end, r.end_ns);
  for (const auto& r : seg.data.samples) end = std::max(end, r.ts_ns);
  for (const auto& r : seg.data.calls) end = std::max(end, r.end_ns);
  for (const auto& r : seg.data.call_enters) end = std::max(end, r.ts_ns);
  for (const auto& r : seg.data.counters) end = std::max(end, r.ts_ns);
  return end;
}

std::vector<RecordedCall> CallsOf(const RecordedSegment& seg, const ProcessRows& rows) {
  const std::map<CallEntryKey, uint64_t> bytes_of = GlooAlgorithmBytes(seg, rows.enters, rows.returns);
  std::vector<RecordedCall> calls;
  for (const CallEnterRow* e : rows.enters) {
    if (e->probe >= seg.probes.size()) continue;
    const RecordedProbe& probe = seg.probes[e->probe];
    const std::optional<RecordedCallSource> source = SourceOf(probe);
    if (!source) continue;
    // A c10d call made before every probe was attached may have had its algorithm run unseen (c10d's probes
    // attach before libgloo's): paired in order, every later call took its successor's algorithm, and the last
    // none ("never entered", 2026-11-28 on a live hang). c10d calls count from the attachment on; an earlier
    // algorithm is still read (a chunk carries open ones over: agent/chunk_carry.h) and pairs with no call.
    if (*source == RecordedCallSource::kC10d && e->ts_ns < seg.attached_ns) continue;
    RecordedCall c;
    c.source = *source;
    c.op = probe.op;
    c.comm = e->comm;
    c.count = e->count;
    c.tid = e->tid;
    c.entered_unix_ns = seg.UnixNs(e->ts_ns);
    const CallEntryKey key{e->tid, e->probe, e->ts_ns};
    if (auto r = rows.returns.find(key); r != rows.returns.end()) c.returned_unix_ns = seg.UnixNs(r->second);
    if (auto b = bytes_of.find(key); b != bytes_of.end()) c.bytes = b->second;
    calls.push_back(std::move(c));
  }
  return calls;
}

void AddSegmentFacts(const RecordedSegment& seg, RecordedCollectiveCalls* out) {
  for (const auto& [pid, proc] : seg.processes) {
    if (proc.rank) out->ranks_seen.insert(*proc.rank);
    if (proc.world_size && *proc.world_size > 0)
      out->world_size = std::max(out->world_size.value_or(0), *proc.world_size);
  }
  for (const RecordedCommunicator& c : seg.communicators)
    if (c.nranks > 0) out->world_size = std::max(out->world_size.value_or(0), c.nranks);
}

}  // namespace

RecordedCollectiveCalls DecodeRecordedCalls(const RecordedRun& run) {
  RecordedCollectiveCalls out;
  out.segments = run.segments.size();
  for (size_t s = 0; s < run.segments.size(); ++s) {
    const RecordedSegment& seg = run.segments[s];
    const int64_t end = seg.UnixNs(SegmentEnd(seg));
    out.end_unix_ns = std::max(out.end_unix_ns, end);
    AddSegmentFacts(seg, &out);
    for (const auto& [pid, rows] : RowsByProcess(seg)) {
      const std::optional<int> rank = seg.RankOf(pid);
      if (!rank) continue;
      RecordedRankCalls rc;
      rc.rank = *rank;
      rc.pid = pid;
      rc.segment = s;
      rc.launched = seg.launched;
      rc.calls = CallsOf(seg, rows);
      rc.segment_end_unix_ns = end;
      if (auto proc = seg.processes.find(static_cast<int>(pid)); proc != seg.processes.end()) {
        rc.exited_unix_ns = seg.ExitedUnixNs(proc->second);
        rc.exit_code = proc->second.exit_code;
        rc.exit_signal = proc->second.exit_signal;
      }
      out.processes.push_back(std::move(rc));
    }
  }
  return out;
}

}  // namespace strata
