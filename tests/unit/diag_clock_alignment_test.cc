// Clock alignment (model/clock_alignment): per-rank offsets from collective completions. Arbitrary offsets
// injected into otherwise aligned traces are recovered (relative to rank 0) within 1 µs with a small
// residual, also with completion jitter, with a late-arriving rank, and on PyTorch 1.x traces whose clock
// starts at zero in every process; aligned phases then line up with the simulated global clock.
#include "model/clock_alignment.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <vector>

#include "core/robust_stats.h"
#include "diag_test_util.h"

namespace strata::diagtest {
namespace {

DdpSpec FourRanks(std::vector<int64_t> offsets) {
  DdpSpec spec;
  spec.ranks = 4;
  spec.steps = 5;
  spec.clock_offset = std::move(offsets);
  spec.transfer = {3 * kMs, 7 * kMs};
  spec.plan = [](int r, int s) {
    RankStep st;
    st.segs = {{Op("aten::mm", (30 + r + 2 * s) * kMs)}, {Op("aten::conv2d", (15 + 3 * r) * kMs)}};
    st.tail = {Op("aten::add_", 4 * kMs)};
    return st;
  };
  return spec;
}

void ExpectRecovered(const model::ClockAlignment& clocks, const std::vector<int64_t>& injected, int64_t tol_ns) {
  ASSERT_EQ(clocks.offset_ns.size(), injected.size());
  for (size_t r = 1; r < injected.size(); ++r) {
    SCOPED_TRACE("rank " + std::to_string(r));
    EXPECT_LE(std::llabs((clocks.offset_ns[r] - clocks.offset_ns[0]) - (injected[r] - injected[0])), tol_ns);
  }
  // The offsets are centred: their median is 0.
  std::vector<double> v(clocks.offset_ns.begin(), clocks.offset_ns.end());
  EXPECT_LE(std::abs(Median(v)), 1.0);
}

TEST(DiagClockAlignment, ExactOffsetsWithoutJitter) {
  const std::vector<int64_t> injected = {0, 3700 * kMs, -12 * kMs, 1'234'567'891};
  const TraceStore store = LoadDdp(FourRanks(injected));
  auto m = BuildModels(store);
  EXPECT_EQ(m->clocks.instances_used, 10u);
  // Exact up to the rounding of the centring: with an even number of ranks the median offset can fall on
  // half a nanosecond, and each centred offset is rounded to whole ns.
  ExpectRecovered(m->clocks, injected, 1);
  EXPECT_LE(m->clocks.residual_us, 0.001);
}

TEST(DiagClockAlignment, ArbitraryOffsetsWithJitterAndALateRank) {
  const std::vector<int64_t> injected = {250 * kMs, 3700 * kMs, -12 * kMs, -987'654'321};
  DdpSpec spec = FourRanks(injected);
  // Completions within ±400 ns of each other (but one), and rank 2 arrives 20 ms late at every collective: arrival
  // times must not leak into the offsets.
  // One completion is recorded 5 ms late (the process was descheduled before it logged the end): the
  // median over instances ignores it.
  spec.completion_jitter = [](int r, int s, int k) {
    const int64_t outlier = r == 1 && s == 3 && k == 0 ? 5 * kMs : 0;
    return outlier + static_cast<int64_t>(std::llround(
                         400.0 * Noise(static_cast<uint64_t>(r), static_cast<uint64_t>(s), static_cast<uint64_t>(k))));
  };
  spec.plan = [](int r, int s) {
    RankStep st;
    st.segs = {{Op("aten::mm", (30 + (r == 2 ? 20 : 0) + s) * kMs)}, {Op("aten::conv2d", 15 * kMs)}};
    st.tail = {Op("aten::add_", 4 * kMs)};
    return st;
  };
  SimulatedJob sim;
  const TraceStore store = LoadDdp(spec, &sim);
  auto m = BuildModels(store);
  ExpectRecovered(m->clocks, injected, 1 * kUs);
  EXPECT_GT(m->clocks.residual_us, 0.0);
  EXPECT_LT(m->clocks.residual_us, 0.5);
  // Aligned arrivals match the simulated global clock up to one constant.
  ASSERT_EQ(m->phases.steps.size(), 5u);
  for (size_t s = 0; s < 5; ++s) {
    const auto& p = m->phases.steps[s];
    ASSERT_EQ(p.arrival.size(), 2u);
    for (size_t k = 0; k < 2; ++k)
      for (int r = 1; r < 4; ++r)
        EXPECT_LE(std::llabs((p.arrival[k][r] - p.arrival[k][0]) - (sim.arrival[s][k][r] - sim.arrival[s][k][0])),
                  1 * kUs);
  }
}

TEST(DiagClockAlignment, PyTorch1xRelativeClocks) {
  // Every process starts its clock at 0 when its profiler starts; the profilers started 0.3 s + 1.7 s·r
  // before the first step.
  std::vector<int64_t> injected;
  for (int r = 0; r < 3; ++r) injected.push_back(-kBase + 300 * kMs + r * 1700 * kMs);
  DdpSpec spec = FourRanks(injected);
  spec.ranks = 3;
  spec.style = Style::kLegacy;
  spec.completion_jitter = [](int r, int s, int k) {
    return static_cast<int64_t>(
        std::llround(300.0 * Noise(static_cast<uint64_t>(r + 10), static_cast<uint64_t>(s), static_cast<uint64_t>(k))));
  };
  const TraceStore store = LoadDdp(spec);
  ASSERT_EQ(store.inputs.size(), 3u);
  for (const auto& in : store.inputs) EXPECT_EQ(in.format, InputFormat::kPytorchLegacy);
  for (const auto& info : store.ranks) EXPECT_EQ(info.rank_source, "file name");
  int64_t min_ts = INT64_MAX;
  for (int64_t ts : store.slices.ts_ns) min_ts = std::min(min_ts, ts);
  EXPECT_GE(min_ts, 0);
  EXPECT_LT(min_ts, 1 * kSec);  // relative clocks indeed
  auto m = BuildModels(store);
  EXPECT_EQ(model::StepSourceName(m->steps.source), "profiler-step");
  EXPECT_EQ(model::CollectiveSourceName(m->collectives.source), "cpu-ops");
  ExpectRecovered(m->clocks, injected, 1 * kUs);
  EXPECT_LT(m->clocks.residual_us, 0.5);
}

TEST(DiagClockAlignment, ByHandOnTwoInstances) {
  // Hand-made model: 3 ranks, 2 instances. Completions (ns): instance 0: 100, 1100, 55; instance 1: 200,
  // 1210, 150. Medians 100 and 200. Deviations: rank 0: 0, 0; rank 1: 1000, 1010; rank 2: -45, -50.
  // Offsets before centring: 0, 1005, -47.5; centre 0 -> 0, 1005, -48 (llround(-47.5) = -48).
  model::CollectiveModel c;
  c.calls.resize(3);
  const int64_t ends[2][3] = {{100, 1100, 55}, {200, 1210, 150}};
  for (int k = 0; k < 2; ++k) {
    model::MatchedCollective inst;
    inst.present = 3;
    inst.call.resize(3);
    for (int r = 0; r < 3; ++r) {
      model::CollectiveCall call;
      call.start_ns = ends[k][r] - 10;
      call.end_ns = ends[k][r];
      inst.call[r] = static_cast<int32_t>(c.calls[r].size());
      c.calls[r].push_back(call);
    }
    c.matched.push_back(inst);
  }
  // An instance seen by one rank only is not used.
  model::MatchedCollective lone;
  lone.present = 1;
  lone.call = {-1, -1, 0};
  c.calls[2].insert(c.calls[2].begin(), model::CollectiveCall{SliceId(), StringId(), 0, 999'999, -1, 0});
  for (auto& inst : c.matched) ++inst.call[2];
  c.matched.push_back(lone);
  const model::ClockAlignment clocks = model::AlignClocks(c, 3);
  EXPECT_EQ(clocks.instances_used, 2u);
  EXPECT_EQ(clocks.offset_ns, (std::vector<int64_t>{0, 1005, -48}));
  // Aligned ends: instance 0: 100, 95, 103 (median 100) -> 0, 5, 3; instance 1: 200, 205, 198 (median 200)
  // -> 0, 5, 2. Median of 0 5 3 0 5 2 = 2.5 ns.
  EXPECT_NEAR(clocks.residual_us, 0.0025, 1e-12);
}

}  // namespace
}  // namespace strata::diagtest
