// JsonEventSplitter: every element exactly once, in order, for any batch size; members; errors with offsets.
#include "importers/json_event_splitter.h"

#include <gtest/gtest.h>

#include <map>
#include <random>
#include <string>
#include <vector>

#include "test_util.h"

namespace strata {
namespace {

using testing::TempFile;

struct SplitResult {
  Status status;
  std::vector<std::string> elements;
  std::map<std::string, std::string> members;
  std::vector<std::string> member_order;
  size_t batches = 0;
  JsonEventSplitter::Shape shape = JsonEventSplitter::Shape::kUnknown;
  bool found_events = false;
};

SplitResult Split(const std::string& doc, size_t batch_bytes, std::string* path_out = nullptr, bool gzip = false,
                  bool scalar = false) {
  SplitResult r;
  testing::TempDir dir;
  const std::string path = dir.file(gzip ? "doc.json.gz" : "doc.json");
  if (gzip) {
    testing::WriteGzip(path, doc);
  } else {
    testing::WriteFile(path, doc);
  }
  if (path_out) *path_out = path;
  auto src = ByteSource::Open(path);
  EXPECT_TRUE(src.ok()) << src.error();
  if (!src.ok()) return r;
  JsonEventSplitter splitter(batch_bytes, scalar);
  r.status = splitter.Run(
      *src.value(),
      [&](std::string_view key, std::string_view raw) {
        r.members[std::string(key)] = std::string(raw);
        r.member_order.emplace_back(key);
      },
      [&](const EventBatch& batch) {
        ++r.batches;
        EXPECT_FALSE(batch.elements.empty());
        for (const auto& [off, len] : batch.elements) {
          EXPECT_LE(static_cast<size_t>(off) + len, batch.body.size());
          const std::string element(batch.body.substr(off, len));
          // file_offset + offset locates the element in the decompressed document.
          EXPECT_EQ(doc.substr(batch.file_offset + off, len), element) << "batch at " << batch.file_offset;
          r.elements.push_back(element);
        }
        return Status::Ok();
      });
  r.shape = splitter.shape();
  r.found_events = splitter.found_events();
  return r;
}

// Events with strings that contain everything that can confuse a structure scanner.
std::vector<std::string> TrickyEvents() {
  return {
      R"({"ph":"X","name":"plain","ts":1,"dur":2})",
      R"({"ph":"X","name":"quote \" inside","ts":2,"dur":1})",
      R"({"ph":"X","name":"backslash at end \\","ts":3,"dur":1})",
      R"({"ph":"X","name":"escaped backslash then quote \\\" still inside","ts":4})",
      R"({"ph":"X","name":"braces } { ] [ , : inside","ts":5})",
      R"({"name":"\\\\\\","args":{"nested":{"deep":[1,[2,[3,{"x":"]}"}]]],"s":"}}}"},"t":[]}})",
      R"({"ph":"i","s":"g","name":"\u00e9\ud83d\ude00 unicode","ts":6})",
      R"({})",
      R"([])",
      R"("a bare string, with a comma")",
      R"(12345)",
      R"(-1.5e3)",
      R"(true)",
      R"(null)",
      R"({"k":"","v":"\"\""})",
  };
}

std::string Join(const std::vector<std::string>& events, const std::string& sep) {
  std::string out;
  for (size_t i = 0; i < events.size(); ++i) {
    if (i) out += sep;
    out += events[i];
  }
  return out;
}

TEST(JsonEventSplitter, EveryElementExactlyOnceForAnyBatchSize) {
  const auto events = TrickyEvents();
  const std::string doc = R"({"schemaVersion": 1, "distributedInfo": {"rank": 2, "s": "]}"}, "traceEvents": [)" +
                          Join(events, ",\n  ") +
                          R"(], "deviceProperties": [{"name": "A100"}], "baseTimeNanoseconds": 17})";
  for (size_t batch : {size_t{1}, size_t{2}, size_t{64}, size_t{100}, size_t{4} << 20}) {
    SCOPED_TRACE("batch_bytes=" + std::to_string(batch));
    const SplitResult r = Split(doc, batch);
    ASSERT_TRUE(r.status.ok()) << r.status.message();
    EXPECT_EQ(r.elements, events);
    EXPECT_EQ(r.shape, JsonEventSplitter::Shape::kObject);
    EXPECT_TRUE(r.found_events);
    if (batch == 1) {  // one element per batch
      EXPECT_EQ(r.batches, events.size());
    }
    if (batch == (size_t{4} << 20)) {
      EXPECT_EQ(r.batches, 1u);
    }
    // Members before and after traceEvents, raw and in order.
    EXPECT_EQ(r.member_order, (std::vector<std::string>{"schemaVersion", "distributedInfo", "deviceProperties",
                                                        "baseTimeNanoseconds"}));
    EXPECT_EQ(r.members.at("schemaVersion"), "1");
    EXPECT_EQ(r.members.at("distributedInfo"), R"({"rank": 2, "s": "]}"})");
    EXPECT_EQ(r.members.at("deviceProperties"), R"([{"name": "A100"}])");
    EXPECT_EQ(r.members.at("baseTimeNanoseconds"), "17");
  }
}

// The 64-byte AVX2 block scanner (chosen at run time) and the byte-by-byte one split alike: the same
// elements and members, for tricky events and at every batch size.
TEST(JsonEventSplitter, BlockScannerAndByteScannerAgree) {
  const auto events = TrickyEvents();
  std::string doc = R"({"a": {"s": "}{\\\"", "n": [[], {}]}, "traceEvents": [)" + Join(events, ",") + "]}";
  for (size_t batch : {size_t{1}, size_t{64}, size_t{4} << 20}) {
    const SplitResult fast = Split(doc, batch), slow = Split(doc, batch, nullptr, false, true);
    ASSERT_TRUE(fast.status.ok()) << fast.status.message();
    ASSERT_TRUE(slow.status.ok()) << slow.status.message();
    EXPECT_EQ(fast.elements, events);
    EXPECT_EQ(slow.elements, events);
    EXPECT_EQ(fast.members, slow.members);
  }
  // A truncated document fails either way.
  const std::string cut = doc.substr(0, doc.size() / 2);
  EXPECT_FALSE(Split(cut, 64).status.ok());
  EXPECT_FALSE(Split(cut, 64, nullptr, false, true).status.ok());
}

TEST(JsonEventSplitter, BareArray) {
  const auto events = TrickyEvents();
  const std::string doc = "\xEF\xBB\xBF \n[" + Join(events, " , ") + "]\n\n";
  for (size_t batch : {size_t{1}, size_t{64}, size_t{4} << 20}) {
    const SplitResult r = Split(doc, batch);
    ASSERT_TRUE(r.status.ok()) << r.status.message();
    EXPECT_EQ(r.elements, events);
    EXPECT_EQ(r.shape, JsonEventSplitter::Shape::kBareArray);
    EXPECT_TRUE(r.members.empty());
  }
}

TEST(JsonEventSplitter, GzipInputAndManyEvents) {
  // More than one read chunk (1 MiB) so the window slides, through gzip.
  std::vector<std::string> events;
  std::mt19937 rng(7);
  for (int i = 0; i < 30000; ++i) {
    std::string name(rng() % 40, 'n');
    if (i % 3 == 0) name += "\\\"]}";
    events.push_back(R"({"ph":"X","name":")" + name + R"(","ts":)" + std::to_string(i) + R"(,"dur":1,"args":{"a":[)" +
                     std::to_string(i) + "]}}");
  }
  const std::string doc = R"({"traceEvents":[)" + Join(events, ",") + "]}";
  ASSERT_GT(doc.size(), size_t{2} << 20);
  for (size_t batch : {size_t{64}, size_t{100000}, size_t{4} << 20}) {
    const SplitResult r = Split(doc, batch, nullptr, /*gzip=*/true);
    ASSERT_TRUE(r.status.ok()) << r.status.message();
    ASSERT_EQ(r.elements.size(), events.size());
    EXPECT_EQ(r.elements, events);
  }
}

TEST(JsonEventSplitter, ElementLargerThanReadChunk) {
  const std::string big = R"({"name":")" + std::string(3 << 20, 'x') + R"("})";
  const std::vector<std::string> events = {R"({"a":1})", big, R"({"b":2})"};
  const std::string doc = "[" + Join(events, ",") + "]";
  const SplitResult r = Split(doc, 64);
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(r.elements, events);
}

// Top-level member names that cross a read of the file: the name was taken from a position read before the
// window moved (a std::length_error abort, found by the invariant suite on a synth job's counters). 3,000 names of
// 205 bytes between values of 800 bytes make about 3 MB, so dozens of reads end inside a name.
TEST(JsonEventSplitter, MemberNamesThatCrossAReadAreWhole) {
  std::string doc = "{";
  std::vector<std::string> names;
  for (int i = 0; i < 3000; ++i) {
    names.push_back(std::string(200, 'k') + std::to_string(10000 + i));
    doc += "\"" + names.back() + "\":\"" + std::string(800, 'p') + "\",";
  }
  doc += "\"traceEvents\":[{\"a\":1}]}";
  const SplitResult r = Split(doc, 64);
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  ASSERT_EQ(r.member_order.size(), names.size());
  for (size_t i = 0; i < names.size(); ++i) ASSERT_EQ(r.member_order[i], names[i]) << i;
  EXPECT_EQ(r.elements, std::vector<std::string>{R"({"a":1})"});
}

TEST(JsonEventSplitter, EmptyArrays) {
  for (const char* doc : {"[]", "[ \n ]", R"({"traceEvents": []})", R"({"traceEvents":[ ],"x":1})", "{}"}) {
    const SplitResult r = Split(doc, 1);
    ASSERT_TRUE(r.status.ok()) << doc << ": " << r.status.message();
    EXPECT_TRUE(r.elements.empty()) << doc;
    EXPECT_EQ(r.batches, 0u) << doc;
  }
  EXPECT_TRUE(Split("[]", 1).found_events);
  EXPECT_FALSE(Split("{}", 1).found_events);
  EXPECT_FALSE(Split(R"({"traceEvents": 5})", 1).found_events);  // not an array: just a member
}

struct ErrorCase {
  std::string doc;
  size_t offset;      // expected byte offset in the message
  std::string words;  // expected part of the message
};

TEST(JsonEventSplitter, ErrorsNameTheFileAndByteOffset) {
  const std::vector<ErrorCase> cases = {
      {R"({"traceEvents":[{"ph":"X"},{"ph":)", 33, "ends inside an object or array"},
      {R"({"traceEvents":[{"ph":"X"})", 26, "event array is not closed"},
      {R"([{"a":1},{"b":2})", 16, "event array is not closed"},
      {R"([{"a":1}] x)", 10, "unexpected data after the end"},
      {R"({"traceEvents":[]} {)", 19, "unexpected data after the end"},
      {R"({"traceEvents":[]})"
       "\n]",
       19, "unexpected data after the end"},
      {R"([{"a":1} {"b":2}])", 9, "expected ',' or ']' after an event, found '{'"},
      {R"({"traceEvents":[{"name":"unterminated)", 37, "the document ends inside"},
      {R"({"traceEvents":[])", 17, "top-level object is not closed"},
      {R"({traceEvents:[]})", 1, "expected a member name"},
      {R"({"traceEvents" []})", 15, "expected ':'"},
      {R"({"a":1 "b":2})", 7, "expected ',' or '}' in the top-level object, found '\"'"},
      {"hello", 0, "must start with '{' or '['"},
      {"", 0, "the file is empty"},
      {" \n\t", 3, "the file is empty"},
      {R"([1"x"])", 2, "unexpected character inside a scalar value"},
  };
  for (const ErrorCase& c : cases) {
    std::string path;
    const SplitResult r = Split(c.doc, 64, &path);
    ASSERT_FALSE(r.status.ok()) << "document: " << c.doc;
    const std::string& msg = r.status.message();
    EXPECT_NE(msg.find(path + ": invalid JSON at byte " + std::to_string(c.offset) + ":"), std::string::npos)
        << "document: " << c.doc << "\nmessage: " << msg;
    EXPECT_NE(msg.find(c.words), std::string::npos) << "document: " << c.doc << "\nmessage: " << msg;
  }
}

TEST(JsonEventSplitter, CallbackErrorStopsTheRun) {
  testing::TempFile f(R"([{"a":1},{"b":2},{"c":3}])");
  auto src = ByteSource::Open(f.path());
  ASSERT_TRUE(src.ok());
  JsonEventSplitter splitter(1);
  int calls = 0;
  const Status st = splitter.Run(
      *src.value(), [](std::string_view, std::string_view) {},
      [&](const EventBatch&) { return ++calls == 2 ? Status::Internal("stop here") : Status::Ok(); });
  EXPECT_FALSE(st.ok());
  EXPECT_EQ(st.message(), "stop here");
  EXPECT_EQ(calls, 2);
}

TEST(JsonEventSplitter, TruncatedGzipIsReportedAsSuch) {
  std::string doc = R"({"traceEvents":[)";
  for (int i = 0; i < 2000; ++i) doc += std::string(i ? "," : "") + R"({"ph":"X","ts":)" + std::to_string(i) + "}";
  doc += "]}";
  std::string gz = testing::GzipBytes(doc);
  gz.resize(gz.size() / 2);
  testing::TempFile f(gz, ".json.gz");
  auto src = ByteSource::Open(f.path());
  ASSERT_TRUE(src.ok());
  JsonEventSplitter splitter(64);
  const Status st = splitter.Run(
      *src.value(), [](std::string_view, std::string_view) {}, [](const EventBatch&) { return Status::Ok(); });
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find(f.path()), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("truncated"), std::string::npos) << st.message();
}

}  // namespace
}  // namespace strata
