// Hangs and collective mismatches from Flight Recorder dumps (see flight_recorder_findings.h).
#include "analysis/diagnosis/flight_recorder_findings.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <iterator>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <tuple>

#include "analysis/diagnosis/cause_choice.h"
#include "analysis/diagnosis/stall.h"

namespace strata::diagnosis {
namespace {

bool IsP2pName(const std::string& name) {
  return name.find(":send") != std::string::npos || name.find(":recv") != std::string::npos;
}
bool IsMarker(const FrEntry& e) { return e.profiling_name.ends_with("coalesced"); }

// What one rank did at one number of one group's sequence: its entries there (a coalesced group's ops and the
// entry that closes the group).
struct RankOp {
  std::vector<const FrEntry*> ops;  // in ring order, the closing entry left out
  const FrEntry* marker = nullptr;
  FrState state = FrState::kScheduled;  // the furthest any of its entries got (a group's ops stay "scheduled")
  int64_t shown_seq = -1;               // the number as the dump wrote it
  const FrEntry& any() const { return ops.empty() ? *marker : *ops.front(); }
};

// One rank's view of one group's sequence.
struct RankSpace {
  std::map<int64_t, RankOp> at;
  int64_t enq = -1, done = -1;
  bool has_status = false;
  const FrEntry* last = nullptr;  // its last entry in this sequence
  int64_t first() const { return at.empty() ? -1 : at.begin()->first; }
};

struct SpaceKey {
  std::string group;
  bool p2p = false;
  auto operator<=>(const SpaceKey&) const = default;
};

struct Job {
  std::map<std::string, FrGroup> groups;  // pg_config of every dump (the first dump's where they differ)
  std::map<SpaceKey, std::map<int32_t, RankSpace>> spaces;
  std::map<int32_t, const FlightRecorderDump*> dumps;  // by rank
  std::map<int32_t, bool> wrapped;                     // its ring's first entry is not the rank's first
  int64_t latest_ns = 0;                               // the latest instant any dump saw
  std::vector<VerdictNote> problems;                   // what could not be judged
};

void AddEntries(const FlightRecorderDump& d, Job* job) {
  std::map<std::string, int64_t> ordinal;  // torchcomms: each entry's place among its group's entries
  for (const FrEntry& e : d.entries) {
    job->latest_ns = std::max({job->latest_ns, e.time_created_ns, e.time_discovered_started_ns.value_or(0),
                               e.time_discovered_completed_ns.value_or(0)});
    const bool torchcomms = d.dialect == FrDialect::kTorchcomms;
    const bool p2p = !torchcomms && (e.is_p2p || IsP2pName(e.profiling_name));
    const int64_t seq = torchcomms ? ordinal[e.pg_name]++ : p2p ? e.p2p_seq_id : e.collective_seq_id;
    if (seq < 0) continue;
    RankSpace& rs = job->spaces[{e.pg_name, p2p}][d.rank];
    RankOp& op = rs.at[seq];
    (IsMarker(e) ? op.marker : op.ops.emplace_back()) = &e;
    op.state = std::max(op.state, e.state);
    op.shown_seq = p2p ? e.p2p_seq_id : e.collective_seq_id;
    rs.last = &e;
  }
}

// pg_status (torch's per-group collective numbers) of the groups the dump's entries name by id, or whose
// name is the id.
void AddStatus(const FlightRecorderDump& d, Job* job) {
  if (d.dialect == FrDialect::kTorchcomms) return;  // its counters are not per group
  std::map<std::string, std::string> name_of_id;
  for (const FrEntry& e : d.entries) name_of_id[std::to_string(e.pg_id)] = e.pg_name;
  for (const auto& [id, status] : d.pg_status) {
    auto named = name_of_id.find(id);
    const std::string group = named != name_of_id.end() ? named->second : id;
    if (named == name_of_id.end() && !d.pg_config.count(group)) continue;
    RankSpace& rs = job->spaces[{group, false}][d.rank];
    rs.has_status = true;
    rs.enq = std::max(rs.enq, status.last_enqueued);
    rs.done = std::max(rs.done, status.last_completed);
  }
}

Job BuildJob(const FlightRecorderDumps& dumps) {
  Job job;
  for (const FlightRecorderDump& d : dumps.dumps) {
    job.dumps[d.rank] = &d;
    job.wrapped[d.rank] = !d.entries.empty() && d.entries[0].record_id > 0;
    for (const auto& [name, g] : d.pg_config) job.groups.emplace(name, g);
    if (d.dialect == FrDialect::kTorchcomms && job.wrapped[d.rank]) {
      job.problems.push_back(
          {NoteId::kTorchcommsRingWrapped, {std::to_string(d.rank), std::to_string(d.entries[0].record_id)}});
      continue;
    }
    AddEntries(d, &job);
    AddStatus(d, &job);
  }
  for (auto& [key, ranks] : job.spaces)
    for (auto& [rank, rs] : ranks)
      for (const auto& [seq, op] : rs.at) {
        rs.enq = std::max(rs.enq, seq);
        if (op.state == FrState::kCompleted) rs.done = std::max(rs.done, seq);
      }
  return job;
}

// A group's global ranks: pg_config's, else the ranks whose dumps hold its entries.
std::vector<int32_t> Members(const Job& job, const SpaceKey& key) {
  auto g = job.groups.find(key.group);
  if (g != job.groups.end() && !g->second.ranks.empty()) return g->second.ranks;
  std::vector<int32_t> out;
  for (const auto& [rank, rs] : job.spaces.at(key)) out.push_back(rank);
  return out;
}

std::string GroupName(const Job& job, const std::string& group) {
  auto g = job.groups.find(group);
  return g == job.groups.end() || g->second.desc.empty() ? fmt::format("pg {}", group)
                                                         : fmt::format("pg {} ({})", group, g->second.desc);
}

std::string OpText(const RankOp& op) {
  if (op.ops.size() <= 1 && !op.marker) return op.any().profiling_name;
  std::vector<std::string> names;
  for (const FrEntry* e : op.ops) names.push_back(e->profiling_name);
  return fmt::format("{} [{}]", op.marker ? op.marker->profiling_name : std::string("coalesced"),
                     fmt::join(names, ", "));
}

// A stalled number of one group's sequence: who waits in it, who never enqueued it, who enqueued it but never
// started it while others did.
struct DumpStall {
  SpaceKey key;
  int64_t seq = -1, shown_seq = -1;
  std::string op;
  std::vector<int32_t> waiting, missing, not_started;
  int64_t since_ns = 0;
  std::optional<int64_t> timeout_ms;
};

// The op at `seq` as the first waiting rank's ring holds it, and when the first waiting rank enqueued it.
void DescribeStalledOp(const std::map<int32_t, RankSpace>& ranks, DumpStall* s) {
  for (int32_t r : s->waiting) {
    auto rs = ranks.find(r);
    if (rs == ranks.end()) continue;
    auto op = rs->second.at.find(s->seq);
    if (op == rs->second.at.end()) continue;
    if (s->op.empty()) {
      s->op = OpText(op->second);
      s->shown_seq = op->second.shown_seq;
      s->timeout_ms = op->second.any().timeout_ms;
    }
    const int64_t created = op->second.any().time_created_ns;
    if (created > 0) s->since_ns = s->since_ns == 0 ? created : std::min(s->since_ns, created);
  }
  if (s->op.empty()) s->op = "an operation no ring holds";
  if (s->shown_seq < 0) s->shown_seq = s->seq;
}

// Ranks that enqueued the stalled number but whose entry never started while a peer's did (their stream was
// held elsewhere) hold the others up.
void SplitNotStarted(const std::map<int32_t, RankSpace>& ranks, DumpStall* s) {
  std::vector<int32_t> started, scheduled;
  for (int32_t r : s->waiting) {
    auto op = ranks.at(r).at.find(s->seq);
    if (op == ranks.at(r).at.end()) return;  // not known for every rank
    (op->second.state == FrState::kScheduled ? scheduled : started).push_back(r);
  }
  if (started.empty() || scheduled.empty()) return;
  s->not_started = scheduled;
  s->missing = scheduled;
  s->waiting = started;
}

// The collective sequence of one group: the stall at its first number some member has not completed, if any.
// A number any rank completed counts as completed by every rank that enqueued it (a collective completes on
// all its ranks or none; each rank's watchdog sees it at its own time).
std::optional<DumpStall> CollectiveStall(const Job& job, const SpaceKey& key, std::vector<VerdictNote>* problems) {
  const auto& ranks = job.spaces.at(key);
  int64_t done_any = -1;
  bool certain = false;  // some rank's completions are known
  for (const auto& [rank, rs] : ranks) {
    done_any = std::max(done_any, rs.done);
    certain |= rs.has_status || rs.done >= 0 || !job.wrapped.at(rank);
  }
  if (done_any == std::numeric_limits<int64_t>::max()) return std::nullopt;  // nothing can follow it
  DumpStall s;
  s.key = key;
  s.seq = done_any + 1;
  std::vector<int32_t> unknown;  // ranks whose wrapped ring holds nothing of the group
  for (int32_t m : Members(job, key)) {
    auto rs = ranks.find(m);
    if (rs != ranks.end() && rs->second.enq >= s.seq)
      s.waiting.push_back(m);
    else if (rs != ranks.end() || !job.dumps.count(m) || !job.wrapped.at(m))
      s.missing.push_back(m);
    else
      unknown.push_back(m);
  }
  if (s.waiting.empty()) return std::nullopt;
  if (!certain) {
    problems->push_back({NoteId::kGroupStopUnknown,
                         {GroupName(job, key.group), fmt::format("{}", fmt::join(s.waiting, ", ")),
                          std::to_string(ranks.begin()->second.first())}});
    return std::nullopt;
  }
  if (!unknown.empty())
    problems->push_back(
        {NoteId::kWrappedRingsHoldNothing,
         {GroupName(job, key.group), fmt::format("{}", fmt::join(unknown, ", ")), std::to_string(s.seq)}});
  if (s.missing.empty()) SplitNotStarted(ranks, &s);
  DescribeStalledOp(ranks, &s);
  return s;
}

// The ends of a P2P entry's name, "nccl:send 0->1" / "nccl:recv 1<-0": this rank's number, then its peer's.
struct P2pEnds {
  bool send = false;
  int64_t self = -1, peer = -1;
};

std::optional<P2pEnds> P2pPeer(const std::string& name) {
  for (const auto& [arrow, send] : {std::pair<const char*, bool>{"->", true}, {"<-", false}}) {
    const size_t at = name.rfind(arrow);
    if (at == std::string::npos) continue;
    size_t end = at + 2, begin = at;
    while (end < name.size() && end - at < 11 && std::isdigit(static_cast<unsigned char>(name[end]))) ++end;
    while (begin > 0 && at - begin < 9 && std::isdigit(static_cast<unsigned char>(name[begin - 1]))) --begin;
    if (end == at + 2) return std::nullopt;
    P2pEnds ends;
    ends.send = send;
    ends.peer = std::stoll(name.substr(at + 2, end - at - 2));
    if (begin < at) ends.self = std::stoll(name.substr(begin, at - begin));
    return ends;
  }
  return std::nullopt;
}

// The peer's global rank, -1 when it is no member of the group. The name's numbers are group ranks or global
// ranks: its own number says which (this rank's place in the group, or this rank); group ranks when it says
// neither. Without the group's ranks (no pg_config), the name's number as it is.
int32_t PeerRank(const Job& job, const std::string& group, int32_t rank, const P2pEnds& ends) {
  auto g = job.groups.find(group);
  if (g == job.groups.end() || g->second.ranks.empty()) return static_cast<int32_t>(ends.peer);
  const std::vector<int32_t>& ranks = g->second.ranks;
  const auto place = std::find(ranks.begin(), ranks.end(), rank) - ranks.begin();
  if (ends.self == rank && place != ends.self)  // global numbers
    return std::find(ranks.begin(), ranks.end(), ends.peer) != ranks.end() ? static_cast<int32_t>(ends.peer) : -1;
  return ends.peer >= 0 && static_cast<size_t>(ends.peer) < ranks.size() ? ranks[static_cast<size_t>(ends.peer)] : -1;
}

// The communicator as the evidence names it: the group's name (pg_config's key), " p2p" for its P2P sequence.
std::string CommName(const SpaceKey& key) { return key.p2p ? key.group + " p2p" : key.group; }

std::string SizesText(const std::vector<std::vector<int64_t>>& sizes) {
  std::vector<std::string> shapes;
  for (const auto& shape : sizes) shapes.push_back(fmt::format("[{}]", fmt::join(shape, ", ")));
  return fmt::format("[{}]", fmt::join(shapes, ", "));
}

// What ranks at one number must agree on: each op's name, input sizes and dtypes (a send and its recv: sizes).
struct Signature {
  std::string op, sizes, dtypes;
  auto operator<=>(const Signature&) const = default;
};

Signature SignatureOf(const RankOp& op, bool sizes_only) {
  std::vector<std::string> names, sizes, dtypes;
  for (const FrEntry* e : op.ops) {
    names.push_back(e->profiling_name);
    sizes.push_back(SizesText(e->input_sizes));
    if (!e->input_dtypes.empty()) dtypes.push_back(fmt::format("{}", fmt::join(e->input_dtypes, ", ")));
  }
  if (op.ops.empty()) names.push_back(op.marker->profiling_name);
  Signature s{fmt::format("{}", fmt::join(names, "; ")), fmt::format("{}", fmt::join(sizes, "; ")),
              fmt::format("{}", fmt::join(dtypes, "; "))};
  if (sizes_only) s.op = "send/recv";
  return s;
}

Finding MismatchFinding(const SpaceKey& key, int64_t shown_seq, const std::map<Signature, std::vector<int32_t>>& sides,
                        const std::string& group_name) {
  StallEvidence e;
  e.communicator = CommName(key);
  e.seq = shown_seq;
  std::vector<std::string> parts;
  Finding f;
  for (const auto& [sig, ranks] : sides) {
    StallEvidence::Call call;
    call.op = sig.op;
    call.ranks = ranks;
    call.sizes = sig.sizes;
    call.dtypes = sig.dtypes;
    e.calls.push_back(call);
    parts.push_back(fmt::format("rank(s) {} called {}", fmt::join(ranks, ", "), CalledText(call)));
    for (const int32_t r : ranks) f.ranks.emplace_back(r);
  }
  std::sort(f.ranks.begin(), f.ranks.end());
  SetCause(NameCause(PatternEvidence{.pattern = Pattern::kCollectiveMismatch}), &f);
  auto minority = std::min_element(e.calls.begin(), e.calls.end(),
                                   [](const auto& a, const auto& b) { return a.ranks.size() < b.ranks.size(); });
  if (minority->ranks.size() == 1 && e.calls.size() == 2 && f.ranks.size() > 2)
    f.rank = RankNumber(minority->ranks.front());
  f.op = minority->op;
  f.impact_pct = 100;
  f.summary = fmt::format("collective mismatch at {} #{}{}: {}", group_name, shown_seq, key.p2p ? " (p2p)" : "",
                          fmt::join(parts, "; "));
  f.evidence.kind = e;
  return f;
}

// The first number of a group's collective sequence at which the ranks whose rings hold it disagree.
std::optional<Finding> CollectiveMismatch(const Job& job, const SpaceKey& key) {
  std::map<int64_t, std::vector<std::pair<int32_t, const RankOp*>>> at;
  for (const auto& [rank, rs] : job.spaces.at(key))
    for (const auto& [seq, op] : rs.at)  // a wrapped ring's first number may have lost a coalesced group's first ops
      if (!(job.wrapped.at(rank) && seq == rs.first())) at[seq].push_back({rank, &op});
  for (const auto& [seq, calls] : at) {
    if (calls.size() < 2) continue;
    bool all_p2p = true;  // torchcomms numbers a send and its recv in the collective sequence
    for (const auto& [rank, op] : calls) all_p2p &= IsP2pName(op->any().profiling_name);
    std::map<Signature, std::vector<int32_t>> sides;
    for (const auto& [rank, op] : calls) sides[SignatureOf(*op, all_p2p)].push_back(rank);
    if (sides.size() >= 2)
      return MismatchFinding(key, calls.front().second->shown_seq, sides, GroupName(job, key.group));
  }
  return std::nullopt;
}

// Whether `peer_op` (on `peer`) is the other end of `op` (on `rank`): the opposite direction, naming `rank`,
// the same sizes.
bool P2pMatches(const Job& job, const SpaceKey& key, int32_t rank, const RankOp& op, int32_t peer,
                const RankOp& peer_op) {
  auto mine = P2pPeer(op.any().profiling_name);
  auto theirs = P2pPeer(peer_op.any().profiling_name);
  return mine && theirs && mine->send != theirs->send && PeerRank(job, key.group, peer, *theirs) == rank &&
         op.any().input_sizes == peer_op.any().input_sizes;
}

// One group's P2P sequence: each rank's first operation not completed, and whether the peer its name states
// enqueued the other end (by p2p_seq_id); a peer that did, with another op or size there, is a mismatch.
void P2pStalls(const Job& job, const SpaceKey& key, std::vector<DumpStall>* stalls, std::vector<Finding>* mismatches) {
  const auto& ranks = job.spaces.at(key);
  std::set<std::tuple<int64_t, int32_t, int32_t>> said;  // mismatches named: (number, lower rank, higher rank)
  for (const auto& [rank, rs] : ranks) {
    auto open =
        std::find_if(rs.at.begin(), rs.at.end(), [](const auto& kv) { return kv.second.state != FrState::kCompleted; });
    if (open == rs.at.end()) continue;
    auto peer = P2pPeer(open->second.any().profiling_name);
    if (!peer) continue;
    const int32_t p = PeerRank(job, key.group, rank, *peer);
    if (p < 0 || p == rank) continue;  // a peer outside the group, or itself: not a pair to judge
    auto prs = ranks.find(p);
    const bool no_dump = !job.dumps.count(p);
    const bool never = !no_dump && (prs == ranks.end() ? !job.wrapped.at(p) : prs->second.enq < open->first);
    if (!no_dump && !never) {
      if (prs == ranks.end()) continue;
      auto peer_op = prs->second.at.find(open->first);
      if (peer_op == prs->second.at.end() || P2pMatches(job, key, rank, open->second, p, peer_op->second)) continue;
      std::map<Signature, std::vector<int32_t>> sides;
      sides[SignatureOf(open->second, false)].push_back(rank);
      sides[SignatureOf(peer_op->second, false)].push_back(p);
      if (sides.size() >= 2 && said.insert({open->first, std::min(rank, p), std::max(rank, p)}).second)
        mismatches->push_back(MismatchFinding(key, open->second.shown_seq, sides, GroupName(job, key.group)));
      continue;
    }
    DumpStall s;
    s.key = key;
    s.seq = open->first;
    s.waiting = {rank};
    s.missing = {p};
    DescribeStalledOp(ranks, &s);
    stalls->push_back(std::move(s));
  }
}

// The innermost frame outside torch itself (where the user's code called in), else the innermost.
const FrFrame* UserFrame(const std::vector<FrFrame>& frames) {
  for (const FrFrame& f : frames)
    if (f.filename.find("/torch/") == std::string::npos && f.filename.find("\\torch\\") == std::string::npos) return &f;
  return frames.empty() ? nullptr : &frames.front();
}

std::string FrameText(const FrFrame& f) {
  const size_t slash = f.filename.find_last_of('/');
  return fmt::format("Python {} ({}:{})", f.name,
                     slash == std::string::npos ? f.filename : f.filename.substr(slash + 1), f.line);
}

// Where a rank missing from a stall was last seen: its dump's last entry of the group, its last entry at all
// (its Python frames), its last completion; or that it wrote no dump.
StalledRankState MissingState(const Job& job, const DumpStall& s, int32_t r) {
  StalledRankState st;
  st.rank = r;
  auto dump = job.dumps.find(r);
  if (dump == job.dumps.end()) {
    st.state = {RankStateKind::kNoDump, std::to_string(s.shown_seq), ""};
    st.observed_by = Observer::kPeersDumps;
    return st;
  }
  st.observed_by = Observer::kFlightRecorderDump;
  const auto& ranks = job.spaces.count(s.key) ? job.spaces.at(s.key) : std::map<int32_t, RankSpace>{};
  auto rs = ranks.find(r);
  const FrEntry* last = rs == ranks.end() ? nullptr : rs->second.last;
  if (std::find(s.not_started.begin(), s.not_started.end(), r) != s.not_started.end())
    st.state = {RankStateKind::kWorkNotStarted, std::to_string(s.shown_seq), ""};
  else if (last)
    st.state = {RankStateKind::kNeverEnqueued, std::to_string(s.shown_seq),
                fmt::format("{} #{} ({})", last->profiling_name, s.key.p2p ? last->p2p_seq_id : last->collective_seq_id,
                            FrStateName(last->state))};
  else
    st.state = {RankStateKind::kNeverEnqueued, std::to_string(s.shown_seq), ""};
  if (rs != ranks.end())
    for (auto it = rs->second.at.rbegin(); it != rs->second.at.rend(); ++it)
      if (it->second.state == FrState::kCompleted) {
        st.last_completed_seq = it->second.shown_seq;
        st.last_completed_op = OpText(it->second);
        break;
      }
  const std::vector<FrEntry>& entries = dump->second->entries;
  if (!entries.empty()) {
    if (const FrFrame* f = UserFrame(entries.back().frames)) st.frame = FrameText(*f);
    for (const FrFrame& f : entries.back().frames)
      st.python_stack.push_back(fmt::format("{} ({}:{})", f.name, f.filename, f.line));
  }
  return st;
}

std::string DumpHangSummary(const Job& job, const DumpStall& s, const StalledRankState& st) {
  const std::string in =
      fmt::format("{} ({} #{}{})", s.op, GroupName(job, s.key.group), s.shown_seq, s.key.p2p ? ", p2p" : "");
  const std::string seen = st.frame.empty() ? "" : fmt::format("; its last recorded call came from {}", st.frame);
  if (st.observed_by != Observer::kFlightRecorderDump)
    return fmt::format(
        "rank {} stopped: rank(s) {} wait in {}, which rank {}, a member of the group, never enqueued as far as "
        "their dumps show; rank {} wrote no dump among the inputs (inferred from its peers' dumps)",
        st.rank, fmt::join(s.waiting, ", "), in, st.rank, st.rank);
  return fmt::format("rank {} stopped: rank(s) {} wait in {}, which rank {} {}{}", st.rank, fmt::join(s.waiting, ", "),
                     in, st.rank, st.state, seen);
}

StallEvidence EvidenceOf(const Job& job, const DumpStall& s) {
  StallEvidence e;
  e.communicator = CommName(s.key);
  e.seq = s.shown_seq;
  e.op = s.op;
  e.waiting_ranks = s.waiting;
  e.missing_ranks = s.missing;
  e.stalled_since_unix = static_cast<double>(s.since_ns) / 1e9;
  // A dump does not say when it was written; torch writes it when the watchdog's timeout expires, so the
  // waiting ranks waited the timeout at least (else what the dumps saw after the stalled op was enqueued).
  e.threshold_s = s.timeout_ms ? static_cast<double>(*s.timeout_ms) / 1e3 : 0;
  if (s.since_ns > 0 && job.latest_ns > s.since_ns)
    e.stalled_for_s = static_cast<double>(job.latest_ns - s.since_ns) / 1e9;
  e.stalled_for_s = std::max(e.stalled_for_s, e.threshold_s);
  e.ongoing = true;
  for (int32_t r : s.missing) e.missing.push_back(MissingState(job, s, r));
  return e;
}

// Where each stall's missing ranks wait instead (another stall), as the wavefront says it.
std::vector<std::string> DumpWavefront(const Job& job, const std::vector<DumpStall>& stalls,
                                       const std::map<int32_t, const DumpStall*>& waits_in) {
  std::vector<std::string> out;
  for (const DumpStall& s : stalls)
    for (int32_t m : s.missing) {
      auto other = waits_in.find(m);
      if (other == waits_in.end() || other->second == &s) continue;
      out.push_back(fmt::format("rank {}, missing from {} ({} #{}), waits in {} ({} #{})", m, s.op,
                                GroupName(job, s.key.group), s.shown_seq, other->second->op,
                                GroupName(job, other->second->key.group), other->second->shown_seq));
    }
  return out;
}

// One `hang` finding per missing rank that waits in no other stall (each once, in the stall with the fewest
// missing ranks that names it: the one it holds up directly), with the wavefront; when no stall has such a
// rank (every rank waits somewhere), every missing rank; a stall every rank entered, one for its group.
std::vector<Finding> DumpHangFindings(const Job& job, std::vector<DumpStall> stalls) {
  std::stable_sort(stalls.begin(), stalls.end(),
                   [](const DumpStall& a, const DumpStall& b) { return a.missing.size() < b.missing.size(); });
  std::map<int32_t, const DumpStall*> waits_in;
  for (const DumpStall& s : stalls)
    for (int32_t r : s.waiting) waits_in.emplace(r, &s);
  const std::vector<std::string> wavefront = DumpWavefront(job, stalls, waits_in);
  bool any_culprit = false;
  for (const DumpStall& s : stalls)
    for (int32_t m : s.missing) any_culprit |= !waits_in.count(m);
  std::vector<Finding> out;
  std::set<int32_t> named;
  for (const DumpStall& s : stalls) {
    StallEvidence e = EvidenceOf(job, s);
    e.wavefront = wavefront;
    if (s.missing.empty()) {
      out.push_back(
          JobStoppedFinding(s.waiting, s.op,
                            fmt::format("the job stopped: every rank of {} ({}) enqueued {} #{} and none completed it",
                                        GroupName(job, s.key.group), fmt::join(s.waiting, ", "), s.op, s.shown_seq),
                            e));
      continue;
    }
    // Members without a dump cannot be told apart: with several, each is one candidate of them.
    const auto absent = static_cast<double>(
        std::count_if(s.missing.begin(), s.missing.end(), [&](int32_t m) { return !job.dumps.count(m); }));
    for (const StalledRankState& st : e.missing) {
      if ((any_culprit && waits_in.count(st.rank)) || !named.insert(st.rank).second) continue;
      const bool undumped = !job.dumps.count(st.rank);
      Finding f;
      SetCause(
          NameCause(PatternEvidence{.pattern = Pattern::kRankStopped, .explained = 1, .effect = undumped ? absent : 1}),
          &f);
      f.rank = RankNumber(st.rank);
      f.op = s.op;
      f.impact_pct = 100;
      f.summary = DumpHangSummary(job, s, st);
      if (undumped && absent > 1)
        f.summary += fmt::format(" (one of {} members without a dump: the dumps cannot tell which held the others up)",
                                 static_cast<int>(absent));
      f.evidence.kind = e;
      out.push_back(std::move(f));
    }
  }
  return out;
}

// Members of a group with no dump (not named by a finding) and keys the decoder did not know: said, judged around.
void Caveats(const Job& job, const std::vector<Finding>& findings, std::vector<VerdictNote>* caveats) {
  std::set<int32_t> absent;
  for (const auto& [name, g] : job.groups)
    for (int32_t r : g.ranks)
      if (!job.dumps.count(r)) absent.insert(r);
  for (const Finding& f : findings)
    if (f.rank) absent.erase(f.rank->value());
  if (!absent.empty()) caveats->push_back({NoteId::kMembersWithoutDump, {fmt::format("{}", fmt::join(absent, ", "))}});
  for (const auto& [rank, d] : job.dumps)
    if (d->unknown_keys > 0)
      caveats->push_back(
          {NoteId::kUnknownDumpKeys, {d->path, std::to_string(d->unknown_keys), fmt::format("{}", d->version)}});
}

}  // namespace

FlightRecorderJudgement JudgeFlightRecorder(const FlightRecorderDumps& dumps) {
  FlightRecorderJudgement out;
  Job job = BuildJob(dumps);
  out.problems = job.problems;
  std::vector<DumpStall> stalls;
  std::vector<Finding> mismatches;
  for (const auto& [key, ranks] : job.spaces) {
    if (key.p2p) {
      P2pStalls(job, key, &stalls, &mismatches);
      continue;
    }
    if (std::optional<Finding> m = CollectiveMismatch(job, key)) mismatches.push_back(std::move(*m));
    if (std::optional<DumpStall> s = CollectiveStall(job, key, &out.problems)) stalls.push_back(std::move(*s));
  }
  out.findings = std::move(mismatches);
  for (Finding& f : DumpHangFindings(job, stalls)) out.findings.push_back(std::move(f));
  for (Finding& f : out.findings) f.evidence.from = EvidenceSource::kFlightRecorderDumps;
  Caveats(job, out.findings, &out.caveats);
  return out;
}

std::optional<std::string> CompareWithRecording(const std::vector<Finding>& recorded,
                                                const FlightRecorderJudgement& dumps) {
  auto stopped = [](const std::vector<Finding>& findings) {
    std::set<int32_t> out;
    for (const Finding& f : findings)
      if (f.cause == Cause::kHang && f.rank) out.insert(f.rank->value());
    return out;
  };
  const std::set<int32_t> by_recording = stopped(recorded), by_dumps = stopped(dumps.findings);
  if (by_recording.empty() && by_dumps.empty()) return std::nullopt;
  auto named = [](const std::set<int32_t>& ranks) {
    return ranks.empty() ? std::string("no rank") : fmt::format("rank(s) {}", fmt::join(ranks, ", "));
  };
  if (by_recording == by_dumps)
    return fmt::format("the recording and the Flight Recorder dumps agree: {} stopped", named(by_dumps));
  return fmt::format(
      "the recording and the Flight Recorder dumps differ: the recording names {} as stopped, the "
      "dumps {}",
      named(by_recording), named(by_dumps));
}

void ApplyFlightRecorderJudgement(FlightRecorderJudgement judgement, DiagnosisResult* result) {
  result->findings.insert(result->findings.begin(), std::make_move_iterator(judgement.findings.begin()),
                          std::make_move_iterator(judgement.findings.end()));
  for (VerdictNote& p : judgement.problems) result->verdict_notes.push_back(std::move(p));
  for (VerdictNote& c : judgement.caveats) result->verdict_notes.push_back(std::move(c));
}

}  // namespace strata::diagnosis
