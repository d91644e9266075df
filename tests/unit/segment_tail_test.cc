// SegmentTail (segment_tail.h): a growing segment is read poll by poll, each poll decoding only the blocks
// appended since the last; an unfinished block waits, damage stops the tail and says where.
#include "segments/segment_tail.h"

#include <gtest/gtest.h>

#include "segments/segment_format.h"
#include "segments/segment_writer.h"
#include "test_util.h"

namespace strata::segments {
namespace {

TEST(SegmentTail, EachPollDecodesOnlyWhatWasAppended) {
  testing::TempDir dir;
  const std::string path = dir.path() + "/live.sseg";
  SegmentWriter writer;
  ASSERT_TRUE(writer.Open(path, FileHeader{}).ok());
  SegmentTail tail(path);
  ASSERT_TRUE(tail.Poll().ok());
  EXPECT_TRUE(tail.has_header());
  EXPECT_TRUE(tail.data().calls.empty());

  writer.Append(CallRow{1, 1, 0, 10, 20});
  ASSERT_TRUE(writer.Flush().ok());
  ASSERT_TRUE(tail.Poll().ok());
  ASSERT_EQ(tail.data().calls.size(), 1u);
  const uint64_t after_first = tail.consumed();
  // The caller keeps a window: rows it erased are not read again.
  tail.data().calls.clear();
  writer.Append(CallRow{1, 1, 0, 30, 40});
  writer.Append(CallRow{1, 1, 0, 50, 60});
  ASSERT_TRUE(writer.Flush().ok());
  ASSERT_TRUE(tail.Poll().ok());
  ASSERT_EQ(tail.data().calls.size(), 2u);
  EXPECT_EQ(tail.data().calls[0].start_ns, 30u);
  EXPECT_GT(tail.consumed(), after_first);
  EXPECT_EQ(tail.consumed(), testing::ReadFile(path).size());
  ASSERT_TRUE(tail.Poll().ok());  // nothing new
  EXPECT_EQ(tail.data().calls.size(), 2u);
  EXPECT_EQ(tail.data().blocks, 2u);
}

TEST(SegmentTail, AnUnfinishedBlockWaitsForTheNextPoll) {
  testing::TempDir dir;
  const std::string full = dir.path() + "/full.sseg", live = dir.path() + "/live.sseg";
  {
    SegmentWriter writer;
    ASSERT_TRUE(writer.Open(full, FileHeader{}, 2).ok());
    for (uint64_t i = 0; i < 6; ++i) writer.Append(GcRow{1, 1, 10 * i, 10 * i + 5, 0, 5});
    ASSERT_TRUE(writer.Close().ok());
  }
  const std::string bytes = testing::ReadFile(full);
  // Written in three pieces, the cuts falling inside blocks (and inside a block header).
  SegmentTail tail(live);
  size_t rows_seen = 0;
  for (size_t cut : {size_t{kFileHeaderSize - 5}, bytes.size() / 2, bytes.size() - 3, bytes.size()}) {
    testing::WriteFile(live, std::string_view(bytes).substr(0, cut));
    ASSERT_TRUE(tail.Poll().ok()) << cut;
    EXPECT_TRUE(tail.data().problems.empty()) << cut;
    EXPECT_FALSE(tail.stopped());
    EXPECT_GE(tail.data().gcs.size(), rows_seen);
    rows_seen = tail.data().gcs.size();
  }
  EXPECT_EQ(tail.data().gcs.size(), 6u);
  EXPECT_EQ(tail.consumed(), bytes.size());
}

TEST(SegmentTail, DamageStopsTheTailAndSaysWhere) {
  testing::TempDir dir;
  const std::string path = dir.path() + "/bad.sseg";
  {
    SegmentWriter writer;
    ASSERT_TRUE(writer.Open(path, FileHeader{}, 1).ok());
    writer.Append(GcRow{1, 1, 10, 20, 0, 5});
    writer.Append(GcRow{1, 1, 30, 40, 0, 5});
    ASSERT_TRUE(writer.Close().ok());
  }
  std::string bytes = testing::ReadFile(path);
  bytes[kFileHeaderSize + kBlockHeaderSize + 2] ^= 0x55;  // inside the first block's payload
  testing::WriteFile(path, bytes);
  SegmentTail tail(path);
  ASSERT_TRUE(tail.Poll().ok());
  EXPECT_TRUE(tail.stopped());
  ASSERT_EQ(tail.data().problems.size(), 1u);
  EXPECT_NE(tail.data().problems[0].find("checksum"), std::string::npos);
  EXPECT_NE(tail.data().problems[0].find("byte 32"), std::string::npos);
  EXPECT_TRUE(tail.data().gcs.empty());
}

TEST(SegmentTail, AFileThatIsNotASegmentIsAnErrorNamingIt) {
  testing::TempDir dir;
  const std::string path = dir.path() + "/trace.json";
  testing::WriteFile(path, "{\"traceEvents\": [], \"padding\": \"............\"}");
  SegmentTail tail(path);
  const Status st = tail.Poll();
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("trace.json"), std::string::npos);
  EXPECT_FALSE(tail.has_header());
  SegmentTail missing(dir.path() + "/missing.sseg");
  EXPECT_FALSE(missing.Poll().ok());
}

}  // namespace
}  // namespace strata::segments
