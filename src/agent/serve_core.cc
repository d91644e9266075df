// ServeCore (see serve_core.h).
#include "agent/serve_core.h"

#include "analysis/diagnosis/evidence.h"
#include "analysis/diagnosis/thresholds.h"

#include <unistd.h>

#include <set>

namespace strata::agent {

ServeCore::ServeCore(RedisAddress address, ConsumerOptions consumer, OnlineJobOptions online)
    : consumer_(std::move(address), std::move(consumer)), online_options_(online) {}

void ServeCore::TakeIn(const StreamEntry& e) {
  const std::string kind = EntryKind(e.fields);
  if (kind == "summary") {
    auto s = DecodeSummary(e.fields);
    if (!s.ok()) {
      ++counters_.malformed;
      counters_.last_error = e.job + " " + e.id + ": " + s.error();
      return;
    }
    jobs_.try_emplace(e.job, online_options_).first->second.Add(s.value());
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
    ++counters_.failures;
    counters_.last_error = st.message();
    return st;
  };
  if (Status st = consumer_.Discover(); !st.ok()) return fail(st);
  auto entries = consumer_.Read(block_ms);
  if (!entries.ok()) return fail(entries.status());
  for (const StreamEntry& e : entries.value()) {
    ++counters_.entries;
    if (e.reclaimed) ++counters_.reclaimed;
    TakeIn(e);
  }
  auto acked = consumer_.Ack(entries.value());
  if (!acked.ok()) return fail(acked.status());
  counters_.acked += acked.value();
  JudgeStalls(now_unix);
  for (auto& [job, online] : jobs_)
    for (const online::Detection& d : online.Advance(now_unix))
      if (Status st = consumer_.Request(job, EncodeWindowRequest(RequestFor(online, d, now_unix))); st.ok())
        ++counters_.window_requests;
      else
        return fail(st);
  return entries.value().size();
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
    if (f.rank) missing.push_back(*f.rank);
    if (const auto* e = std::get_if<diagnosis::StallEvidence>(&f.evidence.kind))
      for (const diagnosis::StalledRankState& st : e->missing)
        whereabouts &= st.state.find("not reported") == std::string::npos;
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
  f.rank = w.rank;
  f.impact_pct = w.impact_pct;
  f.confidence = w.confidence;
  f.summary = w.summary + " (flight-recorder window of " + w.host + ")";
  for (OpenFinding& o : open)
    if (o.finding.rank == f.rank && o.finding.cause == f.cause) {
      o.finding = f;
      ++o.rounds;
      return;
    }
  open.push_back(OpenFinding{f, w.detected_at, 1});
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
  std::set<std::string> names;
  for (const auto& [job, online] : jobs_) names.insert(job);
  for (const auto& [job, ranks] : inflight_) names.insert(job);
  for (const std::string& job : names) {
    JobState state;
    state.job = job;
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
