// ServeCore (see serve_core.h).
#include "agent/serve_core.h"

#include <unistd.h>

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
  for (auto& [job, online] : jobs_) online.Advance(now_unix);
  return entries.value().size();
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
  for (const auto& [job, online] : jobs_) {
    JobState state;
    state.job = job;
    state.online = online.view();
    state.analysed_at = now_unix;
    s.jobs.push_back(std::move(state));
  }
  return s;
}

}  // namespace strata::agent
