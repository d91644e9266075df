// Stalls and mismatches of a recorded job (see stall.h).
#include "analysis/diagnosis/stall.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <limits>
#include <map>
#include <set>
#include <tuple>

#include "analysis/diagnosis/cause_choice.h"
#include "analysis/diagnosis/rank_whereabouts.h"
#include "core/robust_stats.h"
#include "model/collective_progress.h"
#include "model/model_thresholds.h"
#include "store/slice_names.h"

namespace strata::diagnosis {
namespace {

using model::CallsAtNumber;
using model::CallState;
using model::CollectiveKey;
using model::CollectiveProgress;
using model::KeyOf;
using model::RankCollective;
using model::RankProgress;

constexpr size_t kMaxWavefront = 4;

std::string Describe(const CollectiveKey& k, const std::string& op) {
  return fmt::format("{} ({}{} #{})", op, k.comm, k.p2p ? " p2p" : "", k.seq);
}

double ToS(int64_t unix_ns) { return static_cast<double>(unix_ns) / 1e9; }

// Each rank's 90th percentile gap between consecutive completions (or entries, where completions are not
// seen), the median over ranks; 0 when no rank has three.
double TypicalGapS(const CollectiveProgress& p) {
  std::vector<double> per_rank;
  for (const auto& [rank, rp] : p.ranks) {
    std::vector<int64_t> times;
    for (const RankCollective& c : rp.calls)
      if (rp.tracks_completion ? c.state == CallState::kDone : true)
        times.push_back(rp.tracks_completion ? c.done_unix_ns : c.enter_unix_ns);
    std::sort(times.begin(), times.end());
    if (times.size() < 3) continue;
    std::vector<double> gaps;
    for (size_t i = 1; i < times.size(); ++i) gaps.push_back(ToS(times[i] - times[i - 1]));
    std::sort(gaps.begin(), gaps.end());
    per_rank.push_back(gaps[std::min(gaps.size() - 1, gaps.size() * 9 / 10)]);
  }
  return per_rank.empty() ? 0 : Median(per_rank);
}

// The stall rule of stall.h, the one place both judges take it from — post-mortem (FindStall, over a
// recording) and live (InflightByRank, each agent's ranks; JudgeInflight, serve's over every node): the
// threshold from the job's rhythm, whether a quiet stretch passes it, and when the stall began.
struct StallRule {
  double threshold_s = 0;
  static StallRule Of(const CollectiveProgress& p, const StallOptions& o) {
    return {std::max(o.floor_s, o.gap_multiple * TypicalGapS(p))};
  }
  bool Passed(double quiet_s) const { return quiet_s >= threshold_s; }
  // Since the last progress anywhere (0: none seen), else since the first entry into a collective.
  template <typename Time>
  static Time Since(Time last_progress, Time first_entry) {
    return last_progress > 0 ? last_progress : first_entry;
  }
};

// The last instant any rank made progress: a completion where completions are seen, else a call.
int64_t LastProgress(const CollectiveProgress& p) {
  int64_t last = 0;
  for (const auto& [rank, rp] : p.ranks)
    for (const RankCollective& c : rp.calls)
      last = std::max(last, rp.tracks_completion ? c.done_unix_ns : c.enter_unix_ns);
  return last;
}

// The call a rank is held in: the earliest it has not completed (ranks whose completions are seen), else,
// once the job has made no progress for the threshold, its last call.
const RankCollective* OpenCall(const RankProgress& rp, bool stalled_by_time) {
  if (rp.tracks_completion) {
    for (const RankCollective& c : rp.calls)
      if (c.state != CallState::kDone) return &c;
    return nullptr;
  }
  return stalled_by_time && !rp.calls.empty() ? &rp.calls.back() : nullptr;
}

// The call a rank whose completions are seen waits in: its open call, except a host call whose algorithm never
// started (the rank's own thread is elsewhere; an algorithm entry missed while the probes were attached looks
// the same). A device call enqueued but not started is kept: its kernel never started.
const RankCollective* WaitCall(const RankProgress& rp, bool stalled_by_time) {
  const RankCollective* open = OpenCall(rp, stalled_by_time);
  if (open && rp.tracks_completion && !rp.device && open->state != CallState::kInside) return nullptr;
  return open;
}

const RankCollective* CallAt(const RankProgress& rp, const CollectiveKey& k) {
  for (auto it = rp.calls.rbegin(); it != rp.calls.rend(); ++it)
    if (KeyOf(*it) == k) return &*it;
  return nullptr;
}

const RankCollective* LastDone(const RankProgress& rp) {
  for (auto it = rp.calls.rbegin(); it != rp.calls.rend(); ++it)
    if (it->state == CallState::kDone) return &*it;
  return nullptr;
}

// The members of `comm` as far as the recording shows: the ranks that called on it, and, when every rank that
// called anything did (a communicator of the whole job), also the ranks whose process the recording holds
// without a call in it (live: a rank stopped longer than the window, or since the flight recorder's chunk began).
std::vector<int32_t> MembersOf(const CollectiveProgress& p, const std::string& comm) {
  std::set<int32_t> out;
  for (const auto& [rank, rp] : p.ranks)
    if (std::any_of(rp.calls.begin(), rp.calls.end(), [&](const RankCollective& c) { return c.comm == comm; }))
      out.insert(rank);
  if (out.size() == p.ranks.size()) out.insert(p.ranks_seen.begin(), p.ranks_seen.end());
  return {out.begin(), out.end()};
}

struct Stall {
  CollectiveKey key;
  std::string op;
  std::vector<int32_t> waiting, missing, not_started;
  std::map<int32_t, int64_t> came_back;  // missing ranks that entered after their peers gave up: when
  int64_t since = 0, until = 0;
};

// Who waits in `key` and who is missing from it. A rank whose completions are seen waits when its open call
// is on the same communicator (not by sequence number: numbers aligned by time may be off by one), and is
// missing when it has none there; others are placed by whether they called `key` at all.
void SplitRanks(const CollectiveProgress& p, bool stalled_by_time, Stall* s, bool local_view = false) {
  for (int32_t rank : MembersOf(p, s->key.comm)) {
    auto found = p.ranks.find(rank);
    if (found == p.ranks.end()) {  // its process is recorded, none of its calls: it never entered
      s->missing.push_back(rank);
      continue;
    }
    const RankProgress& rp = found->second;
    const RankCollective* open = OpenCall(rp, stalled_by_time);
    if (rp.tracks_completion) {
      const RankCollective* wait = WaitCall(rp, stalled_by_time);
      const bool here = wait && wait->comm == s->key.comm && wait->p2p == s->key.p2p;
      if (!here)
        s->missing.push_back(rank);
      else
        (open->state == CallState::kEnqueued ? s->not_started : s->waiting).push_back(rank);
      continue;
    }
    const RankCollective* at = CallAt(rp, s->key);
    const bool finished = rp.exit_code && *rp.exit_code == 0;  // a normal end is not a wait
    if (!at)
      s->missing.push_back(rank);
    else if (open == at && !finished)
      s->waiting.push_back(rank);
  }
  // Ranks of the world the recording never saw call anything are missing too (not live: an agent sees only
  // its node's ranks, and the others are for serve to place).
  if (p.world_size && !local_view)
    for (int32_t r = 0; r < *p.world_size; ++r)
      if (!p.ranks.count(r)) s->missing.push_back(r);
  std::sort(s->missing.begin(), s->missing.end());
  // Called while the others run it, but its kernel (or algorithm) never started: it holds the others up.
  if (!s->waiting.empty())
    for (int32_t r : s->not_started) s->missing.push_back(r);
  else
    s->waiting = s->not_started;
}

// When a waiting rank entered the stalled collective (0: not known).
int64_t EntryOf(const RankProgress& rp, const CollectiveKey& key, bool stalled_by_time) {
  const RankCollective* c = rp.tracks_completion ? WaitCall(rp, stalled_by_time) : CallAt(rp, key);
  return c ? c->enter_unix_ns : 0;
}

// A waiting rank that entered only after a peer had given up on the collective (waited the threshold in it,
// then left: timed out, failed, exited), or as they were giving up (after the first had waited the threshold,
// less than the threshold before a peer left: a stop about as long as the process group's timeout), was missing
// from it for that wait: it is a missing rank that came back, not one that waited. Membership alone cannot tell
// it: every rank did enter.
void MoveLateEntrants(const CollectiveProgress& p, bool stalled_by_time, double threshold_s, Stall* s) {
  int64_t gave_up = std::numeric_limits<int64_t>::max();      // the first instant a peer left after waiting
  int64_t first_entry = std::numeric_limits<int64_t>::max();  // the first known entry of a waiting rank
  std::vector<int64_t> entries;                               // of s->waiting, in its order
  for (int32_t r : s->waiting) {
    const RankProgress& rp = p.ranks.at(r);
    entries.push_back(EntryOf(rp, s->key, stalled_by_time));
    const int64_t entry = entries.back();
    if (entry > 0) first_entry = std::min(first_entry, entry);
    if (entry > 0 && rp.horizon_unix_ns < p.end_unix_ns && ToS(rp.horizon_unix_ns - entry) >= threshold_s)
      gave_up = std::min(gave_up, rp.horizon_unix_ns);
  }
  // Entered after they gave up; or after the first had waited the threshold, with the peers giving up less than
  // the threshold later (had the collective stayed stuck that long with every rank in it, it is a hang of its own).
  const bool someone_gave_up = gave_up != std::numeric_limits<int64_t>::max();
  auto late = [&](int64_t entry) {
    return entry > gave_up || (entry > 0 && someone_gave_up && ToS(entry - first_entry) >= threshold_s &&
                               ToS(gave_up - entry) < threshold_s);
  };
  std::vector<int32_t> still;
  for (size_t i = 0; i < s->waiting.size(); ++i)
    if (!late(entries[i])) still.push_back(s->waiting[i]);
  if (still.empty() || still.size() == s->waiting.size()) return;  // nobody waited before them, or none late
  for (size_t i = 0; i < s->waiting.size(); ++i) {
    if (!late(entries[i])) continue;
    s->missing.push_back(s->waiting[i]);
    s->came_back[s->waiting[i]] = entries[i];
  }
  s->waiting = std::move(still);
  std::sort(s->missing.begin(), s->missing.end());
}

// The stalled collective, if the job is stalled by the rule of stall.h.
std::optional<Stall> FindStall(const CollectiveProgress& p, const StallOptions& o, double* threshold_s) {
  StallRule rule = StallRule::Of(p, o);
  const int64_t last = LastProgress(p);
  const bool quiet = rule.Passed(ToS(p.end_unix_ns - last));
  // Open calls grouped by communicator; each group keeps its lowest rank's call (the numbering reference).
  std::map<std::pair<std::string, bool>, std::pair<size_t, const RankCollective*>> groups;
  int64_t first_entry = 0;
  for (const auto& [rank, rp] : p.ranks)
    if (const RankCollective* c = OpenCall(rp, quiet)) {
      auto& g = groups[{c->comm, c->p2p}];
      if (g.first++ == 0) g.second = c;
      first_entry = first_entry == 0 ? c->enter_unix_ns : std::min(first_entry, c->enter_unix_ns);
    }
  if (groups.empty()) return std::nullopt;
  auto best = std::max_element(groups.begin(), groups.end(),
                               [](const auto& a, const auto& b) { return a.second.first < b.second.first; });
  Stall s;
  s.key = KeyOf(*best->second.second);
  s.op = best->second.second->op;
  SplitRanks(p, quiet, &s, o.now_unix_ns.has_value());
  if (!o.now_unix_ns) MoveLateEntrants(p, quiet, o.floor_s, &s);  // post-mortem: the peers' whole wait is known
  // Since the last progress (or, before any completion, the first entry); until a waiting rank left (died).
  s.since = StallRule::Since(last, first_entry);
  s.until = p.end_unix_ns;
  for (int32_t r : s.waiting) s.until = std::min(s.until, std::max(s.since, p.ranks.at(r).horizon_unix_ns));
  if (s.waiting.empty()) return std::nullopt;
  // Post-mortem, waiting ranks that all exited inside the collective never saw it complete: the gap multiple,
  // which keeps a slow step that may still finish from being called a stall, cannot apply to ranks that are
  // gone; the floor does. (Seen when the job's rhythm was slowed by load: 10 typical gaps outlasted the process
  // group's timeout, and the hang of a job that died of it went unnamed.)
  const bool died_waiting = !o.now_unix_ns && std::all_of(s.waiting.begin(), s.waiting.end(), [&](int32_t r) {
    return p.ranks.at(r).exited_unix_ns.has_value();
  });
  if (died_waiting) rule.threshold_s = o.floor_s;
  *threshold_s = rule.threshold_s;
  if (!rule.Passed(ToS(s.until - s.since))) return std::nullopt;
  // Without completions (NCCL's API alone), ranks idle at the same collective are a pause, not a stall: one
  // must be behind.
  const bool tracked =
      std::any_of(s.waiting.begin(), s.waiting.end(), [&](int32_t r) { return p.ranks.at(r).tracks_completion; });
  if (!tracked && s.missing.empty()) return std::nullopt;
  return s;
}

// The topmost process of each rank (not its DataLoader workers): (segment index, process) by rank.
std::map<int32_t, std::pair<size_t, const ProcessThreads*>> RankProcesses(const RecordedThreads& threads) {
  std::map<int32_t, std::pair<size_t, const ProcessThreads*>> out;
  for (size_t i = 0; i < threads.segments.size(); ++i)
    for (const auto& [pid, proc] : threads.segments[i].processes) {
      auto parent = threads.segments[i].processes.find(proc.ppid);
      if (parent != threads.segments[i].processes.end() && parent->second.rank == proc.rank) continue;
      out[proc.rank] = {i, &proc};
    }
  return out;
}

StalledRankState Whereabouts(const RecordedThreads& threads, const CollectiveProgress& p, int32_t rank, const Stall& s,
                             bool not_started, RankLocator* locator) {
  auto it = p.ranks.find(rank);
  StalledRankState st;
  st.rank = rank;
  if (it == p.ranks.end()) {
    // No collective of it in what was read (live: none in the window): its process, if it was seen.
    const auto procs = RankProcesses(threads);
    auto proc = procs.find(rank);
    if (proc == procs.end()) {
      st.state = {RankStateKind::kNotRecorded, "", ""};
      st.observed_by = Observer::kNone;
      return st;
    }
    return locator->Locate(proc->second.first, proc->second.second->pid, rank, s.since, s.until);
  }
  st = locator->Locate(it->second.segment, it->second.pid, rank, s.since, s.until);
  if (not_started) {
    st.state = {RankStateKind::kKernelNotStarted, "", ""};
    st.observed_by = Observer::kNcclProfiler;
  }
  if (const RankCollective* done = LastDone(it->second)) {
    st.last_completed_seq = done->seq;
    st.last_completed_op = done->op;
  }
  return st;
}

// A missing rank held in another communicator's collective: follow it to the ranks that hold that one up.
std::vector<std::string> Wavefront(const CollectiveProgress& p, const Stall& s) {
  std::vector<std::string> out;
  std::set<int32_t> seen(s.missing.begin(), s.missing.end());
  std::vector<int32_t> frontier = s.missing;
  while (!frontier.empty() && out.size() < kMaxWavefront) {
    const int32_t r = frontier.front();
    frontier.erase(frontier.begin());
    auto it = p.ranks.find(r);
    const RankCollective* open = it == p.ranks.end() ? nullptr : OpenCall(it->second, true);
    if (!open || KeyOf(*open) == s.key) continue;
    Stall inner;
    inner.key = KeyOf(*open);
    SplitRanks(p, true, &inner);
    out.push_back(fmt::format("rank {} waits in {} for rank(s) {}", r, Describe(inner.key, open->op),
                              fmt::join(inner.missing, ", ")));
    for (int32_t m : inner.missing)
      if (seen.insert(m).second) frontier.push_back(m);
  }
  return out;
}

// What the rank's busy other threads (and the lock's owner, busy or not) do meanwhile (at most two named, with
// their Python frame), "" when none is busy.
std::string BusyThreads(const StalledRankState& st) {
  std::vector<std::string> busy;
  size_t more = 0;
  for (const StalledRankState::OtherThread& t : st.other_threads) {
    if (t.idle && t.tid != st.lock_owner_tid) continue;
    if (busy.size() < 2)
      busy.push_back(fmt::format("thread {}{} is {}{}", t.tid, t.name.empty() ? "" : " (" + t.name + ")", t.state,
                                 t.frame.empty() ? "" : " in " + t.frame));
    else
      ++more;
  }
  if (busy.empty()) return "";
  return fmt::format("; meanwhile its {}{}", fmt::join(busy, ", "), more ? fmt::format(" and {} more", more) : "");
}

std::string HangSummary(const Stall& s, const StalledRankState& st, double stalled_for) {
  std::string where = StateText(st.state);
  if (!st.frame.empty()) where += " in " + st.frame;
  if (st.lock_owner_tid) where += fmt::format(", a lock its thread {} holds", st.lock_owner_tid);
  if (st.came_back_unix_s > 0 && st.came_back_unix_s >= ToS(s.until))
    return fmt::format(
        "rank {} stopped: rank(s) {} waited {:.1f} s in {} and gave up before rank {} entered it; rank {} was {}{} "
        "and came back {:.1f} s after they left",
        st.rank, fmt::join(s.waiting, ", "), stalled_for, Describe(s.key, s.op), st.rank, st.rank, where,
        BusyThreads(st), st.came_back_unix_s - ToS(s.until));
  if (st.came_back_unix_s > 0)  // it entered as they were giving up
    return fmt::format(
        "rank {} stopped: rank(s) {} had waited {:.1f} s in {} when rank {} entered it, {:.1f} s before they gave "
        "up; until then rank {} was {}{}",
        st.rank, fmt::join(s.waiting, ", "), st.came_back_unix_s - ToS(s.since), Describe(s.key, s.op), st.rank,
        ToS(s.until) - st.came_back_unix_s, st.rank, where, BusyThreads(st));
  return fmt::format("rank {} stopped: rank(s) {} have waited {:.1f} s in {} that rank {} never {}; rank {} is {}{}",
                     st.rank, fmt::join(s.waiting, ", "), stalled_for, Describe(s.key, s.op), st.rank,
                     st.observed_by == Observer::kNcclProfiler ? "started" : "entered", st.rank, where,
                     BusyThreads(st));
}

// One `hang` finding per missing rank of `e` (impact: all of the stalled time; confidence 1, docs/confidence.md).
std::vector<Finding> MissingRankFindings(const Stall& s, const StallEvidence& e) {
  std::vector<Finding> out;
  for (const StalledRankState& st : e.missing) {
    Finding f;
    SetCause(NameCause(PatternEvidence{.pattern = Pattern::kRankStopped, .layer = StalledRankLayer(st)}), &f);
    f.rank = RankNumber(st.rank);
    f.op = st.frame.empty() ? s.op : st.frame;
    f.impact_pct = 100;
    f.summary = HangSummary(s, st, e.stalled_for_s);
    f.evidence.kind = e;
    out.push_back(std::move(f));
  }
  return out;
}

std::vector<Finding> HangFindings(const RecordedThreads& threads, const CollectiveProgress& p, const Stall& s,
                                  double threshold_s) {
  StallEvidence e;
  e.communicator = s.key.comm + (s.key.p2p ? " p2p" : "");
  e.seq = s.key.seq;
  e.op = s.op;
  e.waiting_ranks = s.waiting;
  e.missing_ranks = s.missing;
  e.stalled_since_unix = ToS(s.since);
  e.stalled_for_s = ToS(s.until - s.since);
  e.threshold_s = threshold_s;
  e.ongoing = s.until >= p.end_unix_ns;
  const std::set<int32_t> not_started(s.not_started.begin(), s.not_started.end());
  RankLocator locator(threads);
  for (int32_t r : s.missing) {
    e.missing.push_back(Whereabouts(threads, p, r, s, !s.waiting.empty() && not_started.count(r), &locator));
    if (auto back = s.came_back.find(r); back != s.came_back.end())
      e.missing.back().came_back_unix_s = ToS(back->second);
  }
  e.wavefront = Wavefront(p, s);
  if (s.missing.empty()) {
    const bool all = !p.world_size || static_cast<size_t>(*p.world_size) <= s.waiting.size();
    std::string summary =
        all ? fmt::format("the job stopped: every rank ({}) entered {} and none completed it in {:.1f} s",
                          fmt::join(s.waiting, ", "), Describe(s.key, s.op), e.stalled_for_s)
            : fmt::format(
                  "rank(s) {} (all this recording holds of {}) have waited {:.1f} s in {}: the ranks "
                  "holding them up are elsewhere (another node)",
                  fmt::join(s.waiting, ", "), *p.world_size, e.stalled_for_s, Describe(s.key, s.op));
    return {JobStoppedFinding(s.waiting, s.op, std::move(summary), std::move(e))};
  }
  return MissingRankFindings(s, e);
}

// Whether the calls at one number name one op, one element count and one byte count (0: unread, not compared).
bool CallsAgree(const CallsAtNumber& at) {
  std::set<uint64_t> counts, bytes;
  std::set<std::string> ops;
  for (const auto& [rank, c] : at.calls) {
    ops.insert(c->op);
    if (c->count != 0) counts.insert(c->count);
    if (c->bytes != 0) bytes.insert(c->bytes);
  }
  return ops.size() < 2 && counts.size() < 2 && bytes.size() < 2;
}

// Whether every call at `at` completed, with its completion seen.
bool AllDone(const CallsAtNumber& at) {
  return std::all_of(at.calls.begin(), at.calls.end(), [](const auto& rc) {
    return rc.second->state == CallState::kDone && rc.second->done_unix_ns != 0;
  });
}

// Whether the recording sees the completions of every rank called at `at`.
bool CompletionsSeen(const CallsAtNumber& at, const CollectiveProgress& p) {
  return std::all_of(at.calls.begin(), at.calls.end(),
                     [&](const auto& rc) { return p.ranks.at(rc.first).tracks_completion; });
}

// For each of `numbers`, whether every rank called at it completed, together and with calls that agree, a
// later number of the same communicator, in a recording that sees those ranks' completions: the communicator
// went on past it. A real mismatch derails its communicator (gloo raises or waits; NCCL's ranks of the larger
// count wait for data that never comes), so a difference at a number it went on from is the recording's, not
// the job's (held-out seeds 36000+: a CPU-throttled rank's all_gather was given 16 bytes of gloo buffers
// against its peer's 24, one buffer created longer than kGlooBufferLeadNs before the algorithm while its
// cgroup's quota was spent; every later collective agreed and the job ended normally). The NCCL API alone
// tracks no completion, so nothing there is judged to have gone on. "Every rank" is read as "as many ranks":
// the numbers of one communicator are called by its members. One backward pass per communicator, keeping the
// call counts of the agreeing, completed-together numbers ahead: O(n log r) for n numbers of at most r ranks.
std::vector<bool> WentOnPast(const std::vector<CallsAtNumber>& numbers, const std::vector<bool>& agree,
                             const CollectiveProgress& p) {
  std::vector<bool> went_on(numbers.size(), false);
  std::set<size_t> ahead;  // call counts of the numbers after i, of i's communicator, that it could go on to
  for (size_t i = numbers.size(); i-- > 0;) {
    const CallsAtNumber& at = numbers[i];
    const bool same_comm =
        i + 1 < numbers.size() && numbers[i + 1].key.comm == at.key.comm && numbers[i + 1].key.p2p == at.key.p2p;
    if (!same_comm) ahead.clear();
    went_on[i] = ahead.count(at.calls.size()) && CompletionsSeen(at, p);
    if (!at.completed_apart && agree[i] && AllDone(at)) ahead.insert(at.calls.size());
  }
  return went_on;
}

// The first sequence number of a communicator at which ranks called different ops, counts or buffer sizes, of
// the numbers whose calls were one collective (model::CallsAtNumber::completed_apart) and that the
// communicator did not go on from (WentOnPast).
std::optional<Finding> FindMismatch(const CollectiveProgress& p) {
  const std::vector<CallsAtNumber> numbers = model::CallsByNumber(p);
  std::vector<bool> agree(numbers.size());
  for (size_t i = 0; i < numbers.size(); ++i) agree[i] = CallsAgree(numbers[i]);
  const std::vector<bool> went_on = WentOnPast(numbers, agree, p);
  for (size_t i = 0; i < numbers.size(); ++i) {
    const CallsAtNumber& at = numbers[i];
    if (at.key.p2p || at.completed_apart) continue;  // a send meets a recv: p2p ops differ by design
    if (agree[i] || went_on[i]) continue;
    const CollectiveKey& key = at.key;
    const auto& calls = at.calls;
    std::map<std::tuple<std::string, uint64_t, uint64_t>, std::vector<int32_t>> sides;
    for (const auto& [rank, c] : calls) sides[{c->op, c->count, c->bytes}].push_back(rank);
    StallEvidence e;
    e.communicator = key.comm;
    e.seq = key.seq;
    std::vector<std::string> parts;
    for (const auto& [side, ranks] : sides) {
      const auto& [op, count, size] = side;
      e.calls.push_back({op, count, size, ranks});
      parts.push_back(fmt::format("rank(s) {} called {}", fmt::join(ranks, ", "), CalledText(e.calls.back())));
    }
    Finding f;
    SetCause(NameCause(PatternEvidence{.pattern = Pattern::kCollectiveMismatch}), &f);
    for (const auto& [rank, c] : calls) f.ranks.emplace_back(rank);
    // The minority side is the odd one out.
    auto minority = std::min_element(e.calls.begin(), e.calls.end(),
                                     [](const auto& a, const auto& b) { return a.ranks.size() < b.ranks.size(); });
    if (minority->ranks.size() == 1 && e.calls.size() == 2 && calls.size() > 2)
      f.rank = RankNumber(minority->ranks.front());
    f.op = minority->op;
    f.impact_pct = 100;
    f.summary = fmt::format("collective mismatch at {} #{}: {}", key.comm, key.seq, fmt::join(parts, "; "));
    f.evidence.kind = e;
    return f;
  }
  return std::nullopt;
}

std::string SignalName(int signal) {
  const char* abbrev = sigabbrev_np(signal);
  return abbrev ? fmt::format("{} (SIG{})", signal, abbrev) : std::to_string(signal);
}

// Ranks that exited by a signal or non-zero: never a healthy job (the input problems say what happened).
void NoteAbnormalEnds(const RecordedThreads& threads, std::vector<VerdictNote>* problems, const StallOptions& o) {
  const auto procs = RankProcesses(threads);
  std::map<int, std::vector<const ProcessThreads*>> by_signal;
  std::vector<std::string> exits;
  for (const auto& [rank, where] : procs) {
    const ProcessThreads* proc = where.second;
    if (proc->exit_signal) by_signal[*proc->exit_signal].push_back(proc);
    if (proc->exit_code && *proc->exit_code != 0)
      exits.push_back(fmt::format("rank {} (pid {}) exited with code {}", rank, proc->pid, *proc->exit_code));
  }
  for (const auto& [signal, list] : by_signal) {
    // Signals sent to stop a job (a scheduler, an operator, torchrun stopping the rest); not a crash (SIGABRT,
    // SIGSEGV, ...) that happened to every rank.
    const bool stop = signal == SIGTERM || signal == SIGINT || signal == SIGKILL || signal == SIGHUP;
    int64_t lo = INT64_MAX, hi = 0;
    for (const ProcessThreads* p : list) {
      lo = std::min(lo, p->exited_unix_ns.value_or(0));
      hi = std::max(hi, p->exited_unix_ns.value_or(0));
    }
    if (stop && list.size() == procs.size() && procs.size() > 1 &&
        static_cast<double>(hi - lo) / 1e9 <= o.stopped_together_s) {
      problems->push_back(
          {NoteId::kStoppedBySignal, {SignalName(signal), fmt::format("{:.1f}", static_cast<double>(hi - lo) / 1e9)}});
      continue;
    }
    for (const ProcessThreads* p : list)
      exits.push_back(fmt::format("rank {} (pid {}) was killed by signal {}", p->rank, p->pid, SignalName(signal)));
  }
  if (!exits.empty()) problems->push_back({NoteId::kEndedAbnormally, {fmt::format("{}", fmt::join(exits, "; "))}});
}

// A recording that ends with ranks inside a collective (and no stall was reported) is not a clean end.
void NoteOpenAtEnd(const CollectiveProgress& p, std::vector<VerdictNote>* problems) {
  std::vector<std::string> open;
  for (const auto& [rank, rp] : p.ranks)
    if (const RankCollective* c = OpenCall(rp, false))
      open.push_back(fmt::format("rank {} in {}", rank, Describe(KeyOf(*c), c->op)));
  if (!open.empty()) problems->push_back({NoteId::kOpenAtEnd, {fmt::format("{}", fmt::join(open, "; "))}});
}

// A recording of a job whose every rank was asleep since before the recorder attached (its thread states from
// /proc: recorder/sleep_watch.h) and which holds no collective call: the job had stopped already, and with no
// collective entered in the recording the stall rule cannot say who did not join. Where each rank waits is
// said instead, ranks grouped by place, so the one elsewhere stands out; not a finding (nothing was measured
// against a collective), and the result stays inconclusive.
std::optional<VerdictNote> StoppedBeforeRecording(const RecordedThreads& threads, const CollectiveProgress& p) {
  for (const auto& [rank, rp] : p.ranks)
    if (!rp.calls.empty()) return std::nullopt;
  const auto procs = RankProcesses(threads);
  if (procs.size() < 2) return std::nullopt;
  RankLocator locator(threads);
  std::map<std::string, std::vector<int32_t>> ranks_by_place;
  for (const auto& [rank, where] : procs) {
    const auto& [segment, proc] = where;
    const uint32_t pid = proc->pid;  // (clang 14: a lambda cannot capture a structured binding)
    const auto before = std::find_if(proc->thread_states.begin(), proc->thread_states.end(),
                                     [pid](const auto& t) { return t.tid == pid && t.since_before_attach; });
    if (before == proc->thread_states.end()) return std::nullopt;
    const int64_t seen = before->seen_unix_ns;  // where it was then (not its later exit)
    const StalledRankState st = locator.Locate(segment, pid, rank, seen, seen);
    ranks_by_place[st.frame.empty() ? StateText(st.state) : fmt::format("{} in {}", st.state, st.frame)].push_back(
        rank);
  }
  std::vector<std::string> places;
  for (const auto& [place, ranks] : ranks_by_place)
    places.push_back(fmt::format("{} {}: {}", ranks.size() == 1 ? "rank" : "ranks", fmt::join(ranks, ", "), place));
  return VerdictNote{NoteId::kAsleepBeforeRecording, {fmt::format("{}", fmt::join(places, "; "))}};
}

}  // namespace

Finding JobStoppedFinding(std::vector<int32_t> waiting, std::string op, std::string summary, StallEvidence evidence) {
  Finding f;
  SetCause(NameCause(PatternEvidence{.pattern = Pattern::kRankStopped}), &f);
  f.ranks = RankNumbers(waiting);
  f.op = std::move(op);
  f.impact_pct = 100;
  f.summary = std::move(summary);
  f.evidence.kind = std::move(evidence);
  return f;
}

std::string CalledText(const StallEvidence::Call& c) {
  if (!c.sizes.empty() || !c.dtypes.empty())
    return fmt::format("{}{}{}", c.op, c.sizes.empty() ? "" : " of sizes " + c.sizes,
                       c.dtypes.empty() ? "" : " in " + c.dtypes);
  if (c.count != 0) return fmt::format("{} of {} elements", c.op, c.count);
  return c.bytes != 0 ? fmt::format("{} of {} bytes", c.op, c.bytes) : c.op;
}

std::vector<RankInflight> InflightByRank(const StallRecording& recording, int64_t now_unix_ns,
                                         const StallOptions& options) {
  const CollectiveProgress p = model::BuildCollectiveProgress(recording.calls, now_unix_ns);
  const StallRule rule = StallRule::Of(p, options);
  const double threshold_s = rule.threshold_s;
  const bool quiet = rule.Passed(ToS(now_unix_ns - LastProgress(p)));
  std::vector<RankInflight> out;
  RankLocator locator(recording.threads);
  for (const auto& [rank, where] : RankProcesses(recording.threads)) {
    RankInflight r;
    r.rank = rank;
    r.threshold_s = threshold_s;
    r.world_size = p.world_size.value_or(0);
    auto it = p.ranks.find(rank);
    if (it != p.ranks.end()) {
      if (const RankCollective* open = WaitCall(it->second, quiet)) {
        r.inside = true;
        r.comm = open->comm + (open->p2p ? " p2p" : "");
        r.op = open->op;
        r.seq = open->seq;
        r.since_unix = ToS(open->enter_unix_ns);
      }
      if (const RankCollective* done = LastDone(it->second)) r.last_progress_unix = ToS(done->done_unix_ns);
    }
    const double idle_from = r.last_progress_unix > 0 ? r.last_progress_unix : ToS(now_unix_ns) - threshold_s;
    if (!r.inside && rule.Passed(ToS(now_unix_ns) - idle_from)) {
      const StalledRankState st =
          locator.Locate(where.first, where.second->pid, rank, static_cast<int64_t>(idle_from * 1e9), now_unix_ns);
      r.state = st.state;
      r.frame = st.frame;
    }
    out.push_back(std::move(r));
  }
  return out;
}

// A rank whose recording holds none of its collectives (no open entry, no completion in the window: an entry
// the recorder did not see, e.g. made before it attached) but whose main thread waits in PyTorch's collective
// API (torch/distributed/distributed_c10d.py) for the op the others wait in (Python's function is the op's
// name) is inside that collective all the same: it waits like the ranks inside, it is not the one that stopped.
namespace {
bool EnteredUnseen(const RankInflight& r, const std::string& op) {
  return !r.inside && r.seq < 0 && r.last_progress_unix <= 0 && r.frame.starts_with("Python " + op + " (") &&
         CollectiveKindOf(r.frame) == CollectiveKind::kTorchApi;
}
}  // namespace

std::vector<Finding> JudgeInflight(const std::vector<RankInflight>& ranks, double now_unix) {
  double last = 0, threshold = 0, first_entry = 0;
  int32_t world = 0;
  std::map<std::string, std::vector<const RankInflight*>> inside;  // communicator -> ranks inside it
  std::map<int32_t, const RankInflight*> by_rank;
  for (const RankInflight& r : ranks) {
    last = std::max(last, r.last_progress_unix);
    threshold = std::max(threshold, r.threshold_s);
    world = std::max(world, r.world_size);
    by_rank[r.rank] = &r;
    if (r.inside) {
      inside[r.comm].push_back(&r);
      first_entry = first_entry == 0 ? r.since_unix : std::min(first_entry, r.since_unix);
    }
  }
  if (inside.empty()) return {};
  const double since = StallRule::Since(last, first_entry);
  if (!StallRule{threshold}.Passed(now_unix - since)) return {};
  const auto& [comm, waiting] = *std::max_element(
      inside.begin(), inside.end(), [](const auto& a, const auto& b) { return a.second.size() < b.second.size(); });
  StallEvidence e;
  e.communicator = comm;
  e.op = waiting.front()->op;
  e.seq = waiting.front()->seq;
  e.stalled_since_unix = since;
  e.stalled_for_s = now_unix - since;
  e.threshold_s = threshold;
  e.ongoing = true;
  for (const RankInflight* r : waiting) e.waiting_ranks.push_back(r->rank);
  for (const auto& [rank, r] : by_rank)
    if (EnteredUnseen(*r, e.op)) e.waiting_ranks.push_back(rank);
  std::sort(e.waiting_ranks.begin(), e.waiting_ranks.end());
  for (int32_t r = 0; r < std::max<int32_t>(world, by_rank.empty() ? 0 : by_rank.rbegin()->first + 1); ++r) {
    if (std::binary_search(e.waiting_ranks.begin(), e.waiting_ranks.end(), r)) continue;
    e.missing_ranks.push_back(r);
    StalledRankState st;
    st.rank = r;
    auto it = by_rank.find(r);
    st.state = it == by_rank.end()  ? RankState{RankStateKind::kNotReported, "", ""}
               : it->second->inside ? RankState{RankStateKind::kInsideAnother, it->second->op, it->second->comm}
               : !it->second->state ? RankState{RankStateKind::kWhereaboutsNotReported, "", ""}
                                    : *it->second->state;
    if (it != by_rank.end()) st.frame = it->second->frame;
    st.observed_by = Observer::kAgent;
    e.missing.push_back(std::move(st));
  }
  Stall s;
  s.key = {comm, false, e.seq};
  s.op = e.op;
  s.waiting = e.waiting_ranks;
  return MissingRankFindings(s, e);
}

bool WhereaboutsArrived(const StallEvidence& e) {
  return std::none_of(e.missing.begin(), e.missing.end(),
                      [](const StalledRankState& st) { return WhereaboutsUnreported(st.state.kind); });
}

Layer StalledRankLayer(const StalledRankState& st) {
  switch (st.state.kind) {
    case RankStateKind::kExited:
    case RankStateKind::kExitedNormally:
    case RankStateKind::kKilled:
      return Layer::kHost;
    case RankStateKind::kKernelNotStarted:
      return Layer::kGpu;
    default:
      break;
  }
  if (st.data_loading) return Layer::kData;
  if (st.state.kind == RankStateKind::kUninterruptible || st.state.kind == RankStateKind::kIoWait) return Layer::kOs;
  if (st.state.kind == RankStateKind::kNotObserved) return Layer::kNone;
  return st.python_stack.empty() ? Layer::kCpu : Layer::kPython;
}

const StallEvidence* JobStall(const DiagnosisResult& result) {
  for (const Finding& f : result.findings)
    if (f.cause == Cause::kHang)
      if (const auto* e = std::get_if<StallEvidence>(&f.evidence.kind)) return e;
  return nullptr;
}

StallJudgement JudgeStall(const StallRecording& recording, const StallOptions& options) {
  StallJudgement out;
  const CollectiveProgress progress = model::BuildCollectiveProgress(recording.calls, options.now_unix_ns);
  double threshold_s = 0;
  const std::optional<Stall> stall = FindStall(progress, options, &threshold_s);
  // Numbers aligned by an uncertain shift may be off by one: comparing ops across them could invent a mismatch.
  if (progress.numbers_certain)
    if (std::optional<Finding> mismatch = FindMismatch(progress)) out.findings.push_back(std::move(*mismatch));
  if (stall)
    for (Finding& f : HangFindings(recording.threads, progress, *stall, threshold_s))
      out.findings.push_back(std::move(f));
  if (options.now_unix_ns) return out;  // live: the job has not ended
  NoteAbnormalEnds(recording.threads, &out.problems, options);
  if (stall) return out;
  NoteOpenAtEnd(progress, &out.problems);
  out.leading_problem = StoppedBeforeRecording(recording.threads, progress);
  return out;
}

void ApplyStallJudgement(StallJudgement judgement, DiagnosisResult* result) {
  result->findings.insert(result->findings.begin(), std::make_move_iterator(judgement.findings.begin()),
                          std::make_move_iterator(judgement.findings.end()));
  if (judgement.leading_problem)
    result->verdict_notes.insert(result->verdict_notes.begin(), std::move(*judgement.leading_problem));
  for (VerdictNote& p : judgement.problems) result->verdict_notes.push_back(std::move(p));
}

void ApplyStallAnalysis(const StallRecording& recording, DiagnosisResult* result, const StallOptions& options) {
  ApplyStallJudgement(JudgeStall(recording, options), result);
}

}  // namespace strata::diagnosis
