// NativeStacks (recorder/native_stacks.h): each distinct (process, user stack) and kernel stack a sample draws
// has one final record, named with its process's maps; a stack outside every known mapping of a running
// process makes its maps be read again, at most once per kMinMapsInterval; a negative id is no stack. The
// stacks and maps come from fakes, and the frames' files do not exist, so the frames are unnamed ("[?]" or the
// mapping's file), which keeps the test free of a live process and of /proc/kallsyms.
#include <gtest/gtest.h>

#ifdef STRATA_HAVE_RECORDER
#include <map>
#include <random>

#include "recorder/native_stacks.h"

namespace strata::recorder {
namespace {

constexpr uint64_t kMs = 1'000'000;

// Fakes: stack id -> addresses, pid -> the maps a re-read returns (and how often each pid was read).
struct Fakes {
  std::map<int32_t, std::vector<uint64_t>> stacks;
  std::map<int, std::vector<MapEntry>> maps;
  std::map<int, int> reads;
  NativeStacks Make() {
    return NativeStacks([this](int32_t id) { return stacks.count(id) ? stacks[id] : std::vector<uint64_t>{}; },
                        [this](int pid) {
                          ++reads[pid];
                          return maps[pid];
                        },
                        "/nonexistent/kallsyms");
  }
};

// A sample as the recorder hands it over: the stacks, then the running process for a user stack new to it.
void Sample(NativeStacks& stacks, uint32_t tgid, int32_t user, int32_t kernel, ProcessInfo* running, uint64_t now) {
  if (stacks.Sampled(tgid, user, kernel) && running != nullptr) stacks.CoverNewStack(user, *running, now);
}

ProcessInfo Process(int pid, std::vector<MapEntry> maps) {
  ProcessInfo p;
  p.pid = pid;
  p.maps = std::move(maps);
  return p;
}

TEST(NativeStacks, EachDrawnStackHasOneFinalRecordInOrder) {
  Fakes fakes;
  fakes.stacks = {{1, {0x1000}}, {2, {0x2000, 0x1000}}, {7, {0xffffffff81000000}}};
  NativeStacks stacks = fakes.Make();
  std::map<int, ProcessInfo> processes;
  processes[20] = Process(20, {{0x1000, 0x3000, 0, "/nonexistent/libx.so"}});
  processes[10] = Process(10, {{0x1000, 0x3000, 0, "/nonexistent/liby.so"}});
  for (int round = 0; round < 3; ++round) {  // repeated samples add nothing
    Sample(stacks, 20, 2, 7, &processes[20], round * kMs);
    Sample(stacks, 10, 1, -1, &processes[10], round * kMs);
    Sample(stacks, 20, 1, 7, &processes[20], round * kMs);
    Sample(stacks, 10, -1, -1, &processes[10], round * kMs);
  }
  const std::vector<nlohmann::json> records = stacks.FinalRecords(processes);
  ASSERT_EQ(records.size(), 4u) << "(10, 1), (20, 1), (20, 2) and kernel 7";
  EXPECT_EQ(records[0]["pid"], 10);
  EXPECT_EQ(records[0]["id"], 1);
  EXPECT_EQ(records[1]["pid"], 20);
  EXPECT_EQ(records[1]["id"], 1);
  EXPECT_EQ(records[2]["pid"], 20);
  EXPECT_EQ(records[2]["id"], 2);
  EXPECT_EQ(records[2]["frames"].size(), 2u);
  EXPECT_EQ(records[3]["kernel"], true);
  EXPECT_EQ(records[3]["id"], 7);
  EXPECT_FALSE(records[3].contains("pid"));
  for (const auto& r : records) EXPECT_EQ(r["type"], "stack");
  EXPECT_EQ(stacks.maps_reads(), 0u) << "every stack lies in a known mapping";
}

TEST(NativeStacks, AStackOutsideTheKnownMapsReadsThemAgainAtMostOncePerInterval) {
  Fakes fakes;
  fakes.stacks = {{1, {0x9000}}, {2, {0x9100}}, {3, {0x9200}}, {4, {0x1000}}};
  fakes.maps[5] = {{0x1000, 0x2000, 0, "/nonexistent/a.so"}, {0x9000, 0xa000, 0, "/nonexistent/late.so"}};
  NativeStacks stacks = fakes.Make();
  ProcessInfo p = Process(5, {{0x1000, 0x2000, 0, "/nonexistent/a.so"}});
  Sample(stacks, 5, 4, -1, &p, 0);
  EXPECT_EQ(fakes.reads[5], 0) << "inside a known mapping";
  Sample(stacks, 5, 1, -1, &p, 1 * kMs);
  EXPECT_EQ(fakes.reads[5], 1) << "a library loaded since the maps were read";
  EXPECT_EQ(p.maps.size(), 2u) << "the process's maps are the fresh ones";
  // Now covered: no read, whenever.
  Sample(stacks, 5, 2, -1, &p, 2 * kMs);
  EXPECT_EQ(fakes.reads[5], 1);
  // Outside the fresh maps too (a JIT): read again only after the interval.
  fakes.stacks[5] = {0x50000};
  fakes.stacks[6] = {0x60000};
  Sample(stacks, 5, 5, -1, &p, 10 * kMs);
  EXPECT_EQ(fakes.reads[5], 1) << "within kMinMapsInterval of the last read";
  Sample(stacks, 5, 6, -1, &p, 1 * kMs + NativeStacks::kMinMapsInterval);
  EXPECT_EQ(fakes.reads[5], 2);
  EXPECT_EQ(stacks.maps_reads(), 2u);
  // An empty re-read (the process went) keeps the maps it had.
  fakes.maps[5].clear();
  fakes.stacks[8] = {0x80000};
  Sample(stacks, 5, 8, -1, &p, 10 * NativeStacks::kMinMapsInterval);
  EXPECT_EQ(fakes.reads[5], 3);
  EXPECT_EQ(p.maps.size(), 2u);
  // No running process (exited, unknown): kept for the final records, no read.
  fakes.stacks[9] = {0x90000};
  Sample(stacks, 5, 9, -1, nullptr, 20 * NativeStacks::kMinMapsInterval);
  EXPECT_EQ(fakes.reads[5], 3);
  EXPECT_EQ(stacks.FinalRecords({}).size(), 7u) << "stacks 1, 2, 4, 5, 6, 8 and 9 of process 5";
}

TEST(NativeStacks, RecordNowNamesOneStackAndNothingForNoStack) {
  Fakes fakes;
  fakes.stacks = {{3, {0x1000, 0x1010}}, {4, {0xffffffff81000000}}};
  NativeStacks stacks = fakes.Make();
  const ProcessInfo p = Process(5, {{0x1000, 0x2000, 0, "/nonexistent/a.so"}});
  const auto user = stacks.RecordNow(5, 3, false, &p);
  ASSERT_TRUE(user);
  EXPECT_EQ((*user)["pid"], 5);
  EXPECT_EQ((*user)["frames"].size(), 2u);
  const auto kernel = stacks.RecordNow(5, 4, true, nullptr);
  ASSERT_TRUE(kernel);
  EXPECT_EQ((*kernel)["kernel"], true);
  EXPECT_FALSE(stacks.RecordNow(5, -1, false, &p)) << "no stack";
  EXPECT_FALSE(stacks.RecordNow(5, 3, false, nullptr)) << "a user stack of no process";
  EXPECT_TRUE(stacks.FinalRecords({}).empty()) << "named now is not drawn by a sample";
}

TEST(NativeStacks, FinalRecordsAreOnePerDistinctDrawnStackOverRandomSamples) {
  // Invariant over random samples: the final records are exactly the distinct (pid, user id) and kernel ids.
  std::mt19937 rng(50);
  for (int trial = 0; trial < 50; ++trial) {
    Fakes fakes;
    NativeStacks stacks = fakes.Make();
    std::set<std::pair<int, int32_t>> user;
    std::set<int32_t> kernel;
    for (int i = 0; i < 200; ++i) {
      const int pid = static_cast<int>(rng() % 4);
      const auto u = static_cast<int32_t>(rng() % 12) - 2, k = static_cast<int32_t>(rng() % 12) - 2;
      const bool fresh = stacks.Sampled(static_cast<uint32_t>(pid), u, k);
      EXPECT_EQ(fresh, u >= 0 && !user.count({pid, u})) << "new for its process, and only then";
      if (u >= 0) user.insert({pid, u});
      if (k >= 0) kernel.insert(k);
    }
    const auto records = stacks.FinalRecords({});
    ASSERT_EQ(records.size(), user.size() + kernel.size()) << trial;
    size_t i = 0;
    for (const auto& [pid, id] : user) {
      EXPECT_EQ(records[i]["pid"], pid);
      EXPECT_EQ(records[i++]["id"], id);
    }
    for (int32_t id : kernel) EXPECT_EQ(records[i++]["id"], id);
  }
}

}  // namespace
}  // namespace strata::recorder
#endif
