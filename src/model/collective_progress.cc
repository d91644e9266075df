// CollectiveProgress: each rank's collectives by communicator and sequence number (see collective_progress.h).
#include "model/collective_progress.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <deque>
#include <limits>
#include <set>
#include <tuple>
#include <utility>

#include "core/robust_stats.h"
#include "importers/gloo_buffer_bytes.h"
#include "model/model_thresholds.h"

namespace strata::model {
namespace {

bool IsP2p(const std::string& op) { return op == "send" || op == "recv"; }

// One process's collective rows, on the Unix clock.
struct ProcessRows {
  const RecordedSegment* seg = nullptr;
  uint32_t pid = 0;
  std::vector<const segments::CallEnterRow*> enters;  // in time order
  std::map<CallEntryKey, uint64_t> returns;           // (tid, probe, start) -> end
};

const RecordedProbe* ProbeOf(const RecordedSegment& seg, uint32_t id) {
  return id < seg.probes.size() ? &seg.probes[id] : nullptr;
}

// The processes of `seg` that called collectives, with their rows.
std::map<uint32_t, ProcessRows> RowsByProcess(const RecordedSegment& seg) {
  std::map<uint32_t, ProcessRows> out;
  for (const segments::CallEnterRow& e : seg.data.call_enters) {
    ProcessRows& p = out[e.tgid];
    p.seg = &seg;
    p.pid = e.tgid;
    p.enters.push_back(&e);
  }
  for (auto& [pid, p] : out)
    std::stable_sort(p.enters.begin(), p.enters.end(),
                     [](const auto* a, const auto* b) { return a->ts_ns < b->ts_ns; });
  for (const segments::CallRow& c : seg.data.calls) {
    auto it = out.find(c.tgid);
    if (it != out.end()) it->second.returns[{c.tid, c.probe, c.start_ns}] = c.end_ns;
  }
  return out;
}

// Numbers the calls per (communicator, p2p) in call order.
void NumberCalls(std::vector<RankCollective>* calls) {
  std::map<std::pair<std::string, bool>, int64_t> next;
  for (RankCollective& c : *calls) c.seq = next[{c.comm, c.p2p}]++;
}

// From the NCCL profiler plugin's rows: the k-th enqueue, start and done of a communicator are collective k.
std::vector<RankCollective> FromPlugin(const ProcessRows& p) {
  std::vector<RankCollective> calls;
  std::map<uint64_t, std::vector<size_t>> by_comm;  // commHash -> indexes in `calls`
  std::map<uint64_t, size_t> started, done;
  for (const segments::CallEnterRow* e : p.enters) {
    const RecordedProbe* probe = ProbeOf(*p.seg, e->probe);
    if (!probe) continue;
    const int64_t t = p.seg->UnixNs(e->ts_ns);
    if (probe->kind == segments::ProbeKind::kCollectiveDeviceEnqueue) {
      RankCollective c;
      c.comm = fmt::format("{:016x}", e->comm);
      c.op = probe->op;
      c.p2p = IsP2p(c.op);
      c.count = e->count;
      c.enter_unix_ns = t;
      by_comm[e->comm].push_back(calls.size());
      calls.push_back(std::move(c));
      continue;
    }
    const bool start = probe->kind == segments::ProbeKind::kCollectiveDeviceStart;
    if (!start && probe->kind != segments::ProbeKind::kCollectiveDeviceDone) continue;
    size_t& k = (start ? started : done)[e->comm];
    const auto& list = by_comm[e->comm];
    if (k >= list.size()) continue;  // a start or done without its enqueue (recorded from the middle)
    RankCollective& c = calls[list[k++]];
    if (start) {
      c.start_unix_ns = t;
      if (c.state == CallState::kEnqueued) c.state = CallState::kInside;
    } else {
      c.done_unix_ns = t;
      c.state = CallState::kDone;
    }
  }
  NumberCalls(&calls);
  return calls;
}

// From c10d's calls, each paired with the gloo algorithm of the same op that ran it (the next one of that op
// to start after the call); without c10d calls, the algorithms alone (or the NCCL API alone).
std::vector<RankCollective> FromHostProbes(const ProcessRows& p, bool* tracks_completion) {
  std::vector<const segments::CallEnterRow*> c10d, algorithms, nccl_api;
  const std::map<CallEntryKey, uint64_t> bytes_of = GlooAlgorithmBytes(*p.seg, p.enters, p.returns);
  for (const segments::CallEnterRow* e : p.enters) {
    const RecordedProbe* probe = ProbeOf(*p.seg, e->probe);
    if (!probe) continue;
    const bool c10d_call =
        probe->kind == segments::ProbeKind::kCollectiveEnqueue && probe->symbol.rfind("c10d::", 0) == 0;
    // A c10d call made before every probe was attached may have had its algorithm run unseen (c10d's probes
    // attach before libgloo's): paired in order, every later call took its successor's algorithm, and the last
    // none ("never entered", 2026-11-28 on a live hang). c10d calls count from the attachment on; an earlier
    // algorithm is still read (a chunk carries open ones over: agent/chunk_carry.h) and pairs with no call.
    if (c10d_call && e->ts_ns < p.seg->attached_ns) continue;
    if (probe->kind == segments::ProbeKind::kCollective)
      algorithms.push_back(e);
    else if (probe->kind == segments::ProbeKind::kCollectiveEnqueue)
      (c10d_call ? c10d : nccl_api).push_back(e);
  }
  *tracks_completion = !algorithms.empty();
  auto returned = [&](const segments::CallEnterRow* e) -> int64_t {
    auto it = p.returns.find({e->tid, e->probe, e->ts_ns});
    return it == p.returns.end() ? 0 : p.seg->UnixNs(it->second);
  };
  const std::vector<const segments::CallEnterRow*>& calls_in = !c10d.empty()         ? c10d
                                                               : !algorithms.empty() ? algorithms
                                                                                     : nccl_api;
  const bool paired = !c10d.empty() && !algorithms.empty();
  std::map<std::string, std::deque<const segments::CallEnterRow*>> algorithm_queue;
  if (paired)
    for (const segments::CallEnterRow* a : algorithms) algorithm_queue[ProbeOf(*p.seg, a->probe)->op].push_back(a);
  std::map<uint64_t, int> group_of;  // a c10d process group's `this` -> its order of first use
  std::vector<RankCollective> calls;
  for (const segments::CallEnterRow* e : calls_in) {
    RankCollective c;
    c.op = ProbeOf(*p.seg, e->probe)->op;
    c.p2p = IsP2p(c.op);
    c.count = e->count;
    const int group = c10d.empty() ? 0 : group_of.try_emplace(e->comm, static_cast<int>(group_of.size())).first->second;
    c.comm = fmt::format("pg{}", group);
    c.enter_unix_ns = p.seg->UnixNs(e->ts_ns);
    const segments::CallEnterRow* run = paired ? nullptr : e;
    if (paired) {
      auto& queue = algorithm_queue[c.op];
      while (!queue.empty() && queue.front()->ts_ns < e->ts_ns) queue.pop_front();  // ran for an unseen call
      if (!queue.empty()) {
        run = queue.front();
        queue.pop_front();
      }
    }
    if (run != nullptr) {
      if (auto b = bytes_of.find({run->tid, run->probe, run->ts_ns}); b != bytes_of.end()) c.bytes = b->second;
      c.start_unix_ns = p.seg->UnixNs(run->ts_ns);
      c.done_unix_ns = returned(run);
      c.state = c.done_unix_ns != 0 ? CallState::kDone : CallState::kInside;
    }
    if (!*tracks_completion && c.state != CallState::kDone) {
      // NCCL's API and c10d's NCCL methods return at launch: a returned call is "done" as far as the host goes.
      c.done_unix_ns = returned(e);
      if (c.done_unix_ns != 0) c.state = CallState::kDone;
    }
    calls.push_back(std::move(c));
  }
  NumberCalls(&calls);
  return calls;
}

// A communicator runs its collectives in order: once a later one completed, an earlier one the recording
// saw no completion of (its algorithm is not probed: c10d's allgather over gloo, broadcast_coalesced) has
// completed too, by that time at the latest.
void CompleteInOrder(std::vector<RankCollective>* calls) {
  std::map<std::pair<std::string, bool>, int64_t> later_done;
  for (auto it = calls->rbegin(); it != calls->rend(); ++it) {
    int64_t& done = later_done[{it->comm, it->p2p}];
    if (it->state == CallState::kDone) {
      done = done == 0 ? it->done_unix_ns : std::min(done, it->done_unix_ns);
    } else if (done != 0) {
      it->state = CallState::kDone;
      it->done_unix_ns = done;
    }
  }
}

bool HasPluginRows(const ProcessRows& p) {
  for (const segments::CallEnterRow* e : p.enters)
    if (const RecordedProbe* probe = ProbeOf(*p.seg, e->probe); probe && segments::IsDeviceState(probe->kind))
      return true;
  return false;
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

// How well shift `d` lines a rank's completed collectives of one communicator up with the reference's:
// call seq s of the rank against the reference's s + d. Collectives complete together (within the ranks'
// skew and the hosts' clock offset), so the right shift has the smallest median |completion difference|
// and no op disagreements.
struct ShiftFit {
  int64_t shift = 0;
  size_t pairs = 0;
  double disagree = 0;  // share of the pairs whose ops differ
  double median_abs_ns = std::numeric_limits<double>::infinity();
};

using DoneBySeq = std::map<int64_t, const RankCollective*>;

DoneBySeq CompletedOf(const RankProgress& rp, const std::pair<std::string, bool>& key) {
  DoneBySeq out;
  for (const RankCollective& c : rp.calls)
    if (c.comm == key.first && c.p2p == key.second && c.state == CallState::kDone) out[c.seq] = &c;
  return out;
}

ShiftFit FitShift(const DoneBySeq& mine, const DoneBySeq& ref, int64_t d) {
  ShiftFit fit;
  fit.shift = d;
  std::vector<double> gaps;
  size_t differ = 0;
  for (const auto& [seq, c] : mine) {
    auto it = ref.find(seq + d);
    if (it == ref.end()) continue;
    gaps.push_back(std::fabs(static_cast<double>(c->done_unix_ns - it->second->done_unix_ns)));
    differ += c->op != it->second->op;
  }
  fit.pairs = gaps.size();
  if (gaps.empty()) return fit;
  fit.disagree = static_cast<double>(differ) / static_cast<double>(gaps.size());
  fit.median_abs_ns = Median(std::move(gaps));
  return fit;
}

bool Better(const ShiftFit& a, const ShiftFit& b) {
  if (a.pairs == 0 || b.pairs == 0) return a.pairs > b.pairs;
  if (a.disagree != b.disagree) return a.disagree < b.disagree;
  return a.median_abs_ns < b.median_abs_ns;
}

// The shift of one rank's numbers against the reference's for one communicator, and whether it is certain:
// shifts within kSeqAlignSearch of the one that puts its first completion at the reference's nearest are
// fitted (FitShift); the best is certain when it pairs at least kSeqAlignMinPairs calls and every other
// candidate disagrees on more ops or lines up clearly worse (median beyond kSeqAlignAmbiguousRatio × the
// best's plus kSeqAlignSlackNs): a perfectly regular loop of one op matches itself a step off otherwise.
std::pair<int64_t, bool> RankShift(const DoneBySeq& mine, const DoneBySeq& ref) {
  constexpr int64_t kSeqAlignSearch = 8;  // a method constant: how far from the first guess shifts are tried
  if (mine.empty() || ref.empty()) return {0, false};
  const RankCollective& first = *mine.begin()->second;
  int64_t guess = 0;
  int64_t nearest = std::numeric_limits<int64_t>::max();
  for (const auto& [seq, r] : ref)
    if (std::llabs(r->done_unix_ns - first.done_unix_ns) < nearest) {
      nearest = std::llabs(r->done_unix_ns - first.done_unix_ns);
      guess = seq - first.seq;
    }
  std::vector<ShiftFit> fits;
  for (int64_t d = guess - kSeqAlignSearch; d <= guess + kSeqAlignSearch; ++d) fits.push_back(FitShift(mine, ref, d));
  const ShiftFit best = *std::min_element(fits.begin(), fits.end(), Better);
  if (best.pairs < thresholds::kSeqAlignMinPairs) return {guess, false};
  const double bound = thresholds::kSeqAlignAmbiguousRatio * best.median_abs_ns + thresholds::kSeqAlignSlackNs;
  bool certain = true;
  for (const ShiftFit& f : fits)
    if (f.shift != best.shift && f.pairs > 0 && f.disagree <= best.disagree && f.median_abs_ns <= bound)
      certain = false;
  return {best.shift, certain};
}

// Shifts each rank's sequence numbers, per communicator, onto the reference's (the lowest rank with a
// completed collective of it) by RankShift. Returns whether any rank's numbers moved (false: every rank was
// recorded from the same collective on); `certain` is cleared when any shift was not certain.
bool AlignByCompletion(CollectiveProgress* progress, bool* certain) {
  bool moved = false;
  std::map<std::pair<std::string, bool>, const RankProgress*> reference;
  for (const auto& [rank, rp] : progress->ranks)
    for (const RankCollective& c : rp.calls)
      if (c.state == CallState::kDone) reference.try_emplace({c.comm, c.p2p}, &rp);
  std::map<std::pair<std::string, bool>, DoneBySeq> reference_done;  // each reference's, built once
  for (const auto& [key, ref] : reference) reference_done[key] = CompletedOf(*ref, key);
  std::map<int32_t, std::map<std::pair<std::string, bool>, int64_t>> shifts;
  for (const auto& [rank, rp] : progress->ranks)
    for (const auto& [key, ref] : reference) {
      if (ref == &rp) continue;
      const DoneBySeq mine = CompletedOf(rp, key);
      if (mine.empty()) continue;
      const auto [shift, sure] = RankShift(mine, reference_done[key]);
      shifts[rank][key] = shift;
      *certain &= sure;
    }
  for (auto& [rank, rp] : progress->ranks)
    for (RankCollective& c : rp.calls) {
      const int64_t d = shifts[rank][{c.comm, c.p2p}];
      c.seq += d;
      moved |= d != 0;
    }
  return moved;
}

}  // namespace

const char* CallStateName(CallState s) {
  switch (s) {
    case CallState::kEnqueued:
      return "enqueued";
    case CallState::kInside:
      return "inside";
    case CallState::kDone:
      break;
  }
  return "done";
}

CollectiveProgress BuildCollectiveProgress(const RecordedRun& run, std::optional<int64_t> now_unix_ns) {
  CollectiveProgress out;
  // Numbers count from each communicator's first collective when the writer saw it: the NCCL plugin (loaded
  // at communicator init) or a recorder that started the job. Otherwise they are aligned by time.
  bool all_from_start = true;
  for (size_t s = 0; s < run.segments.size(); ++s) {
    const RecordedSegment& seg = run.segments[s];
    const int64_t end = now_unix_ns ? *now_unix_ns : seg.UnixNs(SegmentEnd(seg));
    out.end_unix_ns = std::max(out.end_unix_ns, end);
    for (const auto& [pid, proc] : seg.processes)
      if (proc.rank) out.ranks_seen.insert(*proc.rank);
    for (const auto& [pid, proc] : seg.processes)
      if (proc.world_size && *proc.world_size > 0)
        out.world_size = std::max(out.world_size.value_or(0), *proc.world_size);
    for (const RecordedCommunicator& c : seg.communicators)
      if (c.nranks > 0) out.world_size = std::max(out.world_size.value_or(0), c.nranks);
    for (const auto& [pid, rows] : RowsByProcess(seg)) {
      const std::optional<int> rank = seg.RankOf(pid);
      if (!rank) continue;
      RankProgress rp;
      rp.rank = *rank;
      rp.pid = pid;
      rp.segment = s;
      if (HasPluginRows(rows)) {
        rp.calls = FromPlugin(rows);
        rp.tracks_completion = true;
        rp.device = true;
      } else {
        all_from_start &= seg.launched;
        rp.calls = FromHostProbes(rows, &rp.tracks_completion);
      }
      if (rp.tracks_completion) CompleteInOrder(&rp.calls);
      const RecordedProcess& proc =
          seg.processes.count(static_cast<int>(pid)) ? seg.processes.at(static_cast<int>(pid)) : RecordedProcess{};
      rp.horizon_unix_ns = end;
      if (proc.exited_ns != 0) {
        rp.exited_unix_ns = seg.UnixNs(proc.exited_ns);
        rp.horizon_unix_ns = std::min(end, *rp.exited_unix_ns);
      }
      rp.exit_code = proc.exit_code;
      rp.exit_signal = proc.exit_signal;
      // One process per rank: the one with the most collective calls (a restarted rank's last run wins ties).
      auto it = out.ranks.find(rp.rank);
      if (it == out.ranks.end() || it->second.calls.size() <= rp.calls.size()) out.ranks[rp.rank] = std::move(rp);
    }
  }
  if (!all_from_start && out.ranks.size() > 1) {
    bool certain = true;
    out.aligned_by_time = AlignByCompletion(&out, &certain);
    out.numbers_certain = certain;
  }
  return out;
}

}  // namespace strata::model
