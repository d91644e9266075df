// Reading one Kineto / Chrome-trace event's fields (see kineto_event.h).
#include "importers/kineto_event.h"

#include <cstring>

#include "core/decimal.h"

namespace strata::kineto {
namespace {

namespace od = simdjson::ondemand;

// The key's raw text up to its closing quote, without unescaping. None of the keys we look for
// contains an escape; a key that does ends in a backslash here and so matches none of them. Keys are a
// few bytes long: a plain loop (simdjson has checked that the closing quote is there).
std::string_view KeyOf(const od::field& field) {
  const char* raw = field.key().raw();
  size_t n = 0;
  while (raw[n] != '"') ++n;
  return {raw, n};
}

// `key` is the literal: a length check and a fixed-size compare the compiler inlines (string_view's ==
// became an out-of-line call here, then memcmp, for every key of every event).
template <size_t N>
bool Is(std::string_view key, const char (&literal)[N]) {
  return key.size() == N - 1 && std::memcmp(key.data(), literal, N - 1) == 0;
}

// The event keys the importer reads, found by length then bytes.
enum class EventKey { kOther, kPh, kTs, kId, kBp, kCat, kDur, kPid, kTid, kName, kArgs };
EventKey EventKeyOf(std::string_view key) {
  switch (key.size()) {
    case 2:
      return Is(key, "ph")   ? EventKey::kPh
             : Is(key, "ts") ? EventKey::kTs
             : Is(key, "id") ? EventKey::kId
             : Is(key, "bp") ? EventKey::kBp
                             : EventKey::kOther;
    case 3:
      return Is(key, "cat")   ? EventKey::kCat
             : Is(key, "dur") ? EventKey::kDur
             : Is(key, "pid") ? EventKey::kPid
             : Is(key, "tid") ? EventKey::kTid
                              : EventKey::kOther;
    case 4:
      return Is(key, "name") ? EventKey::kName : Is(key, "args") ? EventKey::kArgs : EventKey::kOther;
    default:
      return EventKey::kOther;
  }
}

std::string_view Token(od::value& v) {
  std::string_view t = v.raw_json_token();
  while (!t.empty() && (t.back() == ' ' || t.back() == '\n' || t.back() == '\r' || t.back() == '\t'))
    t.remove_suffix(1);
  return t;
}

simdjson::error_code ReadId(od::value& v, bool* is_string, std::string_view* text) {
  od::json_type type;
  if (auto e = v.type().get(type)) return e;
  if (type == od::json_type::string) {
    *is_string = true;
    return v.get_string().get(*text);
  }
  *is_string = false;
  *text = Token(v);
  return simdjson::SUCCESS;
}

int64_t TokenToInt(std::string_view tok) {
  int64_t v;
  return ParseInt64(tok, &v) == NumberParse::kOk ? v : -1;
}

simdjson::error_code ReadArgs(od::object& args, RawEvent& ev) {
  const bool counter = Is(ev.ph, "C");
  // JSON members are unordered: when "args" comes before "ph", also keep what a counter (numeric
  // values) or a metadata event (args.name) needs; Commit uses them only for those phases.
  const bool unknown_ph = ev.ph.empty();
  for (auto field_result : args) {
    // The field and its value by reference: copies of simdjson's iterators here stalled on store
    // forwarding (perf: a third of the importer's time on two such loads per field).
    if (auto e = field_result.error()) return e;
    od::field& field = field_result.value_unsafe();
    const std::string_view key = KeyOf(field);
    od::value& v = field.value();
    if (counter || unknown_ph) {
      double d;
      std::string_view tok = Token(v);
      if (ParseDouble(tok, &d) == NumberParse::kOk) ev.counter_values.emplace_back(key, d);
      if (counter) continue;
    }
    if (Is(key, "stream")) {
      ev.stream = TokenToInt(Token(v));
    } else if (Is(key, "correlation")) {
      ev.correlation = TokenToInt(Token(v));
    } else if (Is(key, "name") && (Is(ev.ph, "M") || unknown_ph)) {
      if (v.get_string().get(ev.meta_name)) ev.meta_name = {};
    } else if (Is(key, "Collective name")) {
      ev.has_coll = !v.get_string().get(ev.coll_name);
    } else if (Is(key, "Process Group Name")) {
      ev.has_coll |= !v.get_string().get(ev.group);
    } else if (Is(key, "Process Group Description")) {
      ev.has_coll |= !v.get_string().get(ev.group_desc);
    } else if (Is(key, "Process Group Ranks")) {
      // Kineto writes a string such as "[0, 1]": keep its text, not the quoted JSON token. Another
      // scalar is kept as written; an array or object (whose token would be just its bracket) is dropped.
      if (v.get_string().get(ev.group_ranks)) {
        const std::string_view tok = Token(v);
        ev.group_ranks = !tok.empty() && (tok[0] == '[' || tok[0] == '{') ? std::string_view() : tok;
      }
    } else if (Is(key, "dtype")) {
      if (v.get_string().get(ev.dtype)) ev.dtype = {};
    } else if (Is(key, "In msg nelems")) {
      ev.coll.in_nelems = TokenToInt(Token(v));
    } else if (Is(key, "Out msg nelems")) {
      ev.coll.out_nelems = TokenToInt(Token(v));
    } else if (Is(key, "Group size")) {
      ev.coll.group_size = static_cast<int32_t>(TokenToInt(Token(v)));
    } else if (Is(key, "memory bandwidth (GB/s)")) {
      double d;
      if (ParseDouble(Token(v), &d) == NumberParse::kOk && d >= 0) ev.memory_bandwidth_gbps = d;
    }
  }
  return simdjson::SUCCESS;
}

}  // namespace

simdjson::error_code ReadKinetoEvent(od::value& value, RawEvent* event, bool* is_object) {
  od::object obj;
  *is_object = !value.get_object().get(obj);
  if (!*is_object) return simdjson::SUCCESS;
  RawEvent& ev = *event;
  ev = RawEvent();
  for (auto field_result : obj) {
    if (auto e = field_result.error()) return e;
    od::field& field = field_result.value_unsafe();  // by reference, as in ReadArgs
    od::value& v = field.value();
    switch (EventKeyOf(KeyOf(field))) {
      case EventKey::kPh:
        if (v.get_string().get(ev.ph)) ev.ph = "?";
        break;
      case EventKey::kName:
        ev.has_name = !v.get_string().get(ev.name);
        break;
      case EventKey::kCat:
        ev.has_cat = !v.get_string().get(ev.cat);
        break;
      case EventKey::kTs:
        ev.ts = Token(v);
        break;
      case EventKey::kDur:
        ev.dur = Token(v);
        break;
      case EventKey::kPid:
        if (auto e = ReadId(v, &ev.pid_is_string, &ev.pid_text)) return e;
        break;
      case EventKey::kTid:
        if (auto e = ReadId(v, &ev.tid_is_string, &ev.tid_text)) return e;
        break;
      case EventKey::kId:
        if (auto e = ReadId(v, &ev.id_is_string, &ev.id)) return e;
        break;
      case EventKey::kBp:
        if (v.get_string().get(ev.bp)) ev.bp = {};
        break;
      case EventKey::kArgs: {
        od::object args;
        if (!v.get_object().get(args)) {
          if (auto e = ReadArgs(args, ev)) return e;
        }
        break;
      }
      case EventKey::kOther:
        break;
    }
  }
  return simdjson::SUCCESS;
}

}  // namespace strata::kineto
