// The Flight Recorder dump decoder (see flight_recorder_decoder.h): a reader that walks the decoded value,
// key by key, with the file's path and the key's place in every error.
#include "importers/flight_recorder_decoder.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>

namespace strata {
namespace {

using Kind = PickleValue::Kind;

std::string_view DumpBaseName(std::string_view path) {
  const size_t slash = path.find_last_of('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

// The key of a dict entry as text (keys of a dump are str; others are shown as their kind).
std::string KeyText(const PickleValue& key) {
  return key.kind() == Kind::kString ? key.as_string() : fmt::format("<{} key>", PickleValue::KindName(key.kind()));
}

// Reads one dump's value into a FlightRecorderDump; every error starts with the path and names the place.
class DumpReader {
 public:
  explicit DumpReader(const std::string& path) : path_(path) {}

  Status Read(const PickleValue& root, FlightRecorderDump* dump);

 private:
  Status Error(const std::string& where, const std::string& what) const {
    return Status::BadInput(fmt::format("{}: Flight Recorder dump: {}: {}", path_, where, what), ErrorPlace{path_});
  }
  Status TypeError(const std::string& where, const char* expected, const PickleValue& v) const {
    return Error(where, fmt::format("expected {}, found {}", expected, PickleValue::KindName(v.kind())));
  }
  Status Int(const PickleValue& v, const std::string& where, int64_t* out) const;
  Status OptTime(const PickleValue& v, const std::string& where, std::optional<int64_t>* out) const;
  Status Str(const PickleValue& v, const std::string& where, std::string* out) const;
  Status Sizes(const PickleValue& v, const std::string& where, std::vector<std::vector<int64_t>>* out) const;
  Status Strings(const PickleValue& v, const std::string& where, std::vector<std::string>* out) const;
  Status Frames(const PickleValue& v, const std::string& where, std::vector<FrFrame>* out);
  Status ProcessGroup(const PickleValue& v, const std::string& where, FrEntry* e) const;
  Status State(const PickleValue& v, const std::string& where, FrState* out) const;
  Status EntryField(const std::string& key, const PickleValue& v, const std::string& where, FrEntry* e);
  Status Entry(const PickleValue& v, const std::string& where, FrEntry* e);
  Status Entries(const PickleValue& v, FlightRecorderDump* dump);
  Status Ranks(const PickleValue& v, const std::string& where, std::vector<int32_t>* out) const;
  Status PgConfig(const PickleValue& v, FlightRecorderDump* dump);
  Status PgStatus(const PickleValue& v, FlightRecorderDump* dump);
  Status Version(const PickleValue& v, FlightRecorderDump* dump) const;
  Status TopField(const std::string& key, const PickleValue& v, FlightRecorderDump* dump);

  const std::string& path_;
  uint64_t unknown_ = 0;
};

// An int; the JSON form writes pg_status numbers as decimal strings, read as ints too.
Status DumpReader::Int(const PickleValue& v, const std::string& where, int64_t* out) const {
  if (v.kind() == Kind::kInt) {
    *out = v.as_int();
    return Status::Ok();
  }
  if (v.kind() == Kind::kString && !v.as_string().empty() && v.as_string().size() <= 18) {  // within int64
    const std::string& s = v.as_string();
    const size_t digits = s[0] == '-' ? 1 : 0;
    if (digits < s.size() && std::all_of(s.begin() + static_cast<std::ptrdiff_t>(digits), s.end(),
                                         [](char c) { return std::isdigit(static_cast<unsigned char>(c)); })) {
      *out = std::stoll(s);
      return Status::Ok();
    }
  }
  return TypeError(where, "an int", v);
}

// A time the watchdog saw, or none: None in the pickle, 0 in the JSON form.
Status DumpReader::OptTime(const PickleValue& v, const std::string& where, std::optional<int64_t>* out) const {
  if (v.is_none()) return Status::Ok();
  int64_t t = 0;
  if (Status st = Int(v, where, &t); !st.ok()) return st;
  if (t != 0) *out = t;
  return Status::Ok();
}

Status DumpReader::Str(const PickleValue& v, const std::string& where, std::string* out) const {
  if (v.kind() != Kind::kString) return TypeError(where, "a str", v);
  *out = v.as_string();
  return Status::Ok();
}

Status DumpReader::Sizes(const PickleValue& v, const std::string& where, std::vector<std::vector<int64_t>>* out) const {
  if (v.kind() != Kind::kList && v.kind() != Kind::kTuple) return TypeError(where, "a list of shapes", v);
  for (size_t i = 0; i < v.items().size(); ++i) {
    const PickleValue& shape = v.items()[i];
    const std::string at = fmt::format("{}[{}]", where, i);
    if (shape.kind() != Kind::kList && shape.kind() != Kind::kTuple) return TypeError(at, "a list of ints", shape);
    std::vector<int64_t> dims;
    for (size_t d = 0; d < shape.items().size(); ++d) {
      int64_t dim = 0;
      if (Status st = Int(shape.items()[d], fmt::format("{}[{}]", at, d), &dim); !st.ok()) return st;
      dims.push_back(dim);
    }
    out->push_back(std::move(dims));
  }
  return Status::Ok();
}

Status DumpReader::Strings(const PickleValue& v, const std::string& where, std::vector<std::string>* out) const {
  if (v.kind() != Kind::kList && v.kind() != Kind::kTuple) return TypeError(where, "a list of str", v);
  for (size_t i = 0; i < v.items().size(); ++i) {
    std::string s;
    if (Status st = Str(v.items()[i], fmt::format("{}[{}]", where, i), &s); !st.ok()) return st;
    out->push_back(std::move(s));
  }
  return Status::Ok();
}

Status DumpReader::Frames(const PickleValue& v, const std::string& where, std::vector<FrFrame>* out) {
  if (v.kind() != Kind::kList && v.kind() != Kind::kTuple) return TypeError(where, "a list of frames", v);
  for (size_t i = 0; i < v.items().size(); ++i) {
    const PickleValue& f = v.items()[i];
    const std::string at = fmt::format("{}[{}]", where, i);
    if (f.kind() != Kind::kDict) return TypeError(at, "a dict", f);
    FrFrame frame;
    for (const auto& [key, value] : f.entries()) {
      const std::string k = KeyText(key), here = at + "." + k;
      Status st = k == "name"       ? Str(value, here, &frame.name)
                  : k == "filename" ? Str(value, here, &frame.filename)
                  : k == "line"     ? Int(value, here, &frame.line)
                                    : (++unknown_, Status::Ok());
      if (!st.ok()) return st;
    }
    out->push_back(std::move(frame));
  }
  return Status::Ok();
}

// `process_group`: a tuple (name, description) in the pickle, a list in the JSON form.
Status DumpReader::ProcessGroup(const PickleValue& v, const std::string& where, FrEntry* e) const {
  if ((v.kind() != Kind::kTuple && v.kind() != Kind::kList) || v.items().empty() || v.items().size() > 2)
    return TypeError(where, "a (name, description) pair", v);
  if (Status st = Str(v.items()[0], where + "[0]", &e->pg_name); !st.ok()) return st;
  return v.items().size() == 2 ? Str(v.items()[1], where + "[1]", &e->pg_desc) : Status::Ok();
}

Status DumpReader::State(const PickleValue& v, const std::string& where, FrState* out) const {
  std::string s;
  if (Status st = Str(v, where, &s); !st.ok()) return st;
  if (s == "scheduled")
    *out = FrState::kScheduled;
  else if (s == "started")
    *out = FrState::kStarted;
  else if (s == "completed")
    *out = FrState::kCompleted;
  else
    return Error(where, fmt::format("unknown state \"{}\" (scheduled, started or completed)", s));
  return Status::Ok();
}

Status DumpReader::EntryField(const std::string& k, const PickleValue& v, const std::string& at, FrEntry* e) {
  if (k == "record_id") return Int(v, at, &e->record_id);
  if (k == "pg_id") return Int(v, at, &e->pg_id);
  if (k == "process_group") return ProcessGroup(v, at, e);
  if (k == "collective_seq_id") return Int(v, at, &e->collective_seq_id);
  if (k == "p2p_seq_id") return Int(v, at, &e->p2p_seq_id);
  if (k == "op_id") return Int(v, at, &e->op_id);
  if (k == "profiling_name") return Str(v, at, &e->profiling_name);
  if (k == "time_created_ns") return Int(v, at, &e->time_created_ns);
  if (k == "time_discovered_started_ns") return OptTime(v, at, &e->time_discovered_started_ns);
  if (k == "time_discovered_completed_ns") return OptTime(v, at, &e->time_discovered_completed_ns);
  if (k == "input_sizes") return Sizes(v, at, &e->input_sizes);
  if (k == "output_sizes") return Sizes(v, at, &e->output_sizes);
  if (k == "input_dtypes") return Strings(v, at, &e->input_dtypes);
  if (k == "output_dtypes") return Strings(v, at, &e->output_dtypes);
  if (k == "state") return State(v, at, &e->state);
  if (k == "frames") return Frames(v, at, &e->frames);
  if (k == "duration_ms") {
    if (v.is_none()) return Status::Ok();
    if (v.kind() != Kind::kFloat && v.kind() != Kind::kInt) return TypeError(at, "a number", v);
    e->duration_ms = v.kind() == Kind::kFloat ? v.as_float() : static_cast<double>(v.as_int());
    return Status::Ok();
  }
  if (k == "is_p2p" || k == "retired") {
    if (v.kind() != Kind::kBool && v.kind() != Kind::kInt) return TypeError(at, "a bool", v);
    (k == "is_p2p" ? e->is_p2p : e->retired) = v.as_bool();
    return Status::Ok();
  }
  if (k == "timeout_ms") {
    int64_t t = 0;
    if (Status st = Int(v, at, &t); !st.ok()) return st;
    e->timeout_ms = t;
    return Status::Ok();
  }
  if (k != "thread_id" && k != "thread_name") ++unknown_;  // known, not read; or keys of versions to come
  return Status::Ok();
}

Status DumpReader::Entry(const PickleValue& v, const std::string& where, FrEntry* e) {
  if (v.kind() != Kind::kDict) return TypeError(where, "a dict", v);
  bool has_state = false;
  for (const auto& [key, value] : v.entries()) {
    const std::string k = KeyText(key);
    has_state |= k == "state";
    if (Status st = EntryField(k, value, where + "." + k, e); !st.ok()) return st;
  }
  if (e->profiling_name.empty()) return Error(where, "no profiling_name (which operation it is)");
  if (e->collective_seq_id < 0 && e->p2p_seq_id < 0)
    return Error(where, "no collective_seq_id nor p2p_seq_id (its place in its group's sequence)");
  if (!has_state)  // what the watchdog saw, from its times
    e->state = e->time_discovered_completed_ns ? FrState::kCompleted
               : e->time_discovered_started_ns ? FrState::kStarted
                                               : FrState::kScheduled;
  return Status::Ok();
}

Status DumpReader::Entries(const PickleValue& v, FlightRecorderDump* dump) {
  if (v.kind() != Kind::kList && v.kind() != Kind::kTuple) return TypeError("entries", "a list", v);
  dump->has_entries = true;
  dump->entries.resize(v.items().size());
  for (size_t i = 0; i < v.items().size(); ++i)
    if (Status st = Entry(v.items()[i], fmt::format("entries[{}]", i), &dump->entries[i]); !st.ok()) return st;
  return Status::Ok();
}

// A group's global ranks: "[0, 1, 2]" (torch), "0,1,2" (torchcomms) or a list of ints.
Status DumpReader::Ranks(const PickleValue& v, const std::string& where, std::vector<int32_t>* out) const {
  auto add = [&](int64_t r) {
    if (r < 0 || r > std::numeric_limits<int32_t>::max()) return Error(where, fmt::format("rank {} out of range", r));
    out->push_back(static_cast<int32_t>(r));
    return Status::Ok();
  };
  if (v.kind() == Kind::kList || v.kind() == Kind::kTuple) {
    for (size_t i = 0; i < v.items().size(); ++i) {
      int64_t r = 0;
      if (Status st = Int(v.items()[i], fmt::format("{}[{}]", where, i), &r); !st.ok()) return st;
      if (Status st = add(r); !st.ok()) return st;
    }
    return Status::Ok();
  }
  if (v.kind() != Kind::kString) return TypeError(where, "a list of ranks", v);
  std::string digits;
  for (char c : v.as_string() + ",") {
    if (std::isdigit(static_cast<unsigned char>(c))) {
      if (digits.size() >= 10) return Error(where, "a rank of more than 10 digits");
      digits += c;
    } else if (c == ',' || c == ']') {
      if (!digits.empty())
        if (Status st = add(std::stoll(digits)); !st.ok()) return st;
      digits.clear();
    } else if (c != '[' && c != ' ') {
      return Error(where, fmt::format("\"{}\" is not a list of ranks", v.as_string().substr(0, 64)));
    }
  }
  return Status::Ok();
}

Status DumpReader::PgConfig(const PickleValue& v, FlightRecorderDump* dump) {
  if (v.kind() != Kind::kDict) return TypeError("pg_config", "a dict", v);
  for (const auto& [key, value] : v.entries()) {
    const std::string at = "pg_config." + KeyText(key);
    if (value.kind() != Kind::kDict) return TypeError(at, "a dict", value);
    FrGroup g;
    g.name = KeyText(key);
    for (const auto& [k, field] : value.entries()) {
      const std::string name = KeyText(k), here = at + "." + name;
      Status st = name == "name"    ? Str(field, here, &g.name)
                  : name == "desc"  ? Str(field, here, &g.desc)
                  : name == "ranks" ? Ranks(field, here, &g.ranks)
                                    : (++unknown_, Status::Ok());
      if (!st.ok()) return st;
    }
    dump->pg_config[KeyText(key)] = std::move(g);
  }
  return Status::Ok();
}

Status DumpReader::PgStatus(const PickleValue& v, FlightRecorderDump* dump) {
  if (v.kind() != Kind::kDict) return TypeError("pg_status", "a dict", v);
  for (const auto& [key, value] : v.entries()) {
    const std::string id = key.kind() == Kind::kInt ? std::to_string(key.as_int()) : KeyText(key);
    const std::string at = "pg_status." + id;
    if (value.kind() != Kind::kDict) return TypeError(at, "a dict", value);
    FrGroupStatus s;
    for (const auto& [k, field] : value.entries()) {
      const std::string name = KeyText(k), here = at + "." + name;
      Status st = name == "last_enqueued_collective"    ? Int(field, here, &s.last_enqueued)
                  : name == "last_started_collective"   ? Int(field, here, &s.last_started)
                  : name == "last_completed_collective" ? Int(field, here, &s.last_completed)
                                                        : (++unknown_, Status::Ok());
      if (!st.ok()) return st;
    }
    dump->pg_status[id] = s;
  }
  return Status::Ok();
}

Status DumpReader::Version(const PickleValue& v, FlightRecorderDump* dump) const {
  if (Status st = Str(v, "version", &dump->version); !st.ok()) return st;
  const std::string& s = dump->version;
  const size_t dot = s.find('.');
  auto number = [](std::string_view part, int32_t* out) {
    if (part.empty() || part.size() > 6 ||
        !std::all_of(part.begin(), part.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); }))
      return false;
    *out = std::stoi(std::string(part));
    return true;
  };
  if (dot == std::string::npos || !number(std::string_view(s).substr(0, dot), &dump->version_major) ||
      !number(std::string_view(s).substr(dot + 1), &dump->version_minor))
    return Error("version", fmt::format("\"{}\" is not MAJOR.MINOR", s.substr(0, 32)));
  if (dump->version_major != 2)
    return Error("version", fmt::format("{}: strata reads versions 2.x (a new major version changes existing "
                                        "fields)",
                                        s));
  return Status::Ok();
}

Status DumpReader::TopField(const std::string& key, const PickleValue& v, FlightRecorderDump* dump) {
  if (key == "version") return Version(v, dump);
  if (key == "entries") return Entries(v, dump);
  if (key == "pg_config") return PgConfig(v, dump);
  if (key == "pg_status") return PgStatus(v, dump);
  if (key == "comm_lib_version") return v.is_none() ? Status::Ok() : Str(v, key, &dump->comm_lib_version);
  if (key == "rank") {
    int64_t r = 0;
    if (Status st = Int(v, key, &r); !st.ok()) return st;
    if (r < 0 || r > std::numeric_limits<int32_t>::max()) return Error(key, fmt::format("{} out of range", r));
    dump->rank = static_cast<int32_t>(r);
    dump->rank_source = "dump";
    return Status::Ok();
  }
  if (key != "nccl_comm_state") ++unknown_;  // known, not read; or keys of versions to come
  return Status::Ok();
}

bool IsP2pName(const std::string& name) {
  return name.find(":send") != std::string::npos || name.find(":recv") != std::string::npos;
}

// torchcomms numbers every entry of the process by one counter and records no P2P counter (docs/flight-recorder.md).
FrDialect DialectOf(const std::vector<FrEntry>& entries) {
  std::set<int64_t> groups;
  bool chained = true, no_p2p_counter = true, p2p_named = false;
  for (size_t i = 0; i < entries.size(); ++i) {
    groups.insert(entries[i].pg_id);
    if (i > 0)
      chained &= entries[i - 1].collective_seq_id < std::numeric_limits<int64_t>::max() &&
                 entries[i].collective_seq_id == entries[i - 1].collective_seq_id + 1;
    no_p2p_counter &= entries[i].p2p_seq_id <= 0 && !entries[i].is_p2p;
    p2p_named |= IsP2pName(entries[i].profiling_name);
  }
  return (groups.size() >= 2 && chained) || (no_p2p_counter && p2p_named) ? FrDialect::kTorchcomms : FrDialect::kTorch;
}

Status DumpReader::Read(const PickleValue& root, FlightRecorderDump* dump) {
  if (root.kind() != Kind::kDict) return TypeError("top level", "a dict", root);
  bool has_version = false;
  for (const auto& [key, value] : root.entries()) {
    const std::string k = KeyText(key);
    has_version |= k == "version";
    if (Status st = TopField(k, value, dump); !st.ok()) return st;
  }
  if (!has_version) return Error("top level", "no version key: not a Flight Recorder dump");
  dump->unknown_keys = unknown_;
  dump->dialect = DialectOf(dump->entries);
  return Status::Ok();
}

// The JSON tree as a pickle value, `depth` containers deep so far.
Expected<PickleValue> FromJson(const nlohmann::json& j, size_t depth, size_t max_depth) {
  if (j.is_object() || j.is_array()) {
    if (depth + 1 > max_depth) return Status::Resource(fmt::format("JSON nested deeper than {} containers", max_depth));
    PickleValue out = j.is_object() ? PickleValue::Dict() : PickleValue::List();
    for (auto it = j.begin(); it != j.end(); ++it) {
      auto value = FromJson(*it, depth + 1, max_depth);
      if (!value.ok()) return value.status();
      if (j.is_object())
        out.mutable_entries().emplace_back(PickleValue::String(it.key()), std::move(value).value());
      else
        out.mutable_items().push_back(std::move(value).value());
    }
    return out;
  }
  if (j.is_string()) return PickleValue::String(j.get<std::string>());
  if (j.is_boolean()) return PickleValue::Bool(j.get<bool>());
  if (j.is_number_integer() && (j.is_number_unsigned() ? j.get<uint64_t>() <= INT64_MAX : true))
    return PickleValue::Int(j.get<int64_t>());
  if (j.is_number()) return PickleValue::Float(j.get<double>());
  return PickleValue();  // null
}

}  // namespace

bool LooksLikeFlightRecorderPickle(std::string_view head) {
  return head.size() >= 2 && static_cast<unsigned char>(head[0]) == 0x80 && head[1] >= 2 && head[1] <= 5;
}

bool LooksLikeFlightRecorderJson(std::string_view head) {
  size_t i = 0;
  auto skip = [&] {
    while (i < head.size() && std::isspace(static_cast<unsigned char>(head[i]))) ++i;
  };
  skip();
  if (i >= head.size() || head[i++] != '{') return false;
  skip();
  if (i >= head.size() || head[i++] != '"') return false;
  const size_t end = head.find('"', i);
  if (end == std::string_view::npos) return false;
  static const std::set<std::string_view> kTopKeys = {"version",          "entries",         "pg_config", "pg_status",
                                                      "comm_lib_version", "nccl_comm_state", "rank"};
  return kTopKeys.count(head.substr(i, end - i)) > 0;
}

std::optional<int> RankFromDumpFileName(std::string_view path) {
  std::string_view name = DumpBaseName(path);
  for (std::string_view suffix : {".json", ".pkl", ".pickle"})
    if (name.size() > suffix.size() && name.ends_with(suffix)) name.remove_suffix(suffix.size());
  size_t start = name.size();
  while (start > 0 && std::isdigit(static_cast<unsigned char>(name[start - 1]))) --start;
  if (start == name.size() || name.size() - start > 9) return std::nullopt;
  return std::stoi(std::string(name.substr(start)));
}

Expected<PickleValue> JsonAsPickleValue(std::string_view text, const PickleLimits& limits) {
  if (text.size() > limits.max_input_bytes)
    return Status::Resource(
        fmt::format("JSON of {} bytes: more than the {} bytes allowed", text.size(), limits.max_input_bytes));
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    return Status::BadInput(fmt::format("not valid JSON: {}", e.what()));
  }
  return FromJson(j, 0, limits.max_depth);
}

Expected<FlightRecorderDump> DecodeFlightRecorderValue(const PickleValue& root, const std::string& path) {
  FlightRecorderDump dump;
  dump.path = path;
  DumpReader reader(path);
  if (Status st = reader.Read(root, &dump); !st.ok()) return st;
  if (dump.rank < 0)
    if (auto rank = RankFromDumpFileName(path)) {
      dump.rank = *rank;
      dump.rank_source = "file name";
    }
  return dump;
}

Expected<FlightRecorderDump> DecodeFlightRecorderDump(std::string_view bytes, const std::string& path,
                                                      const PickleLimits& limits) {
  const bool pickle = LooksLikeFlightRecorderPickle(bytes);
  auto value = pickle ? ParsePickle(bytes, limits) : JsonAsPickleValue(bytes, limits);
  // A pickle of objects (a checkpoint of an older torch.save, say) is not a dump: said as not a trace, so that a
  // directory's loader passes over it; a damaged dump stays an error.
  const bool objects = pickle && !value.ok() && value.error().find("refused") != std::string::npos;
  if (!value.ok())
    return value.status()
        .Reworded(fmt::format("{}: Flight Recorder dump ({}): {}", path, pickle ? "pickle" : "JSON", value.error()))
        .AsKind(objects ? ErrorKind::kNotATrace : value.status().kind())
        .InFile(path);
  const PickleValue& root = value.value();
  if (root.kind() != PickleValue::Kind::kDict || !root.Find("version"))
    return Status::NotATrace(fmt::format("{}: not a Flight Recorder dump (a {} without a version key)", path,
                                         PickleValue::KindName(root.kind())),
                             ErrorPlace{path});
  return DecodeFlightRecorderValue(root, path);
}

}  // namespace strata
