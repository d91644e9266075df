// TakeRootAsRankZero (store/recorded_run.h): a recording of one process tree with no rank variable is rank 0,
// its descendants included; a recording with a rank, or with two trees, is left as it is.
#include <gtest/gtest.h>

#include "store/recorded_run.h"

namespace strata {
namespace {

RecordedProcess Proc(int pid, int ppid, std::optional<int> rank = std::nullopt) {
  RecordedProcess p;
  p.pid = pid;
  p.ppid = ppid;
  p.rank = rank;
  p.comm = "python3";
  return p;
}

TEST(RecordedRunRank, OneTreeWithoutARankIsRankZeroWithItsDescendants) {
  RecordedSegment seg;
  seg.processes[100] = Proc(100, 1);    // python3 train.py, started by strata record
  seg.processes[101] = Proc(101, 100);  // a DataLoader worker
  seg.processes[102] = Proc(102, 101);  // its child
  const std::optional<int> root = TakeRootAsRankZero(&seg);
  ASSERT_TRUE(root);
  EXPECT_EQ(*root, 100);
  for (int pid : {100, 101, 102}) EXPECT_EQ(seg.RankOf(pid), 0) << pid;
}

TEST(RecordedRunRank, ARecordingWithARankIsLeftAsItIs) {
  RecordedSegment seg;
  seg.processes[100] = Proc(100, 1);       // a launcher
  seg.processes[101] = Proc(101, 100, 1);  // rank 1
  EXPECT_FALSE(TakeRootAsRankZero(&seg));
  EXPECT_FALSE(seg.RankOf(100));
  EXPECT_EQ(seg.RankOf(101), 1);
}

TEST(RecordedRunRank, TwoTreesAreNotGuessedAt) {
  RecordedSegment seg;
  seg.processes[100] = Proc(100, 1);
  seg.processes[200] = Proc(200, 1);
  EXPECT_FALSE(TakeRootAsRankZero(&seg));
  EXPECT_FALSE(seg.RankOf(100));
  EXPECT_FALSE(seg.RankOf(200));
}

TEST(RecordedRunRank, AParentLoopEndsTheWalk) {
  RecordedSegment seg;
  seg.processes[100] = Proc(100, 1);
  seg.processes[300] = Proc(300, 301);  // damaged: 300 and 301 each other's parent
  seg.processes[301] = Proc(301, 300);
  const std::optional<int> root = TakeRootAsRankZero(&seg);
  ASSERT_TRUE(root);  // the loop has no root of its own: one tree, rooted at 100
  EXPECT_EQ(seg.RankOf(100), 0);
  EXPECT_FALSE(seg.RankOf(300));
}

}  // namespace
}  // namespace strata
