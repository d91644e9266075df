// CollectiveProgress: each rank's collectives by communicator and sequence number (see collective_progress.h).
#include "model/collective_progress.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <deque>
#include <limits>
#include <map>
#include <set>
#include <tuple>
#include <utility>

#include "core/robust_stats.h"
#include "model/model_thresholds.h"

namespace strata::model {
namespace {

bool IsP2p(const std::string& op) { return op == "send" || op == "recv"; }

bool IsPlugin(RecordedCallSource s) {
  return s == RecordedCallSource::kPluginEnqueue || s == RecordedCallSource::kPluginStart ||
         s == RecordedCallSource::kPluginDone;
}

// Numbers the calls per (communicator, p2p) in call order.
void NumberCalls(std::vector<RankCollective>* calls) {
  std::map<std::pair<std::string, bool>, int64_t> next;
  for (RankCollective& c : *calls) c.seq = next[{c.comm, c.p2p}]++;
}

// From the NCCL profiler plugin's calls: the k-th enqueue, start and done of a communicator are collective k.
std::vector<RankCollective> FromPlugin(const std::vector<RecordedCall>& recorded) {
  std::vector<RankCollective> calls;
  std::map<uint64_t, std::vector<size_t>> by_comm;  // commHash -> indexes in `calls`
  std::map<uint64_t, size_t> started, done;
  for (const RecordedCall& e : recorded) {
    if (e.source == RecordedCallSource::kPluginEnqueue) {
      RankCollective c;
      c.comm = fmt::format("{:016x}", e.comm);
      c.op = e.op;
      c.p2p = IsP2p(c.op);
      c.count = e.count;
      c.enter_unix_ns = e.entered_unix_ns;
      by_comm[e.comm].push_back(calls.size());
      calls.push_back(std::move(c));
      continue;
    }
    const bool start = e.source == RecordedCallSource::kPluginStart;
    if (!start && e.source != RecordedCallSource::kPluginDone) continue;
    size_t& k = (start ? started : done)[e.comm];
    const auto& list = by_comm[e.comm];
    if (k >= list.size()) continue;  // a start or done without its enqueue (recorded from the middle)
    RankCollective& c = calls[list[k++]];
    if (start) {
      c.start_unix_ns = e.entered_unix_ns;
      if (c.state == CallState::kEnqueued) c.state = CallState::kInside;
    } else {
      c.done_unix_ns = e.entered_unix_ns;
      c.state = CallState::kDone;
    }
  }
  NumberCalls(&calls);
  return calls;
}

// From c10d's calls, each paired with the gloo algorithm of the same op that ran it (the next one of that op
// to start after the call); without c10d calls, the algorithms alone (or the NCCL API alone).
std::vector<RankCollective> FromHostProbes(const std::vector<RecordedCall>& recorded, bool* tracks_completion) {
  std::vector<const RecordedCall*> c10d, algorithms, nccl_api;
  for (const RecordedCall& e : recorded) {
    if (e.source == RecordedCallSource::kAlgorithm)
      algorithms.push_back(&e);
    else if (e.source == RecordedCallSource::kC10d)
      c10d.push_back(&e);
    else if (e.source == RecordedCallSource::kNcclApi)
      nccl_api.push_back(&e);
  }
  *tracks_completion = !algorithms.empty();
  const std::vector<const RecordedCall*>& calls_in = !c10d.empty() ? c10d : !algorithms.empty() ? algorithms : nccl_api;
  const bool paired = !c10d.empty() && !algorithms.empty();
  std::map<std::string, std::deque<const RecordedCall*>> algorithm_queue;
  if (paired)
    for (const RecordedCall* a : algorithms) algorithm_queue[a->op].push_back(a);
  std::map<uint64_t, int> group_of;  // a c10d process group's `this` -> its order of first use
  std::vector<RankCollective> calls;
  for (const RecordedCall* e : calls_in) {
    RankCollective c;
    c.op = e->op;
    c.p2p = IsP2p(c.op);
    c.count = e->count;
    const int group = c10d.empty() ? 0 : group_of.try_emplace(e->comm, static_cast<int>(group_of.size())).first->second;
    c.comm = fmt::format("pg{}", group);
    c.enter_unix_ns = e->entered_unix_ns;
    const RecordedCall* run = paired ? nullptr : e;
    if (paired) {
      auto& queue = algorithm_queue[c.op];
      while (!queue.empty() && queue.front()->entered_unix_ns < e->entered_unix_ns)
        queue.pop_front();  // ran for an unseen call
      if (!queue.empty()) {
        run = queue.front();
        queue.pop_front();
      }
    }
    if (run != nullptr) {
      c.bytes = run->bytes;
      c.start_unix_ns = run->entered_unix_ns;
      c.done_unix_ns = run->returned_unix_ns;
      c.state = c.done_unix_ns != 0 ? CallState::kDone : CallState::kInside;
    }
    if (!*tracks_completion && c.state != CallState::kDone) {
      // NCCL's API and c10d's NCCL methods return at launch: a returned call is "done" as far as the host goes.
      c.done_unix_ns = e->returned_unix_ns;
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

bool HasPluginCalls(const std::vector<RecordedCall>& calls) {
  return std::any_of(calls.begin(), calls.end(), [](const RecordedCall& c) { return IsPlugin(c.source); });
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

CollectiveProgress BuildCollectiveProgress(const RecordedCollectiveCalls& recorded,
                                           std::optional<int64_t> now_unix_ns) {
  CollectiveProgress out;
  out.end_unix_ns = now_unix_ns && recorded.segments > 0 ? *now_unix_ns : recorded.end_unix_ns;
  out.ranks_seen = recorded.ranks_seen;
  out.world_size = recorded.world_size;
  // Numbers count from each communicator's first collective when the writer saw it: the NCCL plugin (loaded
  // at communicator init) or a recorder that started the job. Otherwise they are aligned by time.
  bool all_from_start = true;
  for (const RecordedRankCalls& process : recorded.processes) {
    RankProgress rp;
    rp.rank = process.rank;
    rp.pid = process.pid;
    rp.segment = process.segment;
    if (HasPluginCalls(process.calls)) {
      rp.calls = FromPlugin(process.calls);
      rp.tracks_completion = true;
      rp.device = true;
    } else {
      all_from_start &= process.launched;
      rp.calls = FromHostProbes(process.calls, &rp.tracks_completion);
    }
    if (rp.tracks_completion) CompleteInOrder(&rp.calls);
    const int64_t end = now_unix_ns ? *now_unix_ns : process.segment_end_unix_ns;
    rp.horizon_unix_ns = end;
    if (process.exited_unix_ns) {
      rp.exited_unix_ns = process.exited_unix_ns;
      rp.horizon_unix_ns = std::min(end, *rp.exited_unix_ns);
    }
    rp.exit_code = process.exit_code;
    rp.exit_signal = process.exit_signal;
    // One process per rank: the one with the most collective calls (a restarted rank's last run wins ties).
    auto it = out.ranks.find(rp.rank);
    if (it == out.ranks.end() || it->second.calls.size() <= rp.calls.size()) out.ranks[rp.rank] = std::move(rp);
  }
  if (!all_from_start && out.ranks.size() > 1) {
    bool certain = true;
    out.aligned_by_time = AlignByCompletion(&out, &certain);
    out.numbers_certain = certain;
  }
  return out;
}

namespace {

using DoneAt = std::map<std::pair<int32_t, CollectiveKey>, int64_t>;  // (rank, key) -> completion time

// CallsAtNumber::completed_apart of one number's calls.
bool CompletedApart(const CollectiveKey& key, const CallsAtNumber& at, const DoneAt& done_at) {
  int64_t first = std::numeric_limits<int64_t>::max(), last = std::numeric_limits<int64_t>::min();
  int64_t half_gap = std::numeric_limits<int64_t>::max();
  for (const auto& [rank, call] : at.calls) {
    const auto done = done_at.find({rank, key});
    if (done == done_at.end()) return false;
    first = std::min(first, done->second);
    last = std::max(last, done->second);
    for (const int64_t d : {int64_t{-1}, int64_t{1}}) {
      const auto n = done_at.find({rank, CollectiveKey{key.comm, key.p2p, key.seq + d}});
      if (n != done_at.end()) half_gap = std::min(half_gap, std::abs(n->second - done->second) / 2);
    }
  }
  if (half_gap == std::numeric_limits<int64_t>::max()) return false;
  return last - first > std::max(thresholds::kSeqAlignSlackNs, half_gap);
}

}  // namespace

std::vector<CallsAtNumber> CallsByNumber(const CollectiveProgress& p) {
  std::map<CollectiveKey, CallsAtNumber> at;
  DoneAt done_at;
  for (const auto& [rank, rp] : p.ranks)
    for (const RankCollective& c : rp.calls) {
      CallsAtNumber& here = at[KeyOf(c)];
      here.calls.push_back({rank, &c});
      if (rp.tracks_completion && c.state == CallState::kDone && c.done_unix_ns != 0)
        done_at[{rank, KeyOf(c)}] = c.done_unix_ns;
    }
  std::vector<CallsAtNumber> out;
  out.reserve(at.size());
  for (auto& [key, calls] : at) {
    calls.key = key;
    calls.completed_apart = CompletedApart(key, calls, done_at);
    out.push_back(std::move(calls));
  }
  return out;
}

}  // namespace strata::model
