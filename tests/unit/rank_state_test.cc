// A rank's state as a kind and its particulars (analysis/diagnosis/rank_state.h): the sentence StateText gives
// for every wording of every kind, listed here word for word (a change of wording fails here, and would change
// the goldens and the JSON's "state"); each sentence read back to the same state (what serve does with an older
// agent's entry); every kind's stable key; the observers' names; a state in fmt and in JSON as its sentence.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "analysis/diagnosis/rank_state.h"

namespace strata::diagnosis {
namespace {

using K = RankStateKind;

struct Worded {
  RankState state;
  std::string sentence;
};

// Every wording of every kind, with particulars as the analysis sets them.
const std::vector<Worded>& EveryWording() {
  static const std::vector<Worded> kAll = {
      {{K::kNotObserved, "", ""}, "not observed (no sample or scheduler event of its main thread during the stall)"},
      {{K::kOnCpu, "", ""}, "on CPU (spinning)"},
      {{K::kRunnable, "", ""}, "runnable, waiting for a CPU"},
      {{K::kLock, "futex", ""}, "blocked on a lock (futex)"},
      {{K::kLock, "", ""}, "blocked on a lock"},
      {{K::kIoWait, "recvfrom", ""}, "waiting for I/O (recvfrom)"},
      {{K::kIoWait, "", ""}, "waiting for I/O"},
      {{K::kSleeping, "clock_nanosleep", ""}, "sleeping (clock_nanosleep)"},
      {{K::kSleeping, "", ""}, "sleeping"},
      {{K::kChildWait, "", ""}, "waiting for a child process"},
      {{K::kPaused, "pause", ""}, "paused (pause)"},
      {{K::kPaused, "", ""}, "paused"},
      {{K::kInSyscall, "99", ""}, "sleeping in system call 99"},
      {{K::kOffCpu, "", ""}, "sleeping (off CPU)"},
      {{K::kUninterruptible, "", ""}, "in uninterruptible I/O (D state)"},
      {{K::kExited, "1", ""}, "exited with code 1"},
      {{K::kExited, "", ""}, "exited"},
      {{K::kExitedNormally, "", ""}, "exited normally (code 0)"},
      {{K::kKilled, "9 (SIGKILL)", ""}, "killed by signal 9 (SIGKILL)"},
      {{K::kKernelNotStarted, "", ""}, "kernel not started (called the collective; its kernel never ran)"},
      {{K::kNotRecorded, "", ""}, "not recorded (no process of this rank was seen)"},
      {{K::kNotReported, "", ""}, "not reported by any agent"},
      {{K::kWhereaboutsNotReported, "", ""}, "not inside the collective (its whereabouts not reported)"},
      {{K::kInsideAnother, "broadcast", "pg1"}, "inside broadcast (pg1)"},
      {{K::kNoDump, "6", ""}, "no dump of it among the inputs; its peers' dumps show it never enqueued #6"},
      {{K::kWorkNotStarted, "6", ""}, "enqueued #6 but its work never started while its peers' did"},
      {{K::kNeverEnqueued, "6", ""}, "never enqueued #6: its dump holds no entry of the group"},
      {{K::kNeverEnqueued, "6", "all_reduce #5 (completed)"},
       "never enqueued #6; its last entry of the group: all_reduce #5 (completed)"},
      {{K::kUnrecognized, "parked (in a new way)", ""}, "parked (in a new way)"},
  };
  return kAll;
}

TEST(RankState, EachWordingRendersItsSentence) {
  std::set<K> kinds;
  for (const Worded& w : EveryWording()) {
    EXPECT_EQ(StateText(w.state), w.sentence) << RankStateKindKey(w.state.kind);
    kinds.insert(w.state.kind);
  }
  EXPECT_EQ(kinds.size(), kRankStateKinds) << "every kind has its sentence listed above";
}

TEST(RankState, EachSentenceReadsBackToItsState) {
  for (const Worded& w : EveryWording()) EXPECT_EQ(StateOfSentence(w.sentence), w.state) << w.sentence;
}

TEST(RankState, SentencesNoWordingMatchesAreKeptWhole) {
  // Close to a wording but not one: a place left empty, words around it changed.
  for (const std::string s : {"killed by signal ", "blocked on a lock ()", "inside  (pg1)", "exited with code"})
    EXPECT_EQ(StateOfSentence(s), (RankState{K::kUnrecognized, s, ""})) << s;
}

TEST(RankState, ParticularsWithoutAPlaceFallBackToTheKindsFirstWording) {
  // A detail the kind has no place for is not shown (the first wording of the kind is used).
  EXPECT_EQ(StateText({K::kOnCpu, "futex", ""}), "on CPU (spinning)");
}

TEST(RankState, EveryKindHasOneStableKey) {
  std::set<std::string_view> keys;
  for (size_t i = 0; i < kRankStateKinds; ++i) {
    const K k = static_cast<K>(i);
    const std::string_view key = RankStateKindKey(k);
    EXPECT_EQ(ParseRankStateKind(key), k) << key;
    EXPECT_TRUE(keys.insert(key).second) << "two kinds share " << key;
    for (char c : key) EXPECT_TRUE((c >= 'a' && c <= 'z') || c == '_') << key;
  }
  EXPECT_EQ(RankStateKindKey(K::kLock), "lock");
  EXPECT_EQ(RankStateKindKey(K::kIoWait), "io_wait");
  EXPECT_EQ(RankStateKindKey(K::kNotReported), "not_reported");
  EXPECT_FALSE(ParseRankStateKind("blocked on a lock (futex)").has_value());
}

TEST(RankState, OnlyTheUnreportedKindsSayNoAgentToldWhereTheRankIs) {
  for (size_t i = 0; i < kRankStateKinds; ++i) {
    const K k = static_cast<K>(i);
    EXPECT_EQ(WhereaboutsUnreported(k), k == K::kNotReported || k == K::kWhereaboutsNotReported) << k;
  }
}

TEST(RankState, ObserversAreNamedAsTheJsonShowsThem) {
  EXPECT_EQ(ObserverName(Observer::kNone), "none");
  EXPECT_EQ(ObserverName(Observer::kProcessExit), "process exit");
  EXPECT_EQ(ObserverName(Observer::kThreadState), "thread state");
  EXPECT_EQ(ObserverName(Observer::kOffCpuInterval), "off-CPU interval");
  EXPECT_EQ(ObserverName(Observer::kCpuSamples), "CPU samples");
  EXPECT_EQ(ObserverName(Observer::kNcclProfiler), "NCCL profiler");
  EXPECT_EQ(ObserverName(Observer::kAgent), "its node's agent");
  EXPECT_EQ(ObserverName(Observer::kFlightRecorderDump), "Flight Recorder dump");
  EXPECT_EQ(ObserverName(Observer::kPeersDumps), "its peers' Flight Recorder dumps");
}

TEST(RankState, FormatsAndGoesIntoJsonAsItsText) {
  const RankState lock{K::kLock, "futex", ""};
  EXPECT_EQ(fmt::format("rank 1 is {}", lock), "rank 1 is blocked on a lock (futex)");
  nlohmann::ordered_json j;
  j["state"] = lock;
  j["observed_by"] = Observer::kThreadState;  // a string, not the enumerator's number
  EXPECT_EQ(j.dump(), "{\"state\":\"blocked on a lock (futex)\",\"observed_by\":\"thread state\"}");
}

}  // namespace
}  // namespace strata::diagnosis
