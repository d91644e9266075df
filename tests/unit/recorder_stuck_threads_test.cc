// StuckThreads (recorder/stuck_threads.h): a rank's main thread off CPU for a second or more is written down once
// per stall, with its stacks; while it stays stuck its other threads are looked at again, each sleep of one asleep
// since before the attach written once; launchers and exited processes are not watched. Driven through a fake Io
// (the BPF session's off-CPU starts, Python frames and the segment) on this test process and a thread of its own
// blocked on a lock, whose state /proc gives.
#include <gtest/gtest.h>

#ifdef STRATA_HAVE_RECORDER
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

#include "recorder/stuck_threads.h"

namespace strata::recorder {
namespace {

constexpr uint64_t kS = 1'000'000'000;

// What the watch wrote, and the off-CPU starts the fake BPF session hands it.
struct FakeRecording {
  std::map<uint32_t, strata_off_cpu_start> off_cpu;  // tid -> its switch's record
  std::vector<nlohmann::json> records;
  std::vector<std::pair<int32_t, bool>> stacks_named;  // (id, kernel)

  StuckThreads::Io Io() {
    return {.off_cpu_since = [this](uint32_t tid) -> std::optional<strata_off_cpu_start> {
              auto it = off_cpu.find(tid);
              if (it == off_cpu.end()) return std::nullopt;
              return it->second;
            },
            .main_python_stack = [](uint32_t) { return 42; },
            .python_stack_now = [](int, long) -> std::optional<int32_t> { return 7; },
            .write_stack_now = [this](uint32_t, int32_t id, bool kernel) { stacks_named.emplace_back(id, kernel); },
            .append_meta = [this](const nlohmann::json& r) { records.push_back(r); }};
  }
  std::vector<nlohmann::json> Of(long tid) const {
    std::vector<nlohmann::json> out;
    for (const auto& r : records)
      if (r["tid"].get<long>() == tid) out.push_back(r);
    return out;
  }
};

strata_off_cpu_start OffCpuAt(uint64_t ts) {
  strata_off_cpu_start s{};
  s.ts = ts;
  s.state = 1;
  s.user_stack = 11;
  s.kernel_stack = 12;
  return s;
}

// This process as a rank, and a thread of it blocked on a lock the test holds (asleep, its CPU time unmoved).
class StuckThreadsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    lock_.lock();
    blocked_ = std::thread([this] {
      tid_ = static_cast<long>(syscall(SYS_gettid));
      std::lock_guard<std::mutex> wait(lock_);
    });
    while (tid_ == 0) std::this_thread::yield();
    std::this_thread::sleep_for(std::chrono::milliseconds(100));  // into the futex wait
    ProcessInfo self;
    self.pid = pid_;
    self.rank = 0;
    processes_[pid_] = self;
  }
  void TearDown() override {
    lock_.unlock();
    blocked_.join();
  }
  const int pid_ = getpid();
  std::map<int, ProcessInfo> processes_;
  std::atomic<long> tid_{0};
  std::mutex lock_;
  std::thread blocked_;
};

TEST_F(StuckThreadsTest, AStuckMainThreadIsWrittenOncePerStallWithItsStacks) {
  FakeRecording fake;
  StuckThreads watch(fake.Io());
  fake.off_cpu[static_cast<uint32_t>(pid_)] = OffCpuAt(10 * kS);
  watch.Watch(processes_, 10 * kS + kS / 2);
  EXPECT_TRUE(fake.Of(pid_).empty()) << "off CPU for half a second: not stuck yet";

  watch.Watch(processes_, 11 * kS);
  ASSERT_EQ(fake.Of(pid_).size(), 1u);
  const nlohmann::json main = fake.Of(pid_)[0];
  EXPECT_EQ(main["type"], "thread_state");
  EXPECT_EQ(main["since_ns"].get<uint64_t>(), 10 * kS);
  EXPECT_EQ(main["ts_ns"].get<uint64_t>(), 11 * kS);
  EXPECT_EQ(main["user_stack"], 11);
  EXPECT_EQ(main["kernel_stack"], 12);
  EXPECT_EQ(main["py_stack"], 42);
  EXPECT_EQ(fake.stacks_named, (std::vector<std::pair<int32_t, bool>>{{11, false}, {12, true}}))
      << "both stacks named now, for a live reader";

  watch.Watch(processes_, 12 * kS);
  watch.Watch(processes_, 13 * kS);
  EXPECT_EQ(fake.Of(pid_).size(), 1u) << "the same stall is written once";
  fake.off_cpu[static_cast<uint32_t>(pid_)] = OffCpuAt(20 * kS);
  watch.Watch(processes_, 21 * kS);
  EXPECT_EQ(fake.Of(pid_).size(), 2u) << "a new off-CPU start is another stall";
}

TEST_F(StuckThreadsTest, AnotherThreadAsleepSinceBeforeTheAttachIsWrittenOnceAfterASecondOfWatching) {
  FakeRecording fake;
  StuckThreads watch(fake.Io());
  fake.off_cpu[static_cast<uint32_t>(pid_)] = OffCpuAt(10 * kS);
  watch.Watch(processes_, 12 * kS);
  EXPECT_TRUE(fake.Of(tid_).empty()) << "first seen asleep: not yet watched for a second";
  watch.Watch(processes_, 12 * kS + kS);
  ASSERT_EQ(fake.Of(tid_).size(), 1u);
  const nlohmann::json other = fake.Of(tid_)[0];
  EXPECT_EQ(other["pid"], pid_);
  EXPECT_TRUE(other["since_before_attach"].get<bool>());
  EXPECT_EQ(other["since_ns"], 0) << "since when before the attach, nothing says";
  EXPECT_EQ(other["py_stack"], 7) << "its Python frames read now";
  EXPECT_FALSE(other["comm"].get<std::string>().empty());
  watch.Watch(processes_, 15 * kS);
  EXPECT_EQ(fake.Of(tid_).size(), 1u) << "one sleep, one record";
}

TEST_F(StuckThreadsTest, AnotherThreadTheSessionSawSwitchIsWrittenWithEachNewStallOnly) {
  FakeRecording fake;
  StuckThreads watch(fake.Io());
  fake.off_cpu[static_cast<uint32_t>(pid_)] = OffCpuAt(10 * kS);
  fake.off_cpu[static_cast<uint32_t>(tid_.load())] = OffCpuAt(9 * kS);
  watch.Watch(processes_, 11 * kS);
  ASSERT_EQ(fake.Of(tid_).size(), 1u);
  EXPECT_EQ(fake.Of(tid_)[0]["since_ns"].get<uint64_t>(), 9 * kS);
  EXPECT_FALSE(fake.Of(tid_)[0].contains("since_before_attach"));
  watch.Watch(processes_, 12 * kS);
  EXPECT_EQ(fake.Of(tid_).size(), 1u) << "the same stall: not again";
  fake.off_cpu[static_cast<uint32_t>(pid_)] = OffCpuAt(20 * kS);
  watch.Watch(processes_, 21 * kS);
  EXPECT_EQ(fake.Of(tid_).size(), 2u) << "written again with the main thread's new stall";
}

TEST_F(StuckThreadsTest, LaunchersAndExitedRanksAreNotWatched) {
  FakeRecording fake;
  StuckThreads watch(fake.Io());
  fake.off_cpu[static_cast<uint32_t>(pid_)] = OffCpuAt(10 * kS);
  processes_[pid_].rank.reset();  // a launcher: no rank
  watch.Watch(processes_, 12 * kS);
  watch.Watch(processes_, 13 * kS);
  processes_[pid_].rank = 0;
  processes_[pid_].exited_ns = 5 * kS;
  watch.Watch(processes_, 14 * kS);
  watch.Watch(processes_, 15 * kS);
  EXPECT_TRUE(fake.records.empty());
}

}  // namespace
}  // namespace strata::recorder
#endif  // STRATA_HAVE_RECORDER
