// strata synth: determinism (same seed, same bytes), NCCL blocking semantics of the generated timelines
// (a late arrival makes the others wait; the straggler records the shortest collective; a recv completes
// only after its send started), and streaming (a 10,000-rank job keeps one replica's outputs open at a time
// and state proportional to ranks x steps, counted, not timed).
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>

#include "synth/generator.h"
#include "test_util.h"

namespace strata::synth {
namespace {

using testing::TempDir;

std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

SynthOptions Small(const std::string& dir) {
  SynthOptions o;
  o.out_dir = dir;
  o.ranks = 8;
  o.pp = 2;
  o.tp = 2;
  o.steps = 2;
  o.layers = 2;
  o.counters = true;
  o.progress = 0;
  o.fault.name = "slow_compute";
  o.fault.rank = 3;
  return o;
}

TEST(SynthGenerator, SameSeedSameBytes) {
  TempDir a, b, c;
  for (bool gzip : {false, true}) {
    SynthOptions o = Small(a.path());
    o.gzip = gzip;
    ASSERT_TRUE(Generate(o).ok());
    o.out_dir = b.path();
    ASSERT_TRUE(Generate(o).ok());
    o.out_dir = c.path();
    o.seed = 2;
    ASSERT_TRUE(Generate(o).ok());
    const std::string ext = gzip ? ".json.gz" : ".json";
    for (int r = 0; r < 8; ++r) {
      const std::string name = "rank-" + std::to_string(r) + ext;
      const std::string x = Slurp(a.file(name));
      ASSERT_FALSE(x.empty());
      EXPECT_EQ(x, Slurp(b.file(name))) << name;
      EXPECT_NE(x, Slurp(c.file(name))) << name;
    }
    EXPECT_EQ(Slurp(a.file("truth.json")), Slurp(b.file("truth.json")));
  }
}

// Progress goes to the caller's callback (the library prints nothing): every timed step, then ranks written;
// nothing when progress is off.
TEST(SynthGenerator, ProgressGoesToTheCallback) {
  TempDir dir;
  SynthOptions o = Small(dir.path());
  std::vector<std::string> lines;
  o.on_progress = [&](const std::string& line) { lines.push_back(line); };
  o.progress = 1;
  ASSERT_TRUE(Generate(o).ok());
  ASSERT_FALSE(lines.empty());
  EXPECT_EQ(lines.front(), "timed step 1 of " + std::to_string(o.steps));
  EXPECT_EQ(lines.back(), "wrote 8 of 8 ranks");
  lines.clear();
  o.progress = 0;
  ASSERT_TRUE(Generate(o).ok());
  EXPECT_TRUE(lines.empty());
}

TEST(SynthGenerator, TruthRecordsFaultLayoutAndOffsets) {
  TempDir dir;
  SynthOptions o = Small(dir.path());
  o.fault.every = 2;
  ASSERT_TRUE(Generate(o).ok());
  const std::string truth = Slurp(dir.file("truth.json"));
  EXPECT_NE(truth.find("\"fault\": \"slow_compute\""), std::string::npos) << truth;
  EXPECT_NE(truth.find("\"rank\": 3"), std::string::npos);
  EXPECT_NE(truth.find("\"steps\": [\n  2\n ]"), std::string::npos) << truth;
  EXPECT_NE(truth.find("\"layout\""), std::string::npos);
  EXPECT_NE(truth.find("\"clock_offsets_us\""), std::string::npos);
  EXPECT_NE(Slurp(dir.file("rank-3.json")).find("\"distributedInfo\": {\"backend\": \"nccl\", \"rank\": 3"),
            std::string::npos);
}

/// Keeps the communication kernels each rank emits (true clock) and counts live outputs.
struct Capture {
  struct Kernel {
    std::string name, collective;
    int64_t group = 0, start = 0, end = 0;
  };
  std::map<int64_t, std::vector<Kernel>> comm;  // by rank
  size_t live = 0, peak = 0, opened = 0;
  uint64_t events = 0;
  bool keep = true;
};

class CaptureSink : public RankSink {
 public:
  CaptureSink(Capture* c, int64_t rank) : c_(c), rank_(rank) {
    ++c_->live;
    ++c_->opened;
    c_->peak = std::max(c_->peak, c_->live);
  }
  ~CaptureSink() override { --c_->live; }
  void Emit(const SynthEvent& e) override {
    ++c_->events;
    if (c_->keep && e.coll)
      c_->comm[rank_].push_back(
          {std::string(e.name), e.coll->collective, e.coll->group_id, e.ts_ns, e.ts_ns + e.dur_ns});
  }

 private:
  Capture* c_;
  int64_t rank_;
};

SinkFactory Factory(Capture* c) {
  return [c](const RankHeader& h, const std::string&, Status*) {
    return std::unique_ptr<RankSink>(std::make_unique<CaptureSink>(c, h.rank));
  };
}

TEST(SynthGenerator, LateArrivalMakesTheGroupWaitAndRecordsTheShortestCollective) {
  TempDir dir;
  SynthOptions o = Small(dir.path());
  o.fault.magnitude = 0.3;
  Capture cap;
  ASSERT_TRUE(Generate(o, nullptr, Factory(&cap)).ok());
  // Rank 3 = dp 0, stage 1, tp 1; its tensor group is {2, 3}.
  const auto& slow = cap.comm[3];
  const auto& peer = cap.comm[2];
  size_t tp_calls = 0, straggler_shorter = 0;
  std::vector<const Capture::Kernel*> slow_tp, peer_tp;
  for (const auto& k : slow)
    if (k.name.find("AllReduce_Sum_bf16") != std::string::npos) slow_tp.push_back(&k);
  for (const auto& k : peer)
    if (k.name.find("AllReduce_Sum_bf16") != std::string::npos) peer_tp.push_back(&k);
  ASSERT_EQ(slow_tp.size(), peer_tp.size());
  ASSERT_FALSE(slow_tp.empty());
  for (size_t i = 0; i < slow_tp.size(); ++i) {
    ++tp_calls;
    EXPECT_EQ(slow_tp[i]->group, peer_tp[i]->group);
    EXPECT_EQ(slow_tp[i]->end, peer_tp[i]->end);      // completes together
    EXPECT_GE(slow_tp[i]->start, peer_tp[i]->start);  // the straggler arrives last
    if (slow_tp[i]->end - slow_tp[i]->start < peer_tp[i]->end - peer_tp[i]->start) ++straggler_shorter;
  }
  EXPECT_EQ(straggler_shorter, tp_calls);  // and records the shorter collective every time
  // Data-parallel all-reduce: every member of a DP group ({1, 5}, {3, 7}, ...) completes together.
  auto dp_ends = [&](int64_t r) {
    std::vector<int64_t> ends;
    for (const auto& k : cap.comm[r])
      if (k.name.find("AllReduce_Sum_f32") != std::string::npos) ends.push_back(k.end);
    return ends;
  };
  EXPECT_EQ(dp_ends(3), dp_ends(7));
  EXPECT_EQ(dp_ends(3).size(), 2u);  // one per step
  // Point-to-point: each recv ends with its send, after the send started.
  size_t pairs = 0;
  for (int64_t r = 0; r < 8; ++r)
    for (const auto& k : cap.comm[r]) {
      if (k.collective != std::string("recv")) continue;
      bool matched = false;
      for (const auto& [q, kernels] : cap.comm)
        for (const auto& s : kernels)
          if (q != r && s.group == k.group && s.collective == std::string("send") && s.end == k.end) {
            EXPECT_GE(k.end, s.start);
            matched = true;
          }
      EXPECT_TRUE(matched);
      ++pairs;
    }
  EXPECT_GT(pairs, 0u);
}

TEST(SynthGenerator, CleanGroupsWaitOnlyForJitter) {
  TempDir dir;
  SynthOptions o = Small(dir.path());
  o.fault = FaultRequest();
  Capture cap;
  ASSERT_TRUE(Generate(o, nullptr, Factory(&cap)).ok());
  // Without a fault no member of a tensor group waits long for the other.
  for (size_t i = 0; i < cap.comm[0].size(); ++i) {
    const auto& a = cap.comm[0][i];
    if (a.name.find("AllReduce_Sum_bf16") == std::string::npos) continue;
    const auto& b = cap.comm[1][i];
    EXPECT_LT(std::abs(a.start - b.start), 150000) << i;  // < 150 µs
  }
}

TEST(SynthGenerator, StreamsTenThousandRanksWithBoundedState) {
  TempDir dir;
  SynthOptions o;
  o.out_dir = dir.path();
  o.ranks = 10000;
  o.pp = 2;
  o.tp = 2;
  o.steps = 1;
  o.layers = 2;
  o.microbatches = 1;
  o.progress = 0;
  o.clock_skew_us = 0;
  Capture cap;
  cap.keep = false;
  GenerateStats stats;
  ASSERT_TRUE(Generate(o, &stats, Factory(&cap)).ok());
  EXPECT_EQ(cap.opened, 10000u);
  EXPECT_EQ(stats.ranks_written, 10000);
  // Only one replica's outputs (pp * tp) are ever open, and nothing is left open.
  EXPECT_EQ(cap.peak, 4u);
  EXPECT_EQ(stats.max_open_sinks, 4u);
  EXPECT_EQ(cap.live, 0u);
  // Kept state: a few int64 per rank and step, nothing per event.
  EXPECT_LE(stats.state_bytes, 10000u * (o.steps + 3) * sizeof(int64_t));
  EXPECT_GE(cap.events, 10000u * 50u);
  EXPECT_EQ(stats.events, cap.events);
}

}  // namespace
}  // namespace strata::synth
