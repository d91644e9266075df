// Kineto / Chrome-trace importer: JsonEventSplitter cuts the event array into batches (read and parsed on two
// threads when the options say so), simdjson's On-Demand API parses each batch, kineto_event.h reads each
// event's fields and kineto_store_builder.h validates them and appends them to the columnar store. A batch
// with a malformed event is parsed again event by event, so that one bad event costs only itself.
#include "importers/kineto_importer.h"

#include <fmt/format.h>
#include <simdjson.h>

#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "core/bounded_queue.h"
#include "core/skip_reasons.h"
#include "importers/json_event_splitter.h"
#include "importers/kineto_event.h"
#include "importers/kineto_store_builder.h"

namespace strata {

namespace {

namespace od = simdjson::ondemand;

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
      : src_(src),
        options_(options),
        scratch_(ThreadScratch()),
        parser_(scratch_.parser),
        builder_(src.path(), std::move(scratch_.rows)) {}

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
      return Status::NotATrace(fmt::format("{}: not a Kineto/Chrome trace: the top-level object has no "
                                           "\"traceEvents\" array",
                                           src_.path()),
                               ErrorPlace{src_.path()});
    }
    return builder_.Finish(splitter.shape() == JsonEventSplitter::Shape::kObject, &scratch_.rows);
  }

 private:
  RankInfo& rank() { return builder_.rank(); }

  // ---- top-level members -------------------------------------------------------------------------
  void OnMember(std::string_view key, std::string_view raw) {
    if (key != "distributedInfo" && key != "deviceProperties" && key != "baseTimeNanoseconds") return;
    simdjson::dom::element el;
    if (scratch_.member_parser.parse(raw.data(), raw.size()).get(el)) {
      builder_.Repaired(SkipId::kUnreadableMember, key);
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
      builder_.Skip(SkipId::kInvalidJson);
      return;
    }
    if (repaired) builder_.Repaired(SkipId::kInvalidUtf8Replaced);
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
  simdjson::error_code HandleEvent(od::value& value) {
    bool is_object = false;
    if (auto e = kineto::ReadKinetoEvent(value, &raw_, &is_object)) return e;
    if (is_object)
      builder_.Add(raw_);
    else
      builder_.Skip(SkipId::kNotAnObject);
    return simdjson::SUCCESS;
  }

  ByteSource& src_;
  const ImportOptions& options_;
  ImportScratch& scratch_;
  od::parser& parser_;
  kineto::KinetoStoreBuilder builder_;
  std::string single_;
  kineto::RawEvent raw_;
};

}  // namespace

void ReleaseImportScratch() { ThreadScratch() = ImportScratch(); }

Expected<TraceStore> ImportKineto(ByteSource& src, const ImportOptions& options) {
  KinetoImporter importer(src, options);
  return importer.Run();
}

}  // namespace strata
