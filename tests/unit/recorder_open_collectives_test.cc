// OpenCollectives (recorder/open_collectives.h): gloo's algorithms without a return probe, closed by c10d's
// completion on the same thread: each completion closes its thread's algorithm once, threads apart; an entry
// without a completion (an error, a timeout) stays open; a completion with nothing open is no call.
#include <gtest/gtest.h>

#include "recorder/open_collectives.h"

namespace strata::recorder {
namespace {

TEST(OpenCollectives, ACompletionClosesItsThreadsAlgorithmOnce) {
  OpenCollectives open;
  open.Entered(7, 3, 100);
  open.Entered(8, 4, 150);
  const auto done = open.Completed(7);
  ASSERT_TRUE(done);
  EXPECT_EQ(done->probe, 3u);
  EXPECT_EQ(done->entry_ns, 100u);
  EXPECT_FALSE(open.Completed(7)) << "closed once";
  const auto other = open.Completed(8);
  ASSERT_TRUE(other) << "threads apart";
  EXPECT_EQ(other->probe, 4u);
}

TEST(OpenCollectives, ANewEntryReplacesTheOpenOneAndNothingOpenIsNoCall) {
  OpenCollectives open;
  EXPECT_FALSE(open.Completed(7)) << "c10d finished work of no probed algorithm";
  open.Entered(7, 3, 100);  // timed out: no completion
  open.Entered(7, 5, 900);  // the thread's next collective
  const auto done = open.Completed(7);
  ASSERT_TRUE(done);
  EXPECT_EQ(done->probe, 5u);
  EXPECT_EQ(done->entry_ns, 900u);
}

}  // namespace
}  // namespace strata::recorder
