// StallReports (recorder/stall_reports.h): each stall of a rank's main thread, known by its off-CPU start, is
// fresh once; a new start is a new stall; processes do not share their stalls. The rule on constructed passes,
// then as an invariant over random sequences of passes.
#include <gtest/gtest.h>

#include <map>
#include <random>
#include <set>
#include <utility>

#include "recorder/stall_reports.h"

namespace strata::recorder {
namespace {

TEST(StallReports, EachStallIsFreshOnceAndANewStartIsAnotherStall) {
  StallReports r;
  EXPECT_TRUE(r.Fresh(10, 500)) << "first pass of the stall";
  EXPECT_FALSE(r.Fresh(10, 500)) << "the same stall a second later";
  EXPECT_FALSE(r.Fresh(10, 500));
  EXPECT_TRUE(r.Fresh(11, 500)) << "another process, the same start: its own stall";
  EXPECT_TRUE(r.Fresh(10, 900)) << "the thread ran and stalled again";
  EXPECT_FALSE(r.Fresh(10, 900));
  EXPECT_FALSE(r.Fresh(11, 500));
}

TEST(StallReports, OverRandomPassesExactlyTheFirstPassOfEachRunOfAStallIsFresh) {
  // Passes over 3 processes, each in a run of passes on one stall before its next: a run's first pass is fresh,
  // the rest are not, whatever the other processes do in between.
  std::mt19937 rng(50);
  for (int trial = 0; trial < 50; ++trial) {
    StallReports r;
    std::map<int, uint64_t> current;  // process -> the start of the stall its passes are on
    uint64_t next_start = 1;
    for (int pass = 0; pass < 200; ++pass) {
      const int pid = static_cast<int>(rng() % 3);
      const bool new_stall = !current.count(pid) || rng() % 4 == 0;
      if (new_stall) current[pid] = next_start++;
      EXPECT_EQ(r.Fresh(pid, current[pid]), new_stall) << "trial " << trial << " pass " << pass;
    }
  }
}

}  // namespace
}  // namespace strata::recorder
