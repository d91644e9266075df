// Collective matching (model/collectives): the k-th call of the same collective in the same step is one
// instance on every rank; calls missing on some rank are counted as unmatched; calls outside every step
// are left out; GPU jobs use NCCL kernels on streams; DetectPeriod (exact repeats, 0 when nothing repeats)
// and the "detected-period" steps of traces without ProfilerStep.
#include "model/collectives.h"

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "diag_test_util.h"

namespace strata::diagtest {
namespace {

using model::DetectPeriod;

/// 3 ranks, 3 steps; each step: gloo:broadcast, then two gloo:all_reduce (buckets).
DdpSpec ThreeCollectives() {
  DdpSpec spec;
  spec.ranks = 3;
  spec.steps = 3;
  spec.clock_offset = {0, 40 * kMs, -3 * kSec};
  spec.collective_names = {"gloo:broadcast", "gloo:all_reduce", "gloo:all_reduce"};
  spec.transfer = {1 * kMs, 4 * kMs, 6 * kMs};
  spec.plan = [](int r, int s) {
    RankStep st;
    st.segs = {{Op("aten::copy_", (2 + r) * kMs)},
               {Op("aten::mm", (30 + 3 * r + s) * kMs)},
               {Op("aten::mm", (20 + 2 * s) * kMs)}};
    st.tail = {Op("aten::add_", 5 * kMs)};
    return st;
  };
  return spec;
}

std::string KeyName(const TraceStore& store, StringId id) { return std::string(store.strings.view(id)); }

TEST(DiagCollectives, MatchesKthCallPerStepAndKey) {
  const DdpSpec spec = ThreeCollectives();
  SimulatedJob sim;
  const TraceStore store = LoadDdp(spec, &sim);
  auto m = BuildModels(store);
  const model::CollectiveModel& c = m->collectives;
  EXPECT_EQ(model::CollectiveSourceName(c.source), "cpu-ops");
  EXPECT_EQ(c.unmatched_calls, 0u);
  ASSERT_EQ(c.calls.size(), 3u);
  for (const auto& calls : c.calls) EXPECT_EQ(calls.size(), 9u);
  ASSERT_EQ(c.matched.size(), 9u);
  const std::vector<std::string> names = {"gloo:broadcast", "gloo:all_reduce", "gloo:all_reduce"};
  for (size_t i = 0; i < c.matched.size(); ++i) {
    SCOPED_TRACE("instance " + std::to_string(i));
    const model::MatchedCollective& inst = c.matched[i];
    const size_t s = i / 3, k = i % 3;
    EXPECT_EQ(inst.step, 1 + static_cast<int64_t>(s));
    EXPECT_EQ(KeyName(store, inst.key), names[k]);
    EXPECT_EQ(inst.ordinal, k == 2 ? 1u : 0u);  // the second all_reduce of the step
    EXPECT_EQ(inst.present, 3u);
    for (int r = 0; r < 3; ++r) {
      ASSERT_GE(inst.call[r], 0);
      const model::CollectiveCall& call = c.calls[r][inst.call[r]];
      EXPECT_EQ(call.key, inst.key);
      EXPECT_EQ(call.step, inst.step);
      EXPECT_EQ(call.ordinal, inst.ordinal);
      EXPECT_EQ(call.start_ns, sim.arrival[s][k][r] + spec.clock_offset[r]);
      EXPECT_EQ(call.end_ns, sim.completion[s][k][r] + spec.clock_offset[r]);
    }
  }
}

// Each step's transfer time is what the last rank to arrive spent in its calls (1 + 4 + 6 ms here), whatever
// the clock offsets and however late that rank was; CPU-side NCCL calls (ends that do not synchronize) give none.
TEST(DiagCollectives, TransferByStepIsTheLastArrivalsTimeInTheCalls) {
  const DdpSpec spec = ThreeCollectives();
  SimulatedJob sim;
  const TraceStore store = LoadDdp(spec, &sim);
  auto m = BuildModels(store);
  const std::map<int64_t, double> by_step = model::TransferMsByStep(m->collectives);
  ASSERT_EQ(by_step.size(), 3u);
  for (const auto& [step, ms] : by_step) EXPECT_NEAR(ms, 11.0, 0.01) << "step " << step;
  model::CollectiveModel unsynchronized = m->collectives;
  unsynchronized.ends_synchronize = false;
  EXPECT_TRUE(model::TransferMsByStep(unsynchronized).empty());
}

TEST(DiagCollectives, UnmatchedCallsAreCountedAndCallsOutsideStepsLeftOut) {
  const DdpSpec spec = ThreeCollectives();
  SimulatedJob sim = SimulateDdp(spec);
  // Rank 1: a third all_reduce late in step 2 that no other rank makes.
  const int64_t extra_at = sim.completion[1][2][1] + 1 * kMs + spec.clock_offset[1];
  sim.events[1].push_back(Event{"gloo:all_reduce", "cpu_op", extra_at, 1 * kMs, 1001, 4});
  // Rank 2: lost its broadcast of step 3.
  const int64_t lost = sim.arrival[2][0][2] + spec.clock_offset[2];
  const size_t before = sim.events[2].size();
  std::erase_if(sim.events[2], [&](const Event& e) { return e.name == "gloo:broadcast" && e.ts == lost; });
  ASSERT_EQ(sim.events[2].size(), before - 1);
  // Every rank: a barrier before the first step (outside every step window).
  for (int r = 0; r < 3; ++r)
    sim.events[r].push_back(
        Event{"gloo:barrier", "cpu_op", kBase - 50 * kMs + spec.clock_offset[r], 1 * kMs, 1000 + r, 2});
  const TraceStore store = LoadRankJsons(JobJsons(spec, sim));
  auto m = BuildModels(store);
  const model::CollectiveModel& c = m->collectives;
  // 1 call of the lone all_reduce + 2 calls of the broadcast that rank 2 lacks.
  EXPECT_EQ(c.unmatched_calls, 3u);
  EXPECT_EQ(c.calls[0].size(), 10u);  // the barrier is a call...
  EXPECT_EQ(c.calls[0].front().step, -1);
  size_t full = 0;
  bool saw_lone = false, saw_partial = false;
  for (const auto& inst : c.matched) {
    EXPECT_NE(KeyName(store, inst.key), "gloo:barrier");  // ...but not an instance
    if (inst.present == 3) {
      ++full;
      continue;
    }
    if (inst.present == 1) {
      saw_lone = true;
      EXPECT_EQ(KeyName(store, inst.key), "gloo:all_reduce");
      EXPECT_EQ(inst.step, 2);
      EXPECT_EQ(inst.ordinal, 2u);
      EXPECT_EQ(inst.call[0], -1);
      EXPECT_GE(inst.call[1], 0);
      EXPECT_EQ(inst.call[2], -1);
    } else {
      saw_partial = true;
      EXPECT_EQ(inst.present, 2u);
      EXPECT_EQ(KeyName(store, inst.key), "gloo:broadcast");
      EXPECT_EQ(inst.step, 3);
      EXPECT_EQ(inst.call[2], -1);
    }
  }
  EXPECT_EQ(full, 8u);
  EXPECT_TRUE(saw_lone);
  EXPECT_TRUE(saw_partial);
  // Instances are ordered by step.
  for (size_t i = 1; i < c.matched.size(); ++i) EXPECT_LE(c.matched[i - 1].step, c.matched[i].step);
}

TEST(DiagCollectives, GpuJobsUseNcclKernels) {
  DdpSpec spec;
  spec.ranks = 2;
  spec.steps = 3;
  spec.gpu = true;
  spec.plan = [](int r, int) {
    RankStep st;
    st.segs = {{Op("volta_sgemm_128x64_nn", (20 + r) * kMs, "kernel")},
               {Op("volta_sgemm_128x64_nn", 5 * kMs, "kernel")}};
    st.tail = {Op("void multi_tensor_apply_kernel", 2 * kMs, "kernel")};
    return st;
  };
  SimulatedJob sim = SimulateDdp(spec);
  // A CPU-side collective op in a GPU job is not a second source of calls.
  sim.events[0].push_back(Event{"nccl:all_reduce", "cpu_op", sim.step_start[0][0] + 1 * kMs, 1 * kMs, 1000, 1});
  const TraceStore store = LoadRankJsons(JobJsons(spec, sim));
  auto m = BuildModels(store);
  const model::CollectiveModel& c = m->collectives;
  EXPECT_EQ(model::CollectiveSourceName(c.source), "gpu-kernels");
  ASSERT_EQ(c.calls[0].size(), 6u);
  ASSERT_EQ(c.calls[1].size(), 6u);
  ASSERT_EQ(c.matched.size(), 6u);
  EXPECT_EQ(c.unmatched_calls, 0u);
  for (size_t i = 0; i < 6; ++i) {
    const auto& inst = c.matched[i];
    EXPECT_EQ(KeyName(store, inst.key), kNcclKernel);
    EXPECT_EQ(inst.step, 1 + static_cast<int64_t>(i / 2));
    EXPECT_EQ(inst.ordinal, i % 2);
    for (int r = 0; r < 2; ++r) {
      const auto& call = c.calls[r][inst.call[r]];
      EXPECT_EQ(call.start_ns, sim.arrival[i / 2][i % 2][r]);
      EXPECT_EQ(call.end_ns, sim.completion[i / 2][i % 2][r]);
    }
  }
}

/// A GPU job whose host syncs at the start of the next step: each step's last collective kernels run after
/// the step's CPU side ended (in the next ProfilerStep, or in the gap between steps).
DdpSpec AsyncTailGpuJob(int slow_rank) {
  DdpSpec spec;
  spec.ranks = 4;
  spec.steps = 5;
  spec.gpu = true;
  spec.sync_at_step_end = false;
  spec.plan = [slow_rank](int r, int) {
    RankStep st;
    st.segs = {{Op("volta_sgemm_128x64_nn", (20 + (r == slow_rank ? 6 : 0)) * kMs, "kernel")},
               {Op("volta_sgemm_128x64_nn", 5 * kMs, "kernel")},
               {Op("volta_sgemm_128x64_nn", 3 * kMs, "kernel")}};
    st.tail = {Op("void multi_tensor_apply_kernel", 2 * kMs, "kernel")};
    return st;
  };
  return spec;
}

TEST(DiagCollectives, KernelsBelongToTheStepOfTheirLaunchNotOfTheirStart) {
  const DdpSpec spec = AsyncTailGpuJob(-1);
  SimulatedJob sim;
  const TraceStore store = LoadDdp(spec, &sim);
  // The premise: the last collective of step 1 starts on the device after the CPU side of step 1 ended.
  ASSERT_GT(sim.arrival[0][2][0], sim.step_end[0][0]);
  auto m = BuildModels(store);
  const model::CollectiveModel& c = m->collectives;
  EXPECT_EQ(model::CollectiveSourceName(c.source), "gpu-kernels");
  EXPECT_EQ(c.unmatched_calls, 0u);
  ASSERT_EQ(c.matched.size(), 15u);  // 3 per step, every step
  for (size_t i = 0; i < c.matched.size(); ++i) {
    EXPECT_EQ(c.matched[i].step, 1 + static_cast<int64_t>(i / 3)) << i;
    EXPECT_EQ(c.matched[i].ordinal, i % 3) << i;
    EXPECT_TRUE(c.matched[i].complete());
    for (int r = 0; r < spec.ranks; ++r) EXPECT_GE(c.calls[r][c.matched[i].call[r]].launch_ns, 0);
  }
}

TEST(DiagCollectives, LatenessOfKernelsThatRunAfterTheStepIsMeasuredInFull) {
  const DdpSpec spec = AsyncTailGpuJob(2);
  const diagnosis::DiagnosisResult r = DiagnoseDdp(spec);
  ASSERT_FALSE(r.stragglers.empty());
  EXPECT_EQ(r.stragglers[0].rank, RankNumber(2));
  EXPECT_EQ(r.unmatched_collective_calls, 0u);
  EXPECT_EQ(r.steps.size(), 5u);
  // Rank 2 computes 6 ms longer before the first collective of every step, and arrives 6 ms late there.
  EXPECT_NEAR(r.stragglers[0].late_ms_per_step, 6.0, 0.1);
  EXPECT_EQ(r.stragglers[0].steps.size(), 5u);
}

TEST(DiagCollectives, CpuSideNcclOpsAreCollectivesWhenThereAreNoKernels) {
  // A CPU-only profile of an NCCL job (GPU events stripped): nccl:all_reduce record_function ops.
  DdpSpec spec;
  spec.ranks = 3;
  spec.steps = 4;
  spec.collective = "nccl:all_reduce";
  spec.plan = [](int r, int) { return BasicStep((40 + (r == 1 ? 8 : 0)) * kMs); };
  const TraceStore store = LoadDdp(spec);
  auto m = BuildModels(store);
  EXPECT_EQ(model::CollectiveSourceName(m->collectives.source), "cpu-ops");
  EXPECT_EQ(m->collectives.matched.size(), 4u);
  EXPECT_EQ(m->collectives.unmatched_calls, 0u);
  const diagnosis::DiagnosisResult r = diagnosis::Diagnose(store);
  ASSERT_FALSE(r.stragglers.empty());
  EXPECT_EQ(r.stragglers[0].rank, RankNumber(1));
  // Both CPU families are collectives: gloo: as well.
  spec.collective = "gloo:all_reduce";
  EXPECT_EQ(BuildModels(LoadDdp(spec))->collectives.matched.size(), 4u);
}

TEST(DiagCollectives, DetectPeriod) {
  const auto V = [](std::initializer_list<uint32_t> ids) {
    std::vector<StringId> v;
    for (uint32_t id : ids) v.emplace_back(id);
    return v;
  };
  EXPECT_EQ(DetectPeriod(V({})), 0u);
  EXPECT_EQ(DetectPeriod(V({1})), 0u);
  EXPECT_EQ(DetectPeriod(V({1, 1})), 1u);
  EXPECT_EQ(DetectPeriod(V({1, 1, 1, 1})), 1u);
  EXPECT_EQ(DetectPeriod(V({1, 2, 1, 2, 1, 2})), 2u);
  EXPECT_EQ(DetectPeriod(V({1, 2, 1, 2, 1})), 2u);  // a prefix of a repetition
  EXPECT_EQ(DetectPeriod(V({5, 7, 7, 5, 7, 7, 5, 7, 7})), 3u);
  EXPECT_EQ(DetectPeriod(V({5, 7, 7, 5, 7, 7, 5})), 3u);
  EXPECT_EQ(DetectPeriod(V({1, 2, 3})), 0u);  // nothing repeats
  EXPECT_EQ(DetectPeriod(V({1, 2, 1})), 0u);  // the period would not repeat twice
  EXPECT_EQ(DetectPeriod(V({1, 2, 3, 1, 2})), 0u);
  EXPECT_EQ(DetectPeriod(V({1, 2, 1, 2, 1, 3})), 0u);  // not exact
  EXPECT_EQ(DetectPeriod(V({1, 2, 3, 1, 2, 3, 1, 2, 4})), 0u);
}

TEST(DiagCollectives, TracesWithoutProfilerStepGetDetectedPeriodSteps) {
  DdpSpec spec = ThreeCollectives();
  spec.profiler_steps = false;
  spec.steps = 4;
  SimulatedJob sim;
  const TraceStore store = LoadDdp(spec, &sim);
  auto m = BuildModels(store);
  EXPECT_EQ(model::StepSourceName(m->steps.source), "detected-period");
  // Period 0 has no start (the trace may begin anywhere before it): steps 1-3.
  EXPECT_EQ(m->steps.steps, (std::vector<int64_t>{1, 2, 3}));
  for (int r = 0; r < 3; ++r) {
    const auto& w = m->steps.by_rank[r];
    ASSERT_EQ(w.size(), 3u);
    const int64_t off = spec.clock_offset[r];
    // Window k: from the end of period k-1's last call to the end of period k's.
    for (size_t i = 0; i < 3; ++i) {
      const size_t k = i + 1;
      EXPECT_EQ(w[i].step, static_cast<int64_t>(k));
      EXPECT_EQ(w[i].start_ns, sim.completion[k - 1][2][r] + off);
      EXPECT_EQ(w[i].end_ns, sim.completion[k][2][r] + off);
      // The training loop's thread is the one holding the most op time (the main thread, tid 1).
      ASSERT_NE(w[i].main_track, kNoTrack);
      EXPECT_EQ(store.track(w[i].main_track).tid, 1);
    }
  }
  const model::CollectiveModel& c = m->collectives;
  EXPECT_EQ(c.unmatched_calls, 0u);
  ASSERT_EQ(c.matched.size(), 9u);
  for (size_t i = 0; i < 9; ++i) {
    EXPECT_EQ(c.matched[i].step, 1 + static_cast<int64_t>(i / 3));
    EXPECT_EQ(c.matched[i].present, 3u);
  }
  // The rest of the pipeline runs on detected steps: clocks are recovered.
  EXPECT_EQ(m->clocks.offset_ns[1] - m->clocks.offset_ns[0], spec.clock_offset[1]);
  EXPECT_EQ(m->clocks.offset_ns[2] - m->clocks.offset_ns[0], spec.clock_offset[2]);
  EXPECT_EQ(m->phases.steps.size(), 3u);
}

TEST(DiagCollectives, WithoutStepMarkersASavingIsMeasuredAsWithThem) {
  // Issue 11: a 2.4 ms lateness in a 14.4 ms step was "saves 0.1 %" without ProfilerStep markers and 16.5 %
  // with them. With detected steps the saving and the cause match the annotated trace's.
  double saving[2] = {0, 0};
  for (const bool markers : {true, false}) {
    DdpSpec spec;
    spec.ranks = 2;
    spec.steps = 8;
    spec.profiler_steps = markers;
    spec.transfer = {1 * kMs};
    spec.plan = [](int r, int) {
      RankStep st;
      st.segs = {{Op("aten::mm", 10 * kMs + (r == 1 ? 2400 * kUs : 0))}};
      st.tail = {Op("aten::add_", 1 * kMs)};
      return st;
    };
    const diagnosis::DiagnosisResult r = DiagnoseDdp(spec);
    ASSERT_FALSE(r.findings.empty()) << markers;
    EXPECT_EQ(r.findings[0].rank, RankNumber(1));
    EXPECT_EQ(r.findings[0].cause, diagnosis::Cause::kSlowCompute) << markers;
    saving[markers] = r.findings[0].impact_pct;
  }
  EXPECT_NEAR(saving[1], 100.0 * 2.4 / 14.4, 0.1);
  EXPECT_NEAR(saving[0], saving[1], 1.0);
}

TEST(DiagCollectives, NoPeriodMakesTheWholeTraceStepZero) {
  // Collectives that never repeat as a whole: one step's worth of calls and nothing to fold.
  DdpSpec spec = ThreeCollectives();
  spec.profiler_steps = false;
  spec.steps = 1;
  const TraceStore store = LoadDdp(spec);
  auto m = BuildModels(store);
  EXPECT_EQ(model::StepSourceName(m->steps.source), "none");
  // DESIGN.md: with no steps the whole window is analysed, as step 0 spanning each rank's trace.
  ASSERT_EQ(m->steps.steps, std::vector<int64_t>{0});
  for (const auto& windows : m->steps.by_rank) {
    ASSERT_EQ(windows.size(), 1u);
    EXPECT_EQ(windows[0].step, 0);
    EXPECT_LT(windows[0].start_ns, windows[0].end_ns);
  }
  EXPECT_EQ(model::CollectiveSourceName(m->collectives.source), "cpu-ops");
  // Unstepped calls are all step 0 and still matched across ranks.
  ASSERT_EQ(m->collectives.matched.size(), 3u);
  for (const auto& inst : m->collectives.matched) {
    EXPECT_EQ(inst.step, 0);
    EXPECT_EQ(inst.present, 3u);
  }
}

TEST(DiagCollectives, NoCollectives) {
  DdpSpec spec;
  spec.ranks = 2;
  spec.steps = 2;
  spec.plan = [](int, int) {
    RankStep st;
    st.tail = {Op("aten::mm", 5 * kMs)};
    return st;
  };
  const TraceStore store = LoadDdp(spec);
  auto m = BuildModels(store);
  EXPECT_EQ(model::CollectiveSourceName(m->collectives.source), "none");
  EXPECT_TRUE(m->collectives.matched.empty());
  EXPECT_EQ(m->clocks.instances_used, 0u);
  EXPECT_EQ(m->clocks.offset_ns, (std::vector<int64_t>{0, 0}));
}

}  // namespace
}  // namespace strata::diagtest
