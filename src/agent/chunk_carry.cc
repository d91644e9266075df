// ChunkCarry: open collective entries carried across flight-recorder chunks (see chunk_carry.h).
#include "agent/chunk_carry.h"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

namespace strata::agent {
namespace {

bool HostCollective(ProbeKind kind) { return kind == ProbeKind::kCollective || kind == ProbeKind::kCollectiveEnqueue; }

bool FromRecorder(const RecordedSegment& seg) { return seg.source != "nccl_profiler"; }

const RecordedProbe* ProbeOf(const RecordedSegment& seg, uint32_t id) {
  return id < seg.probes.size() ? &seg.probes[id] : nullptr;
}

bool SameProbe(const RecordedProbe& a, const RecordedProbe& b) {
  return a.symbol == b.symbol && a.library == b.library && a.kind == b.kind && a.op == b.op;
}

// The recorder segment of `run` that records process `pid`, or nullptr.
RecordedSegment* SegmentOf(RecordedRun* run, uint32_t pid) {
  for (RecordedSegment& seg : run->segments)
    if (FromRecorder(seg) && seg.processes.count(static_cast<int>(pid))) return &seg;
  return nullptr;
}

// `run` shows the thread of `e` leave it: a collective entry of that thread at or after it (less the slack
// of one call seen by two recorders), or a collective call of that thread returning after it.
bool ShownLeft(const RecordedRun& run, const CarriedEntry& e) {
  const uint64_t from = e.ts_ns > kSameCallSlackNs ? e.ts_ns - kSameCallSlackNs : 0;
  for (const RecordedSegment& seg : run.segments) {
    if (!FromRecorder(seg)) continue;
    for (const CallEnterRow& r : seg.data.call_enters)
      if (r.tgid == e.pid && r.tid == e.tid && r.ts_ns >= from)
        if (const RecordedProbe* p = ProbeOf(seg, r.probe); p && HostCollective(p->kind)) return true;
    for (const CallRow& c : seg.data.calls)
      if (c.tgid == e.pid && c.tid == e.tid && c.end_ns > e.ts_ns)
        if (const RecordedProbe* p = ProbeOf(seg, c.probe); p && HostCollective(p->kind)) return true;
  }
  return false;
}

// The probe id of `probe` in `seg`, added to its probe table when it has none of that name.
uint32_t ProbeIdIn(RecordedSegment* seg, const RecordedProbe& probe) {
  for (size_t i = 0; i < seg->probes.size(); ++i)
    if (SameProbe(seg->probes[i], probe)) return static_cast<uint32_t>(i);
  seg->probes.push_back(probe);
  return static_cast<uint32_t>(seg->probes.size() - 1);
}

}  // namespace

std::vector<CarriedEntry> CarryFrom(const RecordedRun& left, const std::vector<CarriedEntry>& carried) {
  std::vector<CarriedEntry> out;
  for (const CarriedEntry& e : carried) {
    bool recorded = false, exited = false;
    for (const RecordedSegment& seg : left.segments)
      if (auto it = seg.processes.find(static_cast<int>(e.pid)); FromRecorder(seg) && it != seg.processes.end()) {
        recorded = true;
        exited |= it->second.exited_ns != 0;
      }
    if (recorded && !exited && !ShownLeft(left, e)) out.push_back(e);
  }
  for (const RecordedSegment& seg : left.segments) {
    if (!FromRecorder(seg)) continue;
    std::set<std::tuple<uint32_t, uint32_t, uint64_t>> returned;  // (tid, probe, start)
    for (const CallRow& c : seg.data.calls) returned.insert({c.tid, c.probe, c.start_ns});
    std::map<std::pair<uint32_t, uint32_t>, uint64_t> last_enter;  // (pid, tid) -> its latest collective entry
    for (const CallEnterRow& r : seg.data.call_enters)
      if (const RecordedProbe* p = ProbeOf(seg, r.probe); p && HostCollective(p->kind)) {
        uint64_t& last = last_enter[{r.tgid, r.tid}];
        last = std::max(last, r.ts_ns);
      }
    for (const CallEnterRow& r : seg.data.call_enters) {
      const RecordedProbe* p = ProbeOf(seg, r.probe);
      if (!p || !HostCollective(p->kind) || returned.count({r.tid, r.probe, r.ts_ns})) continue;
      if (last_enter[{r.tgid, r.tid}] > r.ts_ns) continue;
      auto proc = seg.processes.find(static_cast<int>(r.tgid));
      if (proc == seg.processes.end() || proc->second.exited_ns != 0) continue;
      out.push_back({r.tgid, r.tid, r.ts_ns, r.comm, r.count, *p});
    }
  }
  return out;
}

void CarryInto(std::vector<CarriedEntry>* carried, RecordedRun* run, bool finished) {
  // Until the chunk's recorder has said which processes it records (its first block), nothing is judged.
  const bool knows_processes = std::any_of(run->segments.begin(), run->segments.end(), [](const RecordedSegment& s) {
    return FromRecorder(s) && !s.processes.empty();
  });
  if (!knows_processes) return;
  std::erase_if(*carried,
                [&](const CarriedEntry& e) { return SegmentOf(run, e.pid) == nullptr || ShownLeft(*run, e); });
  for (const CarriedEntry& e : *carried) {
    RecordedSegment* seg = SegmentOf(run, e.pid);
    const RecordedProcess& proc = seg->processes.at(static_cast<int>(e.pid));
    if (proc.exited_ns != 0) {
      const bool abnormal = proc.exit_signal.has_value() || proc.exit_code.value_or(0) != 0;
      if (!finished || !abnormal) continue;
    }
    seg->data.call_enters.push_back({e.tid, e.pid, ProbeIdIn(seg, e.probe), e.ts_ns, e.comm, e.count});
  }
}

}  // namespace strata::agent
