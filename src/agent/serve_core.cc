// ServeCore (see serve_core.h).
#include "agent/serve_core.h"

#include "analysis/diagnosis/evidence.h"
#include "analysis/diagnosis/stall.h"
#include "analysis/diagnosis/thresholds.h"

#include <unistd.h>

#include <set>

namespace strata::agent {

namespace {

LeaseOptions Named(LeaseOptions lease, const ConsumerOptions& consumer) {
  if (lease.owner.empty()) lease.owner = consumer.consumer;
  return lease;
}

}  // namespace

ServeCore::ServeCore(RedisAddress address, ConsumerOptions consumer, OnlineJobOptions online, LeaseOptions lease)
    : consumer_(address, consumer),
      online_options_(online),
      leases_(Named(std::move(lease), consumer)),
      address_(std::move(address)) {}

namespace {

constexpr const char* kNodeSetKey = "strata:nodes";
std::string NodeKey(const std::string& host) { return "strata:node:{" + host + "}"; }

std::string FieldOf(const StreamFields& fields, const std::string& name) {
  for (const auto& [k, v] : fields)
    if (k == name) return v;
  return "";
}

}  // namespace

// The node records a previous serve kept (a malformed one is skipped, and said in last_error).
Status ServeCore::LoadNodes() {
  if (!memory_.connected())
    if (Status st = memory_.Connect(address_, 2.0); !st.ok()) return st;
  auto hosts = memory_.Command({"SMEMBERS", kNodeSetKey});
  if (!hosts.ok()) return hosts.status();
  for (const RedisReply& h : hosts.value().elements) {
    auto value = memory_.Command({"GET", NodeKey(h.text)});
    if (!value.ok()) return value.status();
    if (value.value().kind != RedisReply::Kind::kString) continue;
    const nlohmann::json j = nlohmann::json::parse(value.value().text, nullptr, false);
    auto record = NodeRecord::FromJson(j);
    if (!record.ok()) {
      counters_.last_error = NodeKey(h.text) + ": " + record.error();
      continue;
    }
    history_.Restore(std::move(record).value());
  }
  return Status::Ok();
}

// Writes the records that changed (one SET and SADD per node, in one round trip); a record whose node was down
// stays unsaved for a later call.
Status ServeCore::SaveNodes() {
  if (unsaved_.empty()) return Status::Ok();
  if (!memory_.connected())
    if (Status st = memory_.Connect(address_, 2.0); !st.ok()) return st;
  std::vector<std::vector<std::string>> commands;
  std::vector<std::string> host_of;  // the node record each command writes
  for (const std::string& host : unsaved_) {
    auto it = history_.nodes().find(host);
    if (it == history_.nodes().end()) continue;
    commands.push_back({"SET", NodeKey(host), it->second.ToJson().dump()});
    commands.push_back({"SADD", kNodeSetKey, host});
    host_of.insert(host_of.end(), {host, host});
  }
  auto replies = memory_.Pipeline(commands);
  if (!replies.ok()) return replies.status();
  std::set<std::string> still;
  for (size_t i = 0; i < replies.value().size(); ++i) {
    const RedisReply& r = replies.value()[i];
    if (NodeDown(r)) {
      unreachable_.Note(r.text);
      still.insert(host_of[i]);
    } else if (r.kind == RedisReply::Kind::kError) {
      return Status::Resource("saving node records: " + r.text);
    }
  }
  unsaved_ = std::move(still);
  return Status::Ok();
}

// A summary an earlier owner judged is skipped; any other is taken in and waits to be judged.
void ServeCore::TakeSummary(const StreamEntry& e, const online::RankStepSummary& s, double now_unix) {
  JobResume& resume = resume_[e.job];
  if (resume.JudgedBefore(s)) {
    resume.CountSkippedJudged();
    resume.Took(e.id);
    return;
  }
  if (history_.SeeRank(FieldOf(e.fields, "host"), e.job, s.rank, now_unix)) unsaved_.insert(FieldOf(e.fields, "host"));
  resume.TookSummary(e.id, s.rank, s.step);
  jobs_.try_emplace(e.job, online_options_).first->second.Add(s);
}

void ServeCore::TakeIn(const StreamEntry& e, double now_unix) {
  const std::string kind = EntryKind(e.fields);
  if (kind != "summary") resume_[e.job].Took(e.id);
  if (kind == "summary") {
    auto s = DecodeSummary(e.fields);
    if (!s.ok()) {
      ++counters_.malformed;
      counters_.last_error = e.job + " " + e.id + ": " + s.error();
      resume_[e.job].Took(e.id);
      return;
    }
    TakeSummary(e, s.value(), now_unix);
  } else if (kind == "finding" && DecodeFinding(e.fields).ok()) {
    ++counters_.agent_findings;
  } else if (kind == "inflight" && DecodeInflight(e.fields).ok()) {
    InflightEntry in = DecodeInflight(e.fields).value();
    InflightEntry& slot = inflight_[e.job][in.inflight.rank];
    if (in.at_unix >= slot.at_unix) slot = std::move(in);
  } else if (kind == "window_finding" && DecodeWindowFinding(e.fields).ok()) {
    TakeWindowFinding(e.job, DecodeWindowFinding(e.fields).value());
  } else {
    ++counters_.malformed;
    counters_.last_error = e.job + " " + e.id + ": not a summary or finding";
  }
}

Expected<size_t> ServeCore::Poll(int block_ms, double now_unix) {
  ++counters_.polls;
  auto fail = [&](const Status& st) -> Expected<size_t> {
    TallyUnreachable();
    ++counters_.failures;
    counters_.last_error = st.message();
    return st;
  };
  if (!loaded_) {  // before anything is taken in: what is learned now adds to what was kept
    if (Status st = LoadNodes(); !st.ok()) return fail(st);
    loaded_ = true;
  }
  if (Status st = consumer_.Discover(); !st.ok()) return fail(st);
  if (Status st = Leases(now_unix); !st.ok()) return fail(st);
  auto entries = consumer_.Read(block_ms);
  if (!entries.ok()) return fail(entries.status());
  for (const StreamEntry& e : entries.value()) {
    ++counters_.entries;
    if (e.reclaimed) ++counters_.reclaimed;
    if (resume_[e.job].AlreadyReplayed(e.id))
      ++counters_.skipped_replayed;
    else
      TakeIn(e, now_unix);
  }
  auto acked = consumer_.Ack(entries.value());
  if (!acked.ok()) return fail(acked.status());
  counters_.acked += acked.value();
  JudgeStalls(now_unix);
  ExpireWindowFindings(now_unix);
  for (auto& [job, online] : jobs_) {
    if (!leases_.Mine(job)) continue;  // not renewed lately: another serve may own it by now
    const uint64_t judged = online.view().steps_judged;
    const std::vector<online::Detection> opened = online.Advance(now_unix);
    if (online.view().steps_judged != judged) judged_now_.insert(job);
    resume_[job].Prune(online.view());
    for (const online::Detection& d : opened) {
      if (std::string host = history_.Named(job, d.rank, std::string(diagnosis::CauseName(d.cause))); !host.empty())
        unsaved_.insert(host);
      if (Status st = consumer_.Request(job, EncodeWindowRequest(RequestFor(online, d, now_unix))); st.ok())
        ++counters_.window_requests;
      else if (NodeDown(st))
        unreachable_.Note(st.message());
      else
        return fail(st);
    }
  }
  if (Status st = CommitJudged(false); !st.ok()) return fail(st);
  if (Status st = SaveNodes(); !st.ok()) return fail(st);
  TallyUnreachable();
  return entries.value().size();
}

// The commands skipped this poll because their node was down, into the counters (the last one's error shown).
void ServeCore::TallyUnreachable() {
  const uint64_t total = consumer_.unreachable().count + leases_.unreachable().count + unreachable_.count;
  if (total == counters_.unreachable) return;
  counters_.unreachable = total;
  const NodeDownTally* tallies[] = {&consumer_.unreachable(), &leases_.unreachable(), &unreachable_};
  for (const NodeDownTally* t : tallies)
    if (!t->last.empty()) counters_.last_error = t->last;
}

// Takes the free leases (resuming each job from its judged record), drops the jobs another serve now owns,
// and limits the reads to the jobs held. A job whose lease lapsed here (renewals late: a loaded machine) but
// that no one took keeps its state, unread and unjudged, until it is taken back.
Status ServeCore::Leases(double now_unix) {
  if (!memory_.connected())
    if (Status st = memory_.Connect(address_, 2.0); !st.ok()) return st;
  leases_.Expire();
  auto taken = leases_.Refresh(&memory_, consumer_.job_names());
  if (!taken.ok()) return taken.status();
  for (auto it = resume_.begin(); it != resume_.end();) {
    const std::string job = (it++)->first;
    const auto owner = leases_.owners().find(job);
    if (!leases_.Holds(job) && owner != leases_.owners().end() && !owner->second.empty() &&
        owner->second != leases_.owner())
      Drop(job);
  }
  for (const JobLeases::Taken& t : taken.value())
    if (Status st = TakeOver(t, now_unix); !st.ok()) return st;
  std::set<std::string> held;
  for (const auto& [job, resume] : resume_)
    if (leases_.Holds(job)) held.insert(job);
  consumer_.SetReadable(held);
  counters_.leases_taken = leases_.taken();
  counters_.leases_lost = leases_.lost();
  counters_.jobs_owned = held.size();
  return Status::Ok();
}

// A job just taken starts afresh from its judged record: the entries from its resume point are taken in again
// (the summaries judged before skipped), and the record is written at once (the lease renewed with it).
Status ServeCore::TakeOver(const JobLeases::Taken& t, double now_unix) {
  const auto committed = committed_.find(t.job);
  if (resume_.count(t.job) && committed != committed_.end() && t.had_record && t.commit.owner == leases_.owner() &&
      t.commit.steps_judged == committed->second)
    return Status::Ok();  // its own lease back, the record as it left it: nothing judged elsewhere meanwhile
  Drop(t.job);
  resume_[t.job] = JobResume(t.commit, t.had_record);
  consumer_.Rewind(t.job);
  if (t.had_record) {
    if (t.commit.job_step >= 0)  // the earlier owners' numbering and anchoring, not a fresh one (job_commit.h)
      jobs_.try_emplace(t.job, online_options_)
          .first->second.Seed(t.commit.job_step, t.commit.judged_start, t.commit.offset);
    auto entries = consumer_.Replay(t.job, t.commit.resume_from);
    if (!entries.ok()) return entries.status();
    for (const StreamEntry& e : entries.value()) {
      ++counters_.replayed;
      TakeIn(e, now_unix);
    }
    if (!entries.value().empty()) resume_[t.job].Replayed(entries.value().back().id);
  }
  judged_now_.insert(t.job);
  return Status::Ok();
}

// Renews each held job's lease with its judged record: every job when `all`, else those that judged steps
// or whose renewal is due. A lease found lost is dropped by JobLeases (the job's state waits: Leases).
Status ServeCore::CommitJudged(bool all) {
  for (const auto& [job, resume] : resume_) {
    if (!leases_.Holds(job)) continue;
    if (!all && !judged_now_.count(job) && !leases_.RenewDue(job)) continue;
    auto online = jobs_.find(job);
    const JobCommit record = resume.Record(leases_.owner(), online == jobs_.end() ? nullptr : &online->second.view());
    auto renewed = leases_.Commit(&memory_, job, record);
    if (!renewed.ok() && NodeDown(renewed.status())) {  // not renewed now: Mine() and Expire() see to it
      unreachable_.Note(renewed.error());
      continue;
    }
    if (!renewed.ok()) return renewed.status();
    if (renewed.value()) committed_[job] = record.steps_judged;
  }
  judged_now_.clear();
  counters_.leases_lost = leases_.lost();
  return Status::Ok();
}

void ServeCore::Drop(const std::string& job) {
  jobs_.erase(job);
  resume_.erase(job);
  inflight_.erase(job);
  stall_findings_.erase(job);
  window_findings_.erase(job);
  pending_stalls_.erase(job);
  judged_now_.erase(job);
  committed_.erase(job);
}

Status ServeCore::Release() {
  if (!memory_.connected())
    if (Status st = memory_.Connect(address_, 2.0); !st.ok()) return st;
  if (Status st = CommitJudged(true); !st.ok()) return st;
  return leases_.ReleaseAll(&memory_);
}

// A judgment is reported once the same ranks have been missing for kInflightConfirmS and each missing rank's
// whereabouts have arrived (or twice as long has passed): the nodes' states arrive a round apart.
bool ServeCore::Confirmed(const std::string& job, const std::vector<diagnosis::Finding>& judged, double now_unix) {
  if (judged.empty() || !stall_findings_[job].empty()) {  // nothing to confirm, or already reported
    pending_stalls_.erase(job);
    return true;
  }
  std::vector<int32_t> missing;
  bool whereabouts = true;
  for (const diagnosis::Finding& f : judged) {
    if (f.rank) missing.push_back(f.rank->value());
    if (const auto* e = std::get_if<diagnosis::StallEvidence>(&f.evidence.kind))
      whereabouts &= diagnosis::WhereaboutsArrived(*e);
  }
  PendingStall& p = pending_stalls_[job];
  if (p.missing != missing || p.since == 0) p = {missing, now_unix};
  const double waited = now_unix - p.since;
  const double confirm = diagnosis::thresholds::kInflightConfirmS;
  return waited >= confirm && (whereabouts || waited >= 2 * confirm);
}

// The stall rule over each job's latest in-flight states; a hang keeps the detected_at of its first judgment.
void ServeCore::JudgeStalls(double now_unix) {
  for (const auto& [job, ranks] : inflight_) {
    std::vector<diagnosis::RankInflight> states;
    for (const auto& [rank, entry] : ranks) states.push_back(entry.inflight);
    std::vector<diagnosis::Finding> judged = diagnosis::JudgeInflight(states, now_unix);
    if (!Confirmed(job, judged, now_unix)) continue;
    std::vector<OpenFinding> open;
    for (diagnosis::Finding& f : judged) {
      OpenFinding o{std::move(f), now_unix, 1, "inflight"};
      for (const OpenFinding& before : stall_findings_[job])
        if (before.finding.rank == o.finding.rank) {
          o.detected_at = before.detected_at;
          o.rounds = before.rounds + 1;
        }
      open.push_back(std::move(o));
    }
    stall_findings_[job] = std::move(open);
  }
}

void ServeCore::TakeWindowFinding(const std::string& job, const WindowFinding& w) {
  ++counters_.window_findings;
  std::vector<OpenFinding>& open = window_findings_[job];
  diagnosis::Finding f;
  f.cause = diagnosis::ParseCause(w.cause).value_or(diagnosis::Cause::kUnknown);
  f.rank = RankNumber(w.rank);
  f.impact_pct = w.impact_pct;
  f.confidence = w.confidence;
  f.summary = w.summary + " (flight-recorder window of " + w.host + ")";
  for (OpenFinding& o : open)
    if (o.finding.rank == f.rank && o.finding.cause == f.cause) {
      o.finding = f;
      ++o.rounds;
      o.last_at = std::max(o.last_at, w.detected_at);
      return;
    }
  open.push_back(OpenFinding{f, w.detected_at, 1, "window", w.detected_at});
}

// An agent's window answer describes its window only: shown until kWindowFindingShownS after the last answer
// that found it (bench/online_accuracy found them named for the rest of the job, long after the fault ended).
void ServeCore::ExpireWindowFindings(double now_unix) {
  for (auto it = window_findings_.begin(); it != window_findings_.end();) {
    std::erase_if(it->second, [&](const OpenFinding& o) { return o.last_at + kWindowFindingShownS < now_unix; });
    it = it->second.empty() ? window_findings_.erase(it) : std::next(it);
  }
}

WindowRequest RequestFor(const OnlineJob& job, const online::Detection& d, double now_unix) {
  // The suspect and up to three peers: the ranks next to it in rank order (a deterministic, cheap choice).
  WindowRequest r;
  r.ranks.push_back(d.rank);
  r.step = d.step;
  r.requested_at = now_unix;
  const auto& ranks = job.view().last_step;
  auto it = ranks.upper_bound(d.rank);
  for (; it != ranks.end() && r.ranks.size() < 4; ++it) r.ranks.push_back(it->first);
  for (auto rit = ranks.begin(); rit != ranks.end() && r.ranks.size() < 4 && rit->first < d.rank; ++rit)
    r.ranks.push_back(rit->first);
  return r;
}

AgentSnapshot ServeCore::Snapshot(double now_unix) const {
  AgentSnapshot s;
  s.program = "serve";
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  s.host = host;
  s.now = now_unix;
  s.rounds = counters_.polls;
  s.consumer = counters_;
  for (const auto& [node, record] : history_.nodes()) s.nodes.push_back(record);
  std::set<std::string> names;
  for (const auto& [job, online] : jobs_) names.insert(job);
  for (const auto& [job, ranks] : inflight_) names.insert(job);
  for (const auto& [job, owner] : leases_.owners()) names.insert(job);
  for (const std::string& job : names) {
    JobState state;
    state.job = job;
    JobOwnership& own = state.ownership.emplace();
    if (auto o = leases_.owners().find(job); o != leases_.owners().end()) own.owner = o->second;
    own.this_serve = leases_.Holds(job);
    if (auto r = resume_.find(job); r != resume_.end()) {
      auto online = jobs_.find(job);
      const JobCommit record =
          r->second.Record(leases_.owner(), online == jobs_.end() ? nullptr : &online->second.view());
      own.steps_judged_total = static_cast<int64_t>(record.steps_judged);
      own.summaries_judged_total = static_cast<int64_t>(record.summaries_judged);
      own.skipped_judged = r->second.skipped_judged();
    }
    if (auto o = jobs_.find(job); o != jobs_.end()) state.online = o->second.view();
    if (auto st = stall_findings_.find(job); st != stall_findings_.end()) state.open = st->second;
    if (auto w = window_findings_.find(job); w != window_findings_.end())
      state.open.insert(state.open.end(), w->second.begin(), w->second.end());
    state.analysed_at = now_unix;
    s.jobs.push_back(std::move(state));
  }
  return s;
}

}  // namespace strata::agent
