// Stream entry encoding (see stream_codec.h).
#include "agent/stream_codec.h"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <map>

namespace strata::agent {
namespace {

std::string Num(double v) { return fmt::format("{:.17g}", v); }

class FieldReader {
 public:
  explicit FieldReader(const StreamFields& fields) {
    for (const auto& [k, v] : fields) map_[k] = v;
  }
  template <typename T>
  void Int(const char* name, T* out) {
    const std::string* v = Find(name);
    if (v == nullptr) return;
    char* end = nullptr;
    errno = 0;
    const long long x = std::strtoll(v->c_str(), &end, 10);
    if (v->empty() || *end != '\0' || errno == ERANGE || x < std::numeric_limits<T>::min() ||
        x > std::numeric_limits<T>::max())
      return Bad(name, *v);
    *out = static_cast<T>(x);
  }
  void Real(const char* name, double* out, bool signed_value = false) {
    const std::string* v = Find(name);
    if (v == nullptr) return;
    char* end = nullptr;
    const double x = std::strtod(v->c_str(), &end);
    if (v->empty() || *end != '\0' || !std::isfinite(x) || (x < 0 && !signed_value)) return Bad(name, *v);
    *out = x;
  }
  void OptionalReal(const char* name, double* out, bool signed_value = false) {
    if (map_.count(name)) Real(name, out, signed_value);
  }
  template <typename T>
  void OptionalInt(const char* name, T* out) {
    if (map_.count(name)) Int(name, out);
  }
  bool Has(const char* name) const { return map_.count(name) > 0; }
  void Text(const char* name, std::string* out) {
    if (const std::string* v = Find(name)) *out = *v;
  }
  void OptionalText(const char* name, std::string* out) {
    if (map_.count(name)) Text(name, out);
  }
  const std::string& error() const { return error_; }

 private:
  const std::string* Find(const char* name) {
    auto it = map_.find(name);
    if (it != map_.end()) return &it->second;
    if (error_.empty()) error_ = std::string("stream entry has no field '") + name + "'";
    return nullptr;
  }
  void Bad(const char* name, const std::string& v) {
    if (error_.empty()) error_ = std::string("stream entry field '") + name + "' = '" + v + "' is not valid";
  }
  std::map<std::string, std::string> map_;
  std::string error_;
};

// An in-flight entry's state: its kind from state_kind, with its particulars (none when state_kind is ""). A
// state_kind this version does not know (a newer agent's) keeps the sentence (kUnrecognized).
std::optional<diagnosis::RankState> InflightState(FieldReader* r) {
  std::string sentence, key;
  r->Text("state", &sentence);
  if (!r->Has("state_kind")) return StateOfOldAgent(sentence);
  r->Text("state_kind", &key);
  if (key.empty()) return std::nullopt;
  const std::optional<diagnosis::RankStateKind> kind = diagnosis::ParseRankStateKind(key);
  if (!kind) return diagnosis::RankState{diagnosis::RankStateKind::kUnrecognized, sentence, ""};
  diagnosis::RankState state{*kind, "", ""};
  r->OptionalText("state_detail", &state.detail);
  r->OptionalText("state_context", &state.context);
  return state;
}

}  // namespace

std::string StepsStreamKey(const std::string& job) { return "strata:job:{" + job + "}:steps"; }
std::string RequestsStreamKey(const std::string& job) { return "strata:job:{" + job + "}:requests"; }

StreamFields EncodeSummary(const online::RankStepSummary& s, const std::string& host) {
  return {{"kind", "summary"},
          {"host", host},
          {"rank", std::to_string(s.rank)},
          {"group", std::to_string(s.group)},
          {"step", std::to_string(s.step)},
          {"start_unix", Num(s.start_unix)},
          {"step_s", Num(s.step_s)},
          {"wait_s", Num(s.wait_s)},
          {"oncpu_s", Num(s.oncpu_s)},
          {"runq_s", Num(s.runq_s)},
          {"throttled_s", Num(s.throttled_s)},
          {"gc_s", Num(s.gc_s)},
          {"io_s", Num(s.io_s)},
          {"offcpu_other_s", Num(s.offcpu_other_s)}};
}

StreamFields EncodeFinding(const online::Detection& d, const std::string& host) {
  return {{"kind", "finding"},
          {"host", host},
          {"rank", std::to_string(d.rank)},
          {"step", std::to_string(d.step)},
          {"first_step", std::to_string(d.first_step)},
          {"detected_at", Num(d.detected_at)},
          {"late_s", Num(d.late_s)},
          {"step_s", Num(d.step_s)},
          {"cause", std::string(diagnosis::CauseName(d.cause))},
          {"excess_s", Num(d.excess_s)},
          {"explained", Num(d.explained)},
          {"confidence", Num(d.confidence)},
          {"score", std::string(online::DecidingScoreName(d.decided_by))},
          {"peers", std::to_string(d.peers)},
          {"peer_late_s", Num(d.peer_late_s)},
          {"peer_z", Num(d.peer_z)},
          {"self_history", std::to_string(d.self_history)},
          {"self_late_s", Num(d.self_late_s)},
          {"self_z", Num(d.self_z)},
          {"self_baseline_s", Num(d.self_baseline_s)},
          {"onset_step", std::to_string(d.onset_step)},
          {"onset_unix", Num(d.onset_unix)},
          {"persistence", std::string(online::PersistenceName(d.persistence))}};
}

StreamFields EncodeWindowRequest(const WindowRequest& r) {
  std::string ranks;
  for (int32_t rank : r.ranks) ranks += (ranks.empty() ? "" : ",") + std::to_string(rank);
  return {{"kind", "window_request"},
          {"ranks", ranks},
          {"step", std::to_string(r.step)},
          {"requested_at", Num(r.requested_at)}};
}

Expected<WindowRequest> DecodeWindowRequest(const StreamFields& fields) {
  FieldReader r(fields);
  WindowRequest out;
  std::string ranks;
  r.Text("ranks", &ranks);
  r.Int("step", &out.step);
  r.Real("requested_at", &out.requested_at);
  if (!r.error().empty()) return Status::BadInput(r.error());
  for (size_t at = 0; at < ranks.size();) {
    const size_t comma = std::min(ranks.find(',', at), ranks.size());
    char* end = nullptr;
    const std::string one = ranks.substr(at, comma - at);
    const long v = std::strtol(one.c_str(), &end, 10);
    if (one.empty() || *end != '\0' || v < 0 || v > std::numeric_limits<int32_t>::max())
      return Status::BadInput("stream entry field 'ranks' = '" + ranks + "' is not a list of ranks");
    out.ranks.push_back(static_cast<int32_t>(v));
    at = comma + 1;
  }
  return out;
}

StreamFields EncodeWindowFinding(const WindowFinding& f) {
  return {{"kind", "window_finding"},
          {"host", f.host},
          {"rank", std::to_string(f.rank)},
          {"cause", f.cause},
          {"summary", f.summary},
          {"impact_pct", Num(f.impact_pct)},
          {"confidence", Num(f.confidence)},
          {"detected_at", Num(f.detected_at)}};
}

Expected<WindowFinding> DecodeWindowFinding(const StreamFields& fields) {
  FieldReader r(fields);
  WindowFinding f;
  r.Text("host", &f.host);
  r.Int("rank", &f.rank);
  r.Text("cause", &f.cause);
  r.Text("summary", &f.summary);
  r.Real("impact_pct", &f.impact_pct);
  r.Real("confidence", &f.confidence);
  r.Real("detected_at", &f.detected_at);
  if (!r.error().empty()) return Status::BadInput(r.error());
  return f;
}

std::optional<diagnosis::RankState> StateOfOldAgent(const std::string& sentence) {
  if (sentence.empty()) return std::nullopt;
  return diagnosis::StateOfSentence(sentence);
}

StreamFields EncodeInflight(const diagnosis::RankInflight& r, const std::string& host, double at_unix) {
  return {{"kind", "inflight"},
          {"host", host},
          {"at", Num(at_unix)},
          {"rank", std::to_string(r.rank)},
          {"inside", r.inside ? "1" : "0"},
          {"comm", r.comm},
          {"op", r.op},
          {"seq", std::to_string(r.seq)},
          {"since", Num(r.since_unix)},
          {"last_progress", Num(r.last_progress_unix)},
          {"threshold_s", Num(r.threshold_s)},
          {"world_size", std::to_string(r.world_size)},
          {"state", r.state ? diagnosis::StateText(*r.state) : ""},
          {"state_kind", r.state ? std::string(diagnosis::RankStateKindKey(r.state->kind)) : ""},
          {"state_detail", r.state ? r.state->detail : ""},
          {"state_context", r.state ? r.state->context : ""},
          {"frame", r.frame}};
}

Expected<InflightEntry> DecodeInflight(const StreamFields& fields) {
  FieldReader r(fields);
  InflightEntry e;
  diagnosis::RankInflight& f = e.inflight;
  int inside = 0;
  r.Text("host", &e.host);
  r.Real("at", &e.at_unix);
  r.Int("rank", &f.rank);
  r.Int("inside", &inside);
  r.Text("comm", &f.comm);
  r.Text("op", &f.op);
  r.Int("seq", &f.seq);
  r.Real("since", &f.since_unix);
  r.Real("last_progress", &f.last_progress_unix);
  r.Real("threshold_s", &f.threshold_s);
  r.Int("world_size", &f.world_size);
  f.state = InflightState(&r);
  r.Text("frame", &f.frame);
  if (!r.error().empty()) return Status::BadInput(r.error());
  if (f.rank < 0 || f.world_size < 0 || f.world_size > 10'000'000)
    return Status::BadInput("stream entry: rank or world_size out of range");
  f.inside = inside != 0;
  return e;
}

std::string EntryKind(const StreamFields& fields) {
  for (const auto& [k, v] : fields)
    if (k == "kind") return v;
  return "";
}

Expected<online::RankStepSummary> DecodeSummary(const StreamFields& fields) {
  FieldReader r(fields);
  online::RankStepSummary s;
  r.Int("rank", &s.rank);
  r.Int("group", &s.group);
  r.Int("step", &s.step);
  r.OptionalReal("start_unix", &s.start_unix);  // agents before step alignment did not send it
  r.Real("step_s", &s.step_s);
  r.Real("wait_s", &s.wait_s);
  r.Real("oncpu_s", &s.oncpu_s);
  r.Real("runq_s", &s.runq_s);
  r.Real("throttled_s", &s.throttled_s);
  r.Real("gc_s", &s.gc_s);
  r.Real("io_s", &s.io_s);
  r.Real("offcpu_other_s", &s.offcpu_other_s);
  if (r.error().empty() && (s.rank < 0 || s.step < 0))
    return Status::BadInput("stream entry has a negative rank or step");
  if (!r.error().empty()) return Status::BadInput(r.error());
  return s;
}

Expected<online::Detection> DecodeFinding(const StreamFields& fields) {
  FieldReader r(fields);
  online::Detection d;
  r.Int("rank", &d.rank);
  r.Int("step", &d.step);
  r.Int("first_step", &d.first_step);
  r.Real("detected_at", &d.detected_at);
  r.Real("late_s", &d.late_s);
  r.Real("step_s", &d.step_s);
  std::string cause;
  r.Text("cause", &cause);
  // A cause this build does not know (a newer agent's) is kept as unknown rather than dropping the detection.
  d.cause = diagnosis::ParseCause(cause).value_or(diagnosis::Cause::kUnknown);
  r.OptionalReal("excess_s", &d.excess_s);  // absent from agents before the online confidence (issue 23)
  r.OptionalReal("explained", &d.explained);
  r.OptionalReal("confidence", &d.confidence);
  // Both scores, the onset and the persistence: absent from agents before issue 25 (then: the peer score,
  // onset at the first late step, lasting).
  std::string score = "peers", persistence = "lasting";
  if (r.Has("score")) r.Text("score", &score);
  d.decided_by = online::ParseDecidingScore(score).value_or(online::DecidingScore::kPeers);
  r.OptionalInt("peers", &d.peers);
  r.OptionalReal("peer_late_s", &d.peer_late_s, /*signed_value=*/true);
  r.OptionalReal("peer_z", &d.peer_z, true);
  r.OptionalInt("self_history", &d.self_history);
  r.OptionalReal("self_late_s", &d.self_late_s, true);
  r.OptionalReal("self_z", &d.self_z, true);
  r.OptionalReal("self_baseline_s", &d.self_baseline_s);
  d.onset_step = d.first_step;
  r.OptionalInt("onset_step", &d.onset_step);
  r.OptionalReal("onset_unix", &d.onset_unix);
  if (r.Has("persistence")) r.Text("persistence", &persistence);
  // A score or persistence this build does not know (a newer agent's) reads as peers / lasting rather than
  // dropping the entry.
  d.persistence = online::ParsePersistence(persistence).value_or(online::Persistence::kLasting);
  if (!r.error().empty()) return Status::BadInput(r.error());
  return d;
}

}  // namespace strata::agent
