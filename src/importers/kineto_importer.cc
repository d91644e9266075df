// Kineto / Chrome-trace importer: JsonEventSplitter cuts the event array into batches, simdjson's
// On-Demand API parses each batch, and each event is validated and appended to the columnar store.
#include "importers/kineto_importer.h"

#include <fmt/format.h>
#include <simdjson.h>

#include <array>
#include <cstring>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "core/bounded_queue.h"
#include "core/decimal.h"
#include "core/skip_reasons.h"
#include "importers/json_event_splitter.h"
#include "importers/span_checks.h"

namespace strata {

namespace {

namespace od = simdjson::ondemand;

struct PairHash {
  size_t operator()(const std::pair<int64_t, int64_t>& p) const {
    return std::hash<int64_t>()(p.first * 0x9E3779B97F4A7C15ULL ^ static_cast<uint64_t>(p.second));
  }
};

/// A track is one (pid, tid, stream) lane: events of one thread that name different GPU streams (or none)
/// go to different tracks, so a slice's stream is always its track's stream.
struct LaneKey {
  int64_t pid, tid, stream;
  bool operator==(const LaneKey&) const = default;
};
struct LaneHash {
  size_t operator()(const LaneKey& k) const {
    uint64_t h = static_cast<uint64_t>(k.pid) * 0x9E3779B97F4A7C15ULL;
    h ^= static_cast<uint64_t>(k.tid) + 0x632BE59BD9B4E019ULL + (h << 6) + (h >> 2);
    h ^= static_cast<uint64_t>(k.stream) + 0x9E3779B97F4A7C15ULL + (h << 6) + (h >> 2);
    return h;
  }
};

/// One event's fields as read from JSON, before validation. Views point into the parser's buffers.
struct RawEvent {
  std::string_view ph, name, cat, ts, dur, id, bp;
  bool has_name = false, has_cat = false, id_is_string = false;
  bool pid_is_string = false, tid_is_string = false;
  std::string_view pid_text, tid_text;  // raw token (number) or unescaped text (string)
  int64_t stream = -1, correlation = kNoCorrelation;
  std::string_view meta_name;  // args.name of ph M events
  CollectiveArgs coll;
  std::string_view coll_name, group, group_desc, group_ranks, dtype;
  bool has_coll = false;
  std::vector<std::pair<std::string_view, double>> counter_values;
};

/// A batch copied out of the splitter's window as "[" body "]" plus simdjson's padding.
struct OwnedBatch {
  std::string doc;
  size_t size = 0;                                      // bytes of JSON in doc
  std::vector<std::pair<uint32_t, uint32_t>> elements;  // relative to doc + 1
};

/// What one thread's imports reuse from file to file: the JSON parser's buffers, the batch copy and the row
/// tables' capacity. A job of 100,000 small files otherwise allocates, faults in and frees them 100,000 times.
struct ImportScratch {
  od::parser parser;
  simdjson::dom::parser member_parser;  // top-level members (distributedInfo, deviceProperties)
  OwnedBatch batch;
  RawBuffer window;  // the JSON splitter's read window
  RowTables rows;
};
// A read window larger than this (a large file's) is freed rather than kept for the thread's next file.
constexpr size_t kMaxSpareWindow = 4 << 20;

ImportScratch& ThreadScratch() {
  thread_local ImportScratch scratch;
  return scratch;
}

class KinetoImporter {
 public:
  KinetoImporter(ByteSource& src, const ImportOptions& options)
      : src_(src), options_(options), scratch_(ThreadScratch()), parser_(scratch_.parser) {
    store_.inputs.emplace_back();
    store_.inputs[0].path = src.path();
    store_.ranks.emplace_back();
    store_.adopt_rows(std::move(scratch_.rows));
  }

  Expected<TraceStore> Run() {
    JsonEventSplitter splitter(options_.batch_bytes);
    splitter.set_buffer(std::move(scratch_.window));
    std::vector<std::pair<std::string, std::string>> members;  // applied after the events
    auto on_member = [&](std::string_view key, std::string_view raw) {
      if (key == "distributedInfo" || key == "deviceProperties" || key == "baseTimeNanoseconds")
        members.emplace_back(std::string(key), std::string(raw));
    };
    Status st;
    if (!options_.pipeline) {
      OwnedBatch& batch = scratch_.batch;
      st = splitter.Run(src_, on_member, [&](const EventBatch& b) {
        Prepare(b, &batch);
        Process(batch);
        return Status::Ok();
      });
    } else {
      // Two threads: this one reads, inflates and splits; the other parses. Buffers circulate between
      // a full queue and a free queue so that no batch is allocated twice.
      BoundedQueue<OwnedBatch> full(2), free_batches(3);
      std::thread parser_thread([&] {
        OwnedBatch b;
        while (full.Pop(&b)) {
          Process(b);
          free_batches.TryPush(std::move(b));  // never blocks: a surplus buffer is simply freed
        }
      });
      st = splitter.Run(src_, on_member, [&](const EventBatch& b) {
        OwnedBatch batch;
        free_batches.TryPop(&batch);
        Prepare(b, &batch);
        full.Push(std::move(batch));
        return Status::Ok();
      });
      full.Close();
      parser_thread.join();
    }
    RawBuffer window = splitter.take_buffer();
    if (window.capacity() <= kMaxSpareWindow) scratch_.window = std::move(window);
    if (!st.ok()) return st;
    for (const auto& [key, raw] : members) OnMember(key, raw);
    if (splitter.shape() == JsonEventSplitter::Shape::kObject && !splitter.found_events()) {
      return Status::Error(fmt::format("{}: not a Kineto/Chrome trace: the top-level object has no "
                                       "\"traceEvents\" array",
                                       src_.path()),
                           ErrorKind::kNotATrace);
    }
    Finish(splitter.shape());
    return std::move(store_);
  }

 private:
  RankInfo& rank() { return store_.ranks[0]; }
  InputInfo& input() { return store_.inputs[0]; }
  void Skip(SkipId reason, std::string_view detail = {}) { CountSkip(input().skipped, reason, 1, detail); }

  // ---- top-level members -------------------------------------------------------------------------
  void OnMember(std::string_view key, std::string_view raw) {
    if (key != "distributedInfo" && key != "deviceProperties" && key != "baseTimeNanoseconds") return;
    simdjson::dom::element el;
    if (scratch_.member_parser.parse(raw.data(), raw.size()).get(el)) {
      CountSkip(input().repaired, SkipId::kUnreadableMember, 1, key);
      return;
    }
    if (key == "distributedInfo") {
      int64_t v;
      if (!el["rank"].get_int64().get(v) && v >= 0 && v < INT32_MAX) {
        rank().rank = static_cast<int32_t>(v);
        rank().rank_source = "distributedInfo";
      }
      if (!el["world_size"].get_int64().get(v) && v > 0 && v < INT32_MAX) rank().world_size = static_cast<int32_t>(v);
      std::string_view backend;
      if (!el["backend"].get_string().get(backend)) rank().backend = std::string(backend);
    } else if (key == "deviceProperties") {
      simdjson::dom::array arr;
      if (!el.get_array().get(arr)) {
        for (auto dev : arr) {
          std::string_view name;
          if (!dev["name"].get_string().get(name)) rank().devices.emplace_back(name);
        }
      }
    } else {
      int64_t v;
      if (!el.get_int64().get(v)) rank().base_time_ns = v;
    }
  }

  // ---- batches -----------------------------------------------------------------------------------
  static void Prepare(const EventBatch& batch, OwnedBatch* out) {
    out->size = batch.body.size() + 2;
    if (out->doc.size() < out->size + simdjson::SIMDJSON_PADDING)
      out->doc.resize(out->size + simdjson::SIMDJSON_PADDING);
    out->doc[0] = '[';
    std::memcpy(out->doc.data() + 1, batch.body.data(), batch.body.size());
    out->doc[out->size - 1] = ']';
    // The padding as a fresh batch has it (zeros), not the previous batch's bytes: on some malformed input
    // (an element ':') simdjson's On-Demand walk reads a token past the end, and stale bytes there counted
    // as another element, so the skip reasons depended on the file imported before (the fuzzer's batching
    // invariant; main at 2442ad9 too).
    std::memset(out->doc.data() + out->size, 0, simdjson::SIMDJSON_PADDING);
    out->elements = batch.elements;
  }

  void Process(OwnedBatch& batch) {
    size_t done = 0;
    // An empty element (",," or a trailing comma) is invalid JSON that simdjson's On-Demand array walk
    // lets through as a value (not_an_object); parse such a batch event by event so that the empty
    // element counts as invalid_json whatever the batching.
    bool has_empty = false;
    for (const auto& element : batch.elements) has_empty |= element.second == 0;
    if (has_empty || !ParseArray(batch, &done)) {
      // Something in this batch is malformed: parse the remaining events one at a time so one bad event
      // costs only itself.
      const std::string_view body(batch.doc.data() + 1, batch.size - 2);
      for (size_t k = done; k < batch.elements.size(); ++k) {
        const auto [off, len] = batch.elements[k];
        ParseSingle(body.substr(off, len));
      }
    }
  }

  // Parses a batch as an array of events. Returns false on a JSON error; *done = events handled.
  bool ParseArray(OwnedBatch& batch, size_t* done) {
    od::document doc;
    if (parser_.iterate(batch.doc.data(), batch.size, batch.doc.size()).get(doc)) return false;
    od::array arr;
    if (doc.get_array().get(arr)) return false;
    for (auto element : arr) {
      od::value v;
      if (std::move(element).get(v)) return false;
      auto rc = HandleEvent(v);
      if (rc == simdjson::SUCCESS) {
        ++*done;
        continue;
      }
      return false;
    }
    return true;
  }

  void ParseSingle(std::string_view text) {
    // Parsed as a one-element array, exactly like an element of a batch, so that the outcome for a bad
    // element (e.g. a scalar: not_an_object) does not depend on how the events were batched.
    std::string& buf = single_;
    buf.assign("[");
    buf.append(text);
    buf.push_back(']');
    bool repaired = false;
    if (!simdjson::validate_utf8(buf.data(), buf.size())) {
      buf = RepairUtf8(buf);
      repaired = true;
    }
    const size_t len = buf.size();
    buf.resize(len + simdjson::SIMDJSON_PADDING);
    od::document doc;
    od::array arr;
    simdjson::error_code rc = simdjson::INCORRECT_TYPE;
    if (!parser_.iterate(buf.data(), len, buf.size()).get(doc) && !doc.get_array().get(arr)) {
      for (auto element : arr) {
        od::value v;
        rc = std::move(element).get(v);
        if (!rc) rc = HandleEvent(v);
        break;
      }
    }
    if (rc != simdjson::SUCCESS) {
      Skip(SkipId::kInvalidJson);
      return;
    }
    if (repaired) CountSkip(input().repaired, SkipId::kInvalidUtf8Replaced);
  }

  static std::string RepairUtf8(std::string_view in) {
    std::string out;
    out.reserve(in.size());
    size_t i = 0;
    while (i < in.size()) {
      const auto c = static_cast<unsigned char>(in[i]);
      size_t len = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
      if (len > 0 && i + len <= in.size() && simdjson::validate_utf8(in.data() + i, len)) {
        out.append(in.data() + i, len);
        i += len;
      } else {
        out.append("\xEF\xBF\xBD");  // U+FFFD
        ++i;
      }
    }
    return out;
  }

  // ---- one event -----------------------------------------------------------------------------------
  // The key's raw text up to its closing quote, without unescaping. None of the keys we look for
  // contains an escape; a key that does ends in a backslash here and so matches none of them. Keys are a
  // few bytes long: a plain loop (simdjson has checked that the closing quote is there).
  static std::string_view KeyOf(const od::field& field) {
    const char* raw = field.key().raw();
    size_t n = 0;
    while (raw[n] != '"') ++n;
    return {raw, n};
  }

  // `key` is the literal: a length check and a fixed-size compare the compiler inlines (string_view's ==
  // became an out-of-line call here, then memcmp, for every key of every event).
  template <size_t N>
  static bool Is(std::string_view key, const char (&literal)[N]) {
    return key.size() == N - 1 && std::memcmp(key.data(), literal, N - 1) == 0;
  }

  // The event keys the importer reads, found by length then bytes.
  enum class EventKey { kOther, kPh, kTs, kId, kBp, kCat, kDur, kPid, kTid, kName, kArgs };
  static EventKey EventKeyOf(std::string_view key) {
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

  static std::string_view Token(od::value& v) {
    std::string_view t = v.raw_json_token();
    while (!t.empty() && (t.back() == ' ' || t.back() == '\n' || t.back() == '\r' || t.back() == '\t'))
      t.remove_suffix(1);
    return t;
  }

  static simdjson::error_code ReadId(od::value& v, bool* is_string, std::string_view* text) {
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

  static int64_t TokenToInt(std::string_view tok) {
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
      }
    }
    return simdjson::SUCCESS;
  }

  simdjson::error_code HandleEvent(od::value& value) {
    od::object obj;
    if (value.get_object().get(obj)) {
      Skip(SkipId::kNotAnObject);
      return simdjson::SUCCESS;
    }
    RawEvent& ev = raw_;
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
    Commit(ev);
    return simdjson::SUCCESS;
  }

  int64_t IdFromText(bool is_string, std::string_view text, bool* ok) {
    *ok = true;
    if (!is_string) {
      int64_t v;
      if (ParseInt64(text, &v) == NumberParse::kOk) return v;
      if (text.empty()) return 0;  // absent
      *ok = false;
      return 0;
    }
    auto it = string_ids_.find(std::string(text));
    if (it != string_ids_.end()) return it->second;
    const int64_t id = -(int64_t{1} << 40) - static_cast<int64_t>(string_ids_.size());
    string_ids_.emplace(std::string(text), id);
    return id;
  }

  uint32_t TrackFor(int64_t pid, int64_t tid, int64_t stream) {
    const LaneKey key{pid, tid, stream};
    // A trace's events alternate between a few lanes (a CPU thread, its GPU stream, their flows): the last
    // few lanes are looked at before the hash map (perf: its lookups were ~1.4 % of the load).
    for (const RecentLane& r : recent_lanes_)
      if (r.track != UINT32_MAX && r.key == key) return r.track;
    auto [it, inserted] = track_ids_.try_emplace(key, static_cast<uint32_t>(store_.tracks.size()));
    if (inserted) {
      Track t;
      t.rank = 0;
      t.kind = stream >= 0 ? TrackKind::kGpuStream : TrackKind::kCpuThread;
      t.pid = pid;
      t.tid = tid;
      t.stream = stream;
      store_.tracks.push_back(t);
    }
    recent_lanes_[next_recent_lane_++ % recent_lanes_.size()] = RecentLane{key, it->second};
    return it->second;
  }

  /// Kineto's span rule (importers/span_checks.h): times are µs with up to three decimals; the start is
  /// checked whole before the duration; an end beyond int64 ns is a timestamp out of range.
  static constexpr SpanRules kSpanRules{
      {SkipId::kMissingTimestamp, SkipId::kInvalidTimestamp, SkipId::kTimestampOutOfRange},
      {SkipId::kMissingDuration, SkipId::kInvalidDuration, SkipId::kDurationOutOfRange},
      SkipId::kTimestampOutOfRange,
      /*range_first=*/false};

  /// The event's timestamp in ns, or false after counting why it is unusable.
  bool ParseTimestamp(std::string_view tok, int64_t* out) {
    const TimeField f = ReadTimeField(tok, 3);
    if (auto why = CheckTimeField(f, kSpanRules.start)) {
      Skip(*why);
      return false;
    }
    *out = f.ns;
    return true;
  }

  void CountCategory(const RawEvent& ev) {
    ++rank().events;
    CountCategoryId(ev.has_cat ? store_.strings.intern(ev.cat) : kNoCat);
  }

  // Accepted events by category id (kNoCat: none). A vector by id, not a hash map: one per event
  // (perf: the map's lookups were ~0.7 % of the load).
  void CountCategoryId(StringId cat) {
    if (cat == kNoCat) {
      ++no_category_count_;
      return;
    }
    if (cat >= category_counts_.size()) category_counts_.resize(cat + 1, 0);
    ++category_counts_[cat];
  }

  void Commit(RawEvent& ev) {
    if (ev.ph.empty()) {
      Skip(SkipId::kMissingPhase);
      return;
    }
    // HTA rounds all times inward to whole µs when its ts column is floating point: some event (metadata
    // included) has a JSON float ts, or none at all.
    if (!input().float_timestamps && (ev.ts.empty() || ev.ts.find_first_of(".eE") != std::string_view::npos)) {
      input().float_timestamps = true;
    }
    const char ph = ev.ph.size() == 1 ? ev.ph[0] : '?';
    if (ph == 'M') {
      HandleMetadata(ev);
      return;
    }
    bool ok_pid, ok_tid;
    const int64_t pid = IdFromText(ev.pid_is_string, ev.pid_text, &ok_pid);
    const int64_t tid = IdFromText(ev.tid_is_string, ev.tid_text, &ok_tid);
    if (!ok_pid || !ok_tid) {
      Skip(SkipId::kInvalidPidOrTid);
      return;
    }
    int64_t ts = 0;
    switch (ph) {
      case 'X': {
        const TimeField start = ReadTimeField(ev.ts, 3), dur = ReadTimeField(ev.dur, 3);
        if (auto why = CheckSpan(start, dur, kSpanRules)) {
          Skip(*why);
          return;
        }
        AddSlice(ev, pid, tid, start.ns, dur.ns, kSliceComplete);
        return;
      }
      case 'B': {
        if (!ParseTimestamp(ev.ts, &ts)) return;
        begin_end_[TrackFor(pid, tid, -1)].push_back(BeginOrEnd{
            ts, false, Pending{ts, std::string(ev.name), std::string(ev.cat), ev.has_cat, ev.correlation, ev.stream}});
        return;
      }
      case 'E': {
        if (!ParseTimestamp(ev.ts, &ts)) return;
        begin_end_[TrackFor(pid, tid, -1)].push_back(BeginOrEnd{ts, true, {}});
        return;
      }
      case 'i':
      case 'I':
      case 'n':
        if (!ParseTimestamp(ev.ts, &ts)) return;
        AddSlice(ev, pid, tid, ts, 0, kSliceInstant);
        return;
      case 'C': {
        if (!ParseTimestamp(ev.ts, &ts)) return;
        for (const auto& [key, value] : ev.counter_values) {
          const std::string series = ev.counter_values.size() == 1 && !ev.name.empty()
                                         ? std::string(ev.name)
                                         : fmt::format("{}.{}", ev.name, key);
          const StringId name = store_.strings.intern(series);
          auto [it, inserted] = counter_tracks_.try_emplace(std::make_pair(pid, static_cast<int64_t>(name)),
                                                            static_cast<uint32_t>(store_.tracks.size()));
          if (inserted) {
            Track t;
            t.kind = TrackKind::kCounter;
            t.pid = pid;
            t.tid = tid;
            t.name = name;
            store_.tracks.push_back(t);
          }
          store_.counters.track.push_back(it->second);
          store_.counters.ts_ns.push_back(ts);
          store_.counters.value.push_back(value);
        }
        CountCategory(ev);
        return;
      }
      case 's':
      case 't':
      case 'f': {
        if (!ParseTimestamp(ev.ts, &ts)) return;
        bool ok_id;
        const int64_t id = IdFromText(ev.id_is_string, ev.id, &ok_id);
        if (ev.id.empty() || !ok_id) {
          Skip(SkipId::kFlowWithoutId);
          return;
        }
        store_.flows.id.push_back(id);
        store_.flows.ts_ns.push_back(ts);
        store_.flows.track.push_back(TrackFor(pid, tid, -1));
        const StringId cat = ev.has_cat ? store_.strings.intern(ev.cat) : 0;  // interned once for both uses
        store_.flows.category.push_back(cat);
        store_.flows.phase.push_back(ph);
        ++rank().events;
        CountCategoryId(ev.has_cat ? cat : kNoCat);
        return;
      }
      default:
        Skip(SkipId::kUnsupportedPhase, ph == '?' ? std::string_view("other") : std::string_view(&ph, 1));
        return;
    }
  }

  void AddSlice(const RawEvent& ev, int64_t pid, int64_t tid, int64_t ts, int64_t dur, uint8_t flags) {
    const bool gpu = ev.stream >= 0 && ev.correlation >= 0;
    const uint32_t track = TrackFor(pid, tid, ev.stream);
    if (gpu) flags |= kSliceGpu;
    if (ev.has_cat) flags |= kSliceHasCategory;
    uint32_t args = kNoArgs;
    if (ev.has_coll) {
      CollectiveArgs a = ev.coll;
      a.collective = store_.strings.intern(ev.coll_name);
      a.group = store_.strings.intern(!ev.group.empty() ? ev.group : ev.group_desc);
      a.group_ranks = store_.strings.intern(ev.group_ranks);
      a.dtype = store_.strings.intern(ev.dtype);
      args = static_cast<uint32_t>(store_.collective_args.size());
      store_.collective_args.push_back(a);
      flags |= kSliceCollectiveArgs;
    }
    const StringId name = store_.strings.intern(ev.name);
    const StringId cat = ev.has_cat ? store_.strings.intern(ev.cat) : 0;
    store_.slices.append(ts, dur, name, cat, track, ev.correlation, flags, args);
    ++rank().events;
    CountCategoryId(ev.has_cat ? cat : kNoCat);
  }

  void HandleMetadata(const RawEvent& ev) {
    if (ev.meta_name.empty()) return;
    bool ok_pid, ok_tid;
    const int64_t pid = IdFromText(ev.pid_is_string, ev.pid_text, &ok_pid);
    const int64_t tid = IdFromText(ev.tid_is_string, ev.tid_text, &ok_tid);
    if (!ok_pid || !ok_tid) return;
    if (ev.name == "thread_name") thread_names_[{pid, tid}] = std::string(ev.meta_name);
    if (ev.name == "process_name") process_names_[pid] = std::string(ev.meta_name);
  }

  struct Pending {
    int64_t ts = 0;
    std::string name, cat;
    bool has_cat = false;
    int64_t correlation = -1, stream = -1;
  };
  // A B or E event of one lane, kept until the lane is read whole (PairBeginEnd).
  struct BeginOrEnd {
    int64_t ts;
    bool end;
    Pending begin;  // a B event's fields
  };

  // Pairs each lane's B and E events in timestamp order (file order among equal timestamps), as Perfetto's
  // sorter does before its parser: a trace written out of order loses no slice. Lanes in track order, so
  // the slices are appended the same way on every run.
  void PairBeginEnd() {
    std::vector<uint32_t> tracks;
    for (const auto& [track, events] : begin_end_) tracks.push_back(track);
    std::sort(tracks.begin(), tracks.end());
    for (uint32_t track : tracks) {
      auto& events = begin_end_[track];
      std::stable_sort(events.begin(), events.end(),
                       [](const BeginOrEnd& a, const BeginOrEnd& b) { return a.ts < b.ts; });
      std::vector<Pending> stack;
      for (BeginOrEnd& e : events) {
        if (!e.end) {
          stack.push_back(std::move(e.begin));
          continue;
        }
        if (stack.empty()) {
          Skip(SkipId::kEndWithoutBegin);
          continue;
        }
        Pending p = std::move(stack.back());
        stack.pop_back();
        CloseSlice(track, p, e.ts);
      }
      if (!stack.empty()) CountSkip(input().skipped, SkipId::kBeginWithoutEnd, stack.size());
    }
    begin_end_.clear();
  }

  void CloseSlice(uint32_t track, const Pending& p, int64_t end_ts) {
    int64_t dur = 0;
    if (auto why = CheckPairDuration(p.ts, end_ts, &dur)) {
      Skip(*why);
      return;
    }
    RawEvent merged;
    merged.name = p.name;
    merged.has_name = true;
    merged.cat = p.cat;
    merged.has_cat = p.has_cat;
    merged.correlation = p.correlation;
    merged.stream = p.stream;
    const Track& t = store_.tracks[track];
    AddSlice(merged, t.pid, t.tid, p.ts, dur, kSliceBeginEnd);
  }

  void Finish(JsonEventSplitter::Shape shape) {
    PairBeginEnd();
    for (auto& t : store_.tracks) {
      if (t.kind == TrackKind::kCounter) continue;
      auto it = thread_names_.find({t.pid, t.tid});
      if (it != thread_names_.end()) {
        t.name = store_.strings.intern(it->second);
      } else if (auto p = process_names_.find(t.pid); p != process_names_.end()) {
        t.name = store_.strings.intern(p->second);
      }
    }
    bool any_cat = false;
    for (StringId cat = 0; cat < category_counts_.size(); ++cat) {
      if (category_counts_[cat] == 0) continue;
      any_cat = true;
      rank().categories[std::string(store_.strings.view(cat))] += category_counts_[cat];
    }
    if (no_category_count_ > 0) rank().categories["(none)"] += no_category_count_;
    input().events = rank().events;
    input().format = shape == JsonEventSplitter::Shape::kObject ? InputFormat::kKineto
                     : any_cat                                  ? InputFormat::kChromeJson
                                                                : InputFormat::kPytorchLegacy;
    store_.release_rows(&scratch_.rows);
    store_.shrink_to_fit();
  }

  static constexpr StringId kNoCat = UINT32_MAX;

  ByteSource& src_;
  const ImportOptions& options_;
  TraceStore store_;
  ImportScratch& scratch_;
  od::parser& parser_;
  std::string single_;
  RawEvent raw_;
  std::unordered_map<LaneKey, uint32_t, LaneHash> track_ids_;
  std::unordered_map<std::pair<int64_t, int64_t>, uint32_t, PairHash> counter_tracks_;
  struct RecentLane {
    LaneKey key{0, 0, 0};
    uint32_t track = UINT32_MAX;  // none yet
  };
  std::array<RecentLane, 4> recent_lanes_{};
  size_t next_recent_lane_ = 0;
  std::unordered_map<std::string, int64_t> string_ids_;
  std::unordered_map<uint32_t, std::vector<BeginOrEnd>> begin_end_;  // by track
  std::unordered_map<std::pair<int64_t, int64_t>, std::string, PairHash> thread_names_;
  std::unordered_map<int64_t, std::string> process_names_;
  std::vector<uint64_t> category_counts_;  // by category id
  uint64_t no_category_count_ = 0;
};

}  // namespace

void ReleaseImportScratch() { ThreadScratch() = ImportScratch(); }

Expected<TraceStore> ImportKineto(ByteSource& src, const ImportOptions& options) {
  KinetoImporter importer(src, options);
  return importer.Run();
}

}  // namespace strata
