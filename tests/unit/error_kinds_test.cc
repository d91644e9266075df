// Errors with a kind and a place (core/status.h): each parser that finds bad input says kBadInput with the file
// and the byte offset or line where it found it (Kineto JSON, op-table CSV, segment, pickle Flight Recorder dump,
// Nsight Systems SQLite export, gzip stream), through the job loader the CLI and the Python module use; an
// unreadable path is kResource, a file of no known format kNotATrace; and Status keeps kind and place when an
// error is reworded or placed in its file.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <cstdint>
#include <map>
#include <string>

#include "core/status.h"
#include "importers/flight_recorder_decoder.h"
#include "importers/job_loader.h"
#include "importers/rank_inference.h"
#include "segments/segment_format.h"
#include "segments/segment_reader.h"
#include "test_util.h"

namespace strata {
namespace {

using testing::TempDir;

// The status of loading `path` alone, as `strata diagnose PATH` does.
Status LoadStatus(const std::string& path) {
  auto job = LoadJob({path}, LoadOptions{});
  EXPECT_FALSE(job.ok()) << path << " loaded";
  return job.status();
}

// Expects `st` is bad input found in `file`, and returns its place (never null when it returns normally).
const ErrorPlace& ExpectBadInputIn(const Status& st, const std::string& file) {
  EXPECT_EQ(st.kind(), ErrorKind::kBadInput) << st.message();
  static const ErrorPlace kNone;
  if (st.where() == nullptr) {
    ADD_FAILURE() << "no place: " << st.message();
    return kNone;
  }
  EXPECT_EQ(st.where()->file, file) << st.message();
  return *st.where();
}

TEST(ErrorKinds, MalformedKinetoJsonIsBadInputAtTheByteTheMessageNames) {
  TempDir dir;
  const std::string path = dir.file("rank-0.json");
  testing::WriteFile(path, R"({"traceEvents": [{"ph": "X", "name": "a"} "b"]})");
  const Status st = LoadStatus(path);
  const ErrorPlace& where = ExpectBadInputIn(st, path);
  ASSERT_TRUE(where.offset.has_value()) << st.message();
  EXPECT_FALSE(where.line.has_value());
  EXPECT_EQ(*where.offset, 42u) << st.message();  // the "b" after the event, where a ',' or ']' belongs
  EXPECT_NE(st.message().find(fmt::format("invalid JSON at byte {}", *where.offset)), std::string::npos)
      << st.message();
}

TEST(ErrorKinds, CsvRecordWithAnUnclosedQuoteIsBadInputAtItsLine) {
  TempDir dir;
  const std::string path = dir.file("ops.csv");
  testing::WriteFile(path, "rank,step,optype,start_ts,duration\n0,1,fwd,1,1\n0,1,\"fwd,2,1\n");
  const Status st = LoadStatus(path);
  const ErrorPlace& where = ExpectBadInputIn(st, path);
  EXPECT_EQ(where.line, uint64_t{3}) << st.message();
  EXPECT_FALSE(where.offset.has_value());
  EXPECT_NE(st.message().find(path + ": line 3: "), std::string::npos) << st.message();
}

TEST(ErrorKinds, OpTableWithoutARequiredColumnIsBadInputAtItsHeaderLine) {
  TempDir dir;
  const std::string path = dir.file("ops.csv");
  testing::WriteFile(path, "rank,step,optype,start_ts\n0,1,fwd,1\n");
  const Status st = LoadStatus(path);
  EXPECT_EQ(ExpectBadInputIn(st, path).line, uint64_t{1}) << st.message();
}

TEST(ErrorKinds, SegmentWithABadHeaderSizeIsBadInputAtTheSizeField) {
  TempDir dir;
  const std::string path = dir.file("record.sseg");
  std::string bytes(segments::kFileHeaderSize, '\0');
  bytes.replace(0, segments::kFileMagic.size(), segments::kFileMagic);
  bytes[8] = 1;   // version 1
  bytes[12] = 4;  // a header of 4 bytes: less than the header's own fields
  testing::WriteFile(path, bytes);
  const Status st = LoadStatus(path);
  EXPECT_EQ(ExpectBadInputIn(st, path).offset, uint64_t{12}) << st.message();
  const auto direct = segments::ReadSegment(path);
  ASSERT_FALSE(direct.ok());
  EXPECT_EQ(ExpectBadInputIn(direct.status(), path).offset, uint64_t{12});
}

TEST(ErrorKinds, TruncatedPickleDumpIsBadInputAtTheOffsetWhereItEnds) {
  const std::string bytes("\x80\x02}q\x00", 5);  // PROTO 2, EMPTY_DICT, BINPUT 0, and no STOP
  const auto dump = DecodeFlightRecorderDump(bytes, "nccl_trace_rank_0");
  ASSERT_FALSE(dump.ok());
  const ErrorPlace& where = ExpectBadInputIn(dump.status(), "nccl_trace_rank_0");
  EXPECT_EQ(where.offset, uint64_t{5}) << dump.error();
  EXPECT_NE(dump.error().find("byte offset 5"), std::string::npos) << dump.error();
}

TEST(ErrorKinds, PickleOfObjectsIsNotATraceInItsFile) {
  const auto dump = DecodeFlightRecorderDump("\x80\x02\x63os\nsystem\n.", "checkpoint.pt");
  ASSERT_FALSE(dump.ok());
  EXPECT_EQ(dump.status().kind(), ErrorKind::kNotATrace);
  ASSERT_NE(dump.status().where(), nullptr);
  EXPECT_EQ(dump.status().where()->file, "checkpoint.pt");
}

// A real SQLite file cut after its first page: its header says how long it was, so the error gives the byte
// where the file ends.
TEST(ErrorKinds, CutSqliteExportIsBadInputAtTheByteWhereItEnds) {
  TempDir dir;
  const std::string whole = dir.file("whole.sqlite");
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(whole.c_str(), &db), SQLITE_OK);
  std::string sql = "CREATE TABLE t(x TEXT);";
  for (int i = 0; i < 200; ++i) sql += fmt::format("INSERT INTO t VALUES ('{}');", std::string(100, 'a' + i % 26));
  ASSERT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(db);
  const std::string bytes = testing::ReadFile(whole);
  const size_t page = (static_cast<unsigned char>(bytes[16]) << 8) | static_cast<unsigned char>(bytes[17]);
  ASSERT_GT(bytes.size(), 2 * page);
  const std::string path = dir.file("rank_0.sqlite");
  testing::WriteFile(path, bytes.substr(0, page));
  const Status st = LoadStatus(path);
  EXPECT_EQ(ExpectBadInputIn(st, path).offset, uint64_t{page}) << st.message();
  EXPECT_NE(st.message().find("cut short"), std::string::npos) << st.message();
}

TEST(ErrorKinds, TruncatedGzipIsBadInputAtTheCompressedByteWhereItEnds) {
  TempDir dir;
  const std::string path = dir.file("rank-0.json.gz");
  const std::string gz = testing::GzipBytes(R"({"traceEvents": []})");
  testing::WriteFile(path, gz.substr(0, gz.size() - 6));
  const Status st = LoadStatus(path);
  EXPECT_EQ(ExpectBadInputIn(st, path).offset, uint64_t{gz.size() - 6}) << st.message();
}

TEST(ErrorKinds, MissingPathIsAResourceError) {
  TempDir dir;
  const Status st = LoadStatus(dir.file("no-such-file.json"));
  EXPECT_EQ(st.kind(), ErrorKind::kResource) << st.message();
}

TEST(ErrorKinds, FileOfNoKnownFormatIsNotATraceInThatFile) {
  TempDir dir;
  const std::string path = dir.file("notes.json");
  testing::WriteFile(path, "hello: this is no trace\n");
  const Status st = LoadStatus(path);
  EXPECT_EQ(st.kind(), ErrorKind::kNotATrace) << st.message();
  ASSERT_NE(st.where(), nullptr);
  EXPECT_EQ(st.where()->file, path);
  const std::string object = dir.file("config.json");
  testing::WriteFile(object, R"({"lr": 0.1})");
  EXPECT_EQ(LoadStatus(object).kind(), ErrorKind::kNotATrace);
}

TEST(ErrorKinds, RankMapThatIsNoFileEqualsRankIsAUsageError) {
  std::map<std::string, int> map;
  EXPECT_EQ(ParseRankMap("rank-0.json", &map).kind(), ErrorKind::kUsage);
}

TEST(Status, RewordingAndPlacingKeepTheKindAndThePlace) {
  const Status ok = Status::Ok();
  EXPECT_TRUE(ok.ok());
  EXPECT_EQ(ok.where(), nullptr);
  EXPECT_TRUE(ok.Reworded("x").ok());
  const Status bad = Status::BadInput("byte offset 7: bad", ErrorPlace::AtOffset("", 7));
  const Status placed = bad.InFile("dump.pkl").Reworded("dump.pkl: byte offset 7: bad");
  EXPECT_EQ(placed.kind(), ErrorKind::kBadInput);
  EXPECT_EQ(placed.message(), "dump.pkl: byte offset 7: bad");
  ASSERT_NE(placed.where(), nullptr);
  EXPECT_EQ(placed.where()->file, "dump.pkl");
  EXPECT_EQ(placed.where()->offset, uint64_t{7});
  EXPECT_EQ(placed.InFile("other").where()->file, "dump.pkl") << "a named file is kept";
  EXPECT_EQ(bad.where()->file, "") << "copies share an immutable error";
  EXPECT_EQ(Status::Resource("disk full").AsKind(ErrorKind::kInternal).kind(), ErrorKind::kInternal);
  EXPECT_EQ(Status::Resource("disk full").where(), nullptr);
  EXPECT_STREQ(ErrorKindName(ErrorKind::kNotATrace), "not_a_trace");
}

}  // namespace
}  // namespace strata
