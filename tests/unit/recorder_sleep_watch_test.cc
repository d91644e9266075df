// SleepWatch (recorder/sleep_watch.h): a thread asleep since before the recorder attached is found from /proc
// alone, by its state and a CPU time that does not move; one that ran, or is not asleep, starts over. The rule
// on constructed observations, then /proc on threads of this test whose state is known.
#include <gtest/gtest.h>

#ifdef STRATA_HAVE_RECORDER
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "recorder/sleep_watch.h"

namespace strata::recorder {
namespace {

constexpr uint64_t kS = 1'000'000'000;

TEST(SleepWatch, AsleepWithUnmovedCpuTimeForTheMinimum) {
  SleepWatch w;
  const SleepWatch::Seen s{'S', 500};
  EXPECT_FALSE(w.Observe(7, s, 10 * kS, kS)) << "first seen: not yet a second";
  EXPECT_FALSE(w.Observe(7, s, 10 * kS + kS - 1, kS));
  const auto asleep = w.Observe(7, s, 11 * kS, kS);
  ASSERT_TRUE(asleep);
  EXPECT_EQ(asleep->state, 1u);
  EXPECT_EQ(asleep->watched_since, 10 * kS) << "since when the watch saw it so (the same sleep: the same key)";
  EXPECT_TRUE(asleep->fresh) << "the first to find the sleep a second long: reported";
  const auto again = w.Observe(7, s, 15 * kS, kS);
  EXPECT_EQ(again->watched_since, 10 * kS);
  EXPECT_FALSE(again->fresh) << "the same sleep is reported once";
}

TEST(SleepWatch, ARunOrAWakeStartsOver) {
  SleepWatch w;
  w.Observe(7, SleepWatch::Seen{'S', 500}, 10 * kS, kS);
  EXPECT_FALSE(w.Observe(7, SleepWatch::Seen{'S', 900}, 11 * kS, kS)) << "its CPU time moved: it ran";
  EXPECT_EQ(w.Observe(7, SleepWatch::Seen{'S', 900}, 12 * kS, kS)->watched_since, 11 * kS);
  EXPECT_FALSE(w.Observe(7, SleepWatch::Seen{'S', 900}, 12 * kS + 1, kS)->fresh);
  EXPECT_FALSE(w.Observe(7, SleepWatch::Seen{'R', 900}, 13 * kS, kS)) << "running";
  EXPECT_FALSE(w.Observe(7, SleepWatch::Seen{'S', 900}, 14 * kS, kS)) << "asleep again: watched afresh";
  EXPECT_FALSE(w.Observe(7, std::nullopt, 16 * kS, kS)) << "unreadable (gone)";
  EXPECT_FALSE(w.Observe(7, SleepWatch::Seen{'D', 900}, 17 * kS, kS));
  const auto d = w.Observe(7, SleepWatch::Seen{'D', 900}, 18 * kS, kS);
  ASSERT_TRUE(d);
  EXPECT_EQ(d->state, 2u) << "uninterruptible";
  EXPECT_TRUE(d->fresh) << "a new sleep after a wake is reported again";
  EXPECT_FALSE(w.Observe(8, SleepWatch::Seen{'S', 1}, 18 * kS, kS)) << "threads are watched apart";
}

TEST(SleepWatch, ReadsStateAndCpuTimeFromProc) {
  const auto self = SleepWatch::Read(getpid(), static_cast<long>(syscall(SYS_gettid)));
  ASSERT_TRUE(self);
  EXPECT_EQ(self->state, 'R') << "the thread reading is running";
  std::atomic<long> tid{0};
  std::atomic<bool> stop{false};
  std::thread sleeper([&] {
    tid = static_cast<long>(syscall(SYS_gettid));
    while (!stop) std::this_thread::sleep_for(std::chrono::milliseconds(400));
  });
  while (tid == 0) std::this_thread::yield();
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  const auto asleep = SleepWatch::Read(getpid(), tid);
  ASSERT_TRUE(asleep);
  EXPECT_EQ(asleep->state, 'S');
  EXPECT_GT(self->cpu_ns, 0u);
  stop = true;
  sleeper.join();
  EXPECT_FALSE(SleepWatch::Read(getpid(), 0x7ffffff0)) << "no such thread";
}

}  // namespace
}  // namespace strata::recorder
#endif  // STRATA_HAVE_RECORDER
