// Segment files: round trip of every table, and what a reader does with damage (torn last block of a
// killed recorder, bad checksum, unknown version, not a segment).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <zlib.h>
#include <zstd.h>

#include "segments/segment_format.h"
#include "segments/segment_reader.h"
#include "segments/segment_writer.h"
#include "test_paths.h"
#include "test_util.h"

namespace strata::segments {
namespace {

std::string ReadBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string WriteSample(const std::string& path, size_t rows_per_block) {
  SegmentWriter writer;
  FileHeader header;
  header.created_unix_ns = 1'700'000'000'000'000'000;
  header.realtime_minus_monotonic_ns = 1'699'000'000'000'000'000;
  EXPECT_TRUE(writer.Open(path, header, rows_per_block).ok());
  for (uint32_t i = 0; i < 10; ++i) {
    writer.Append(OffCpuRow{100 + i, 100, 1000 * i, 1000 * i + 500, 200, i % 3, 7, 8, 9, i % 2});
    writer.Append(SampleRow{5000 + i, 100, 100, 1, static_cast<int32_t>(i), -1});
    writer.Append(CallRow{101, 100, i, 10 * i, 10 * i + 5});
    writer.Append(GcRow{100, 100, 20 * i, 20 * i + 3, 2, -static_cast<int64_t>(i)});
    writer.Append(CounterRow{30 * i, i, 0.5 * i});
  }
  writer.AppendMeta({{"type", "process"}, {"pid", 100}, {"rank", 3}, {"comm", std::string("bad\xff utf8")}});
  EXPECT_TRUE(writer.Close().ok());
  return ReadBytes(path);
}

TEST(SegmentFormat, RoundTripsEveryTable) {
  testing::TempDir dir;
  const std::string path = dir.path() + "/a.sseg";
  WriteSample(path, 4);
  auto read = ReadSegment(path);
  ASSERT_TRUE(read.ok()) << read.error();
  const SegmentData& d = read.value();
  EXPECT_TRUE(d.problems.empty());
  EXPECT_EQ(d.header.version, kFormatVersion);
  EXPECT_EQ(d.header.created_unix_ns, 1'700'000'000'000'000'000);
  EXPECT_EQ(d.header.realtime_minus_monotonic_ns, 1'699'000'000'000'000'000);
  ASSERT_EQ(d.off_cpu.size(), 10u);
  ASSERT_EQ(d.samples.size(), 10u);
  ASSERT_EQ(d.calls.size(), 10u);
  ASSERT_EQ(d.gcs.size(), 10u);
  ASSERT_EQ(d.counters.size(), 10u);
  ASSERT_EQ(d.meta.size(), 1u);
  EXPECT_EQ(d.off_cpu[7].tid, 107u);
  EXPECT_EQ(d.off_cpu[7].end_ns, 7500u);
  EXPECT_EQ(d.off_cpu[7].state, 1u);
  EXPECT_EQ(d.off_cpu[7].cpu, 1u);
  EXPECT_EQ(d.samples[3].user_stack, 3);
  EXPECT_EQ(d.samples[3].kernel_stack, -1);
  EXPECT_EQ(d.calls[9].probe, 9u);
  EXPECT_EQ(d.gcs[4].collected, -4);
  EXPECT_DOUBLE_EQ(d.counters[5].value, 2.5);
  EXPECT_EQ(d.meta[0]["rank"], 3);
  // 10 rows in blocks of 4 for five tables (3 blocks each) plus one meta block.
  EXPECT_EQ(d.blocks, 16u);
}

TEST(SegmentFormat, RoundTripsPythonSamples) {
  testing::TempDir dir;
  const std::string path = dir.path() + "/py.sseg";
  SegmentWriter writer;
  ASSERT_TRUE(writer.Open(path, FileHeader{}, 3).ok());
  for (uint32_t i = 0; i < 7; ++i) writer.Append(PySampleRow{1000 + i, 42, 40, static_cast<int32_t>(i) - 1});
  ASSERT_TRUE(writer.Close().ok());
  auto read = ReadSegment(path);
  ASSERT_TRUE(read.ok()) << read.error();
  ASSERT_EQ(read.value().py_samples.size(), 7u);
  EXPECT_EQ(read.value().py_samples[6].ts_ns, 1006u);
  EXPECT_EQ(read.value().py_samples[6].tid, 42u);
  EXPECT_EQ(read.value().py_samples[6].tgid, 40u);
  EXPECT_EQ(read.value().py_samples[0].py_stack, -1);
  EXPECT_EQ(RowWidth(Table::kPySample), 20u);
  EXPECT_EQ(TableName(Table::kPySample), "py_sample");
}

TEST(SegmentFormat, TornLastBlockKeepsEveryCompleteBlock) {
  testing::TempDir dir;
  const std::string bytes = WriteSample(dir.path() + "/a.sseg", 4);
  for (size_t cut : {size_t{1}, size_t{10}, size_t{30}}) {
    auto read = ParseSegment(std::string_view(bytes).substr(0, bytes.size() - cut), "cut.sseg");
    ASSERT_TRUE(read.ok());
    EXPECT_EQ(read.value().blocks, 15u) << cut;
    ASSERT_EQ(read.value().problems.size(), 1u);
    EXPECT_NE(read.value().problems[0].find("truncated"), std::string::npos) << read.value().problems[0];
    EXPECT_TRUE(read.value().meta.empty());  // the meta block was the last one written
    EXPECT_EQ(read.value().counters.size(), 10u);
  }
}

TEST(SegmentFormat, ChecksumMismatchStopsThereAndSaysWhere) {
  testing::TempDir dir;
  std::string bytes = WriteSample(dir.path() + "/a.sseg", 100);
  // Flip a byte inside the first block's payload (after the 32-byte file and 24-byte block headers).
  bytes[kFileHeaderSize + kBlockHeaderSize + 3] ^= 0x55;
  auto read = ParseSegment(bytes, "x.sseg");
  ASSERT_TRUE(read.ok());
  EXPECT_EQ(read.value().blocks, 0u);
  ASSERT_EQ(read.value().problems.size(), 1u);
  EXPECT_NE(read.value().problems[0].find("checksum"), std::string::npos);
  EXPECT_NE(read.value().problems[0].find("byte 32"), std::string::npos);
}

TEST(SegmentFormat, RefusesOtherFilesAndNewerVersions) {
  auto not_segment = ParseSegment("{\"traceEvents\": []}", "trace.json");
  ASSERT_FALSE(not_segment.ok());
  EXPECT_EQ(not_segment.status().kind(), ErrorKind::kNotATrace);
  EXPECT_NE(not_segment.error().find("trace.json"), std::string::npos);
  testing::TempDir dir;
  std::string bytes = WriteSample(dir.path() + "/a.sseg", 100);
  bytes[8] = 9;  // version 9
  auto newer = ParseSegment(bytes, "new.sseg");
  ASSERT_FALSE(newer.ok());
  EXPECT_NE(newer.error().find("version 9"), std::string::npos);
  auto missing = ReadSegment(dir.path() + "/missing.sseg");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().find("missing.sseg"), std::string::npos);
}

TEST(SegmentFormat, FlushedBlocksAreReadableWhileTheWriterIsOpen) {
  testing::TempDir dir;
  const std::string path = dir.path() + "/live.sseg";
  SegmentWriter writer;
  ASSERT_TRUE(writer.Open(path, FileHeader{}).ok());
  writer.Append(GcRow{1, 1, 10, 20, 0, 5});
  ASSERT_TRUE(writer.Flush().ok());
  writer.Append(GcRow{1, 1, 30, 40, 0, 5});  // buffered, not yet written
  auto read = ReadSegment(path);
  ASSERT_TRUE(read.ok());
  EXPECT_EQ(read.value().gcs.size(), 1u);
  EXPECT_TRUE(read.value().problems.empty());
}

// The fuzzer's seed files were written by an independent Python encoder from docs/segment-format.md:
// reading them checks the documentation against the reader.
TEST(SegmentFormat, DocumentedLayoutMatchesTheReader) {
  const std::string dir = std::string(::strata::test_paths::kSourceDir) + "/tests/fuzz/corpus/segment/";
  auto small = ReadSegment(dir + "small.sseg");
  ASSERT_TRUE(small.ok()) << small.error();
  const SegmentData& d = small.value();
  EXPECT_TRUE(d.problems.empty());
  EXPECT_EQ(d.blocks, 5u);
  EXPECT_EQ(d.header.created_unix_ns, 1'700'000'000'000'000'000);
  ASSERT_EQ(d.meta.size(), 8u);
  ASSERT_EQ(d.off_cpu.size(), 2u);
  EXPECT_EQ(d.off_cpu[1].tgid, 20u);
  EXPECT_EQ(d.off_cpu[1].end_ns, 260u);
  EXPECT_EQ(d.off_cpu[1].state, 2u);
  EXPECT_EQ(d.off_cpu[0].preempted_by, 99u);
  EXPECT_EQ(d.off_cpu[1].cpu, 1u);
  ASSERT_EQ(d.calls.size(), 2u);
  EXPECT_EQ(d.calls[1].end_ns, 310u);
  ASSERT_EQ(d.gcs.size(), 1u);
  EXPECT_EQ(d.gcs[0].collected, 7);
  ASSERT_EQ(d.counters.size(), 2u);
  EXPECT_DOUBLE_EQ(d.counters[1].value, 100.0);
  auto torn = ReadSegment(dir + "torn.sseg");
  ASSERT_TRUE(torn.ok());
  EXPECT_EQ(torn.value().blocks, 4u);
  EXPECT_EQ(torn.value().problems.size(), 1u);
}

}  // namespace
}  // namespace strata::segments

namespace strata::segments {
namespace {

/// One block (header + zstd payload) of `table` holding `raw`, as the writer lays it out.
std::string Block(Table table, uint32_t rows, const std::string& raw) {
  std::string compressed(ZSTD_compressBound(raw.size()), '\0');
  compressed.resize(ZSTD_compress(compressed.data(), compressed.size(), raw.data(), raw.size(), 3));
  std::string out;
  auto put = [&](auto v) { out.append(reinterpret_cast<const char*>(&v), sizeof v); };
  put(kBlockMagic);
  put(static_cast<uint16_t>(table));
  put(uint16_t{0});
  put(rows);
  put(static_cast<uint32_t>(raw.size()));
  put(static_cast<uint32_t>(compressed.size()));
  put(static_cast<uint32_t>(crc32(0, reinterpret_cast<const Bytef*>(compressed.data()), compressed.size())));
  return out + compressed;
}

std::string Header() {
  std::string out(kFileMagic);
  auto put = [&](auto v) { out.append(reinterpret_cast<const char*>(&v), sizeof v); };
  put(kFormatVersion);
  put(static_cast<uint32_t>(kFileHeaderSize));
  put(int64_t{1'700'000'000'000'000'000});
  put(int64_t{0});
  return out;
}

TEST(SegmentFormat, DeeplyNestedMetaRecordsAreRefusedNotRecursedInto) {
  // Issue 11: a 27 KB record nested 200,000 deep crashed inspect and diagnose.
  const std::string deep = std::string(200'000, '[') + std::string(200'000, ']');
  const std::string record = "{\"type\": \"process\", \"x\": " + deep + "}";
  std::string raw;
  const auto length = static_cast<uint32_t>(record.size());
  raw.append(reinterpret_cast<const char*>(&length), 4);
  raw += record;
  const std::string ok_record = "{\"type\": \"process\", \"pid\": 7, \"x\": [[[1]]]}";
  std::string ok_raw;
  const auto ok_length = static_cast<uint32_t>(ok_record.size());
  ok_raw.append(reinterpret_cast<const char*>(&ok_length), 4);
  ok_raw += ok_record;
  auto read = ParseSegment(Header() + Block(Table::kMeta, 1, ok_raw) + Block(Table::kMeta, 1, raw), "deep.sseg");
  ASSERT_TRUE(read.ok()) << read.error();
  EXPECT_EQ(read.value().meta.size(), 1u);  // the record before it is kept
  ASSERT_EQ(read.value().problems.size(), 1u);
  EXPECT_NE(read.value().problems[0].find("nests deeper than 64 levels"), std::string::npos)
      << read.value().problems[0];
}

TEST(SegmentFormat, BlocksThatDecodeFarBeyondTheFileSizeAreRefused) {
  // Issue 11: a 27 KB crafted segment took 2.2 GB. 64 MiB of zeros compress to a few KB; five such blocks
  // exceed the budget (256 MiB for a small file) and are refused before they are decompressed.
  const size_t width = RowWidth(Table::kCounter);
  const std::string zeros(kMaxBlockRawSize / width * width, '\0');
  const std::string block = Block(Table::kCounter, static_cast<uint32_t>(zeros.size() / width), zeros);
  std::string file = Header();
  for (int i = 0; i < 5; ++i) file += block;
  ASSERT_LT(file.size(), 100'000u);
  auto read = ParseSegment(file, "bomb.sseg");
  ASSERT_TRUE(read.ok()) << read.error();
  EXPECT_EQ(read.value().blocks, 4u);
  ASSERT_EQ(read.value().problems.size(), 1u);
  EXPECT_NE(read.value().problems[0].find("refusing a decompression bomb"), std::string::npos)
      << read.value().problems[0];
}

TEST(SegmentFormat, ADeviceThatIsNotASegmentIsRefusedAtOnce) {
  // /dev/zero made `strata inspect` grow to 4 GB: the header is checked before anything else is read.
  auto read = ReadSegment("/dev/zero");
  ASSERT_FALSE(read.ok());
  EXPECT_NE(read.error().find("not a strata segment file"), std::string::npos) << read.error();
}

}  // namespace
}  // namespace strata::segments
