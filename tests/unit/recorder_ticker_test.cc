// Ticker (recorder/ticker.h): the recorder loop's periodic deadline. Due once per period, restarting from a late
// tick; never due at rate 0; MsUntilNext rounds up, so a loop polling for it does not spin on 0 ms polls in the
// last millisecond before a tick (truncating, at 50 Hz a loop could spend up to 1 ms of every 20 polling).
#include <gtest/gtest.h>

#include "recorder/ticker.h"

namespace strata::recorder {
namespace {

using std::chrono::microseconds;
using std::chrono::milliseconds;

TEST(Ticker, DueOncePerPeriodAndRestartsFromALateTick) {
  const Ticker::Clock::time_point t0{};
  Ticker t(50, t0);  // 20 ms
  EXPECT_TRUE(t.Due(t0));
  EXPECT_FALSE(t.Due(t0)) << "once per period";
  EXPECT_FALSE(t.Due(t0 + milliseconds(19)));
  EXPECT_TRUE(t.Due(t0 + milliseconds(20)));
  EXPECT_TRUE(t.Due(t0 + milliseconds(100))) << "late: due";
  EXPECT_FALSE(t.Due(t0 + milliseconds(101))) << "no catching up on the missed ticks";
  EXPECT_TRUE(t.Due(t0 + milliseconds(120)));
}

TEST(Ticker, NeverDueAtRateZero) {
  const Ticker::Clock::time_point t0{};
  Ticker t(0, t0);
  for (int ms : {0, 1, 1000, 100000}) EXPECT_FALSE(t.Due(t0 + milliseconds(ms)));
  EXPECT_EQ(t.MsUntilNext(t0, 100), 100);
}

TEST(Ticker, MsUntilNextRoundsUpAndStaysWithinItsCap) {
  const Ticker::Clock::time_point t0{};
  Ticker t(50, t0);
  ASSERT_TRUE(t.Due(t0));  // next tick at 20 ms
  EXPECT_EQ(t.MsUntilNext(t0, 100), 20);
  EXPECT_EQ(t.MsUntilNext(t0 + microseconds(19'500), 100), 1) << "half a millisecond away: poll 1 ms, not 0";
  EXPECT_EQ(t.MsUntilNext(t0 + microseconds(19'999), 100), 1);
  EXPECT_EQ(t.MsUntilNext(t0 + milliseconds(20), 100), 0) << "due now";
  EXPECT_EQ(t.MsUntilNext(t0 + milliseconds(30), 100), 0) << "overdue: never negative";
  EXPECT_EQ(t.MsUntilNext(t0, 5), 5) << "within the cap";
  // Polling for MsUntilNext from any point before the tick wakes at or after it.
  for (int us = 0; us < 20'000; us += 137) {
    const auto now = t0 + microseconds(us);
    EXPECT_GE(now + milliseconds(t.MsUntilNext(now, 100)), t0 + milliseconds(20)) << us;
  }
}

}  // namespace
}  // namespace strata::recorder
