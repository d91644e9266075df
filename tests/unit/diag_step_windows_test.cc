// Step windows (model/step_windows): ProfilerStep#N windows per rank on the rank's own clock, the steps
// common to every rank, the op-table step column, no steps at all, and FindWindow.
#include "model/step_windows.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "analysis/job_summary.h"
#include "diag_test_util.h"

namespace strata::diagtest {
namespace {

using model::FindSteps;
using model::FindWindow;
using model::StepWindow;

DdpSpec ThreeRanks() {
  DdpSpec spec;
  spec.ranks = 3;
  spec.steps = 4;
  spec.first_step = 5;
  spec.clock_offset = {0, 2 * kSec, -7 * kMs};
  spec.plan = [](int r, int s) { return BasicStep((80 + 5 * r + s) * kMs); };
  return spec;
}

TEST(DiagStepWindows, ProfilerStepsPerRankAndCommonSteps) {
  const DdpSpec spec = ThreeRanks();
  SimulatedJob sim = SimulateDdp(spec);
  // Rank 2's profiler stopped before step 8.
  auto& ev2 = sim.events[2];
  std::erase_if(ev2, [](const Event& e) { return e.name == "ProfilerStep#8"; });
  const TraceStore store = LoadRankJsons(JobJsons(spec, sim));
  const model::StepModel steps = FindSteps(store, SlicesByRank(store));
  EXPECT_EQ(model::StepSourceName(steps.source), "profiler-step");
  EXPECT_EQ(steps.steps, (std::vector<int64_t>{5, 6, 7}));
  ASSERT_EQ(steps.by_rank.size(), 3u);
  EXPECT_EQ(steps.by_rank[0].size(), 4u);
  EXPECT_EQ(steps.by_rank[1].size(), 4u);
  EXPECT_EQ(steps.by_rank[2].size(), 3u);
  for (int r = 0; r < 3; ++r) {
    const auto& windows = steps.by_rank[r];
    for (size_t i = 0; i < windows.size(); ++i) {
      SCOPED_TRACE("rank " + std::to_string(r) + " window " + std::to_string(i));
      EXPECT_EQ(windows[i].step, 5 + static_cast<int64_t>(i));
      // The rank's own clock: simulated global time + that rank's offset, exactly.
      EXPECT_EQ(windows[i].start_ns, sim.step_start[i][r] + spec.clock_offset[r]);
      EXPECT_EQ(windows[i].end_ns, sim.step_end[i][r] + spec.clock_offset[r]);
      ASSERT_LT(windows[i].main_track.value, store.tracks.size());
      const Track& t = store.track(windows[i].main_track);
      EXPECT_EQ(t.rank, static_cast<uint32_t>(r));
      EXPECT_EQ(t.tid, 1);
      EXPECT_EQ(t.stream, -1);
      if (i > 0) {
        EXPECT_LT(windows[i - 1].end_ns, windows[i].start_ns);
      }  // sorted, disjoint
    }
  }
}

TEST(DiagStepWindows, DuplicateStepAnnotationsTakeTheUnionAndGpuCopiesAreIgnored) {
  DdpSpec spec = ThreeRanks();
  spec.ranks = 2;
  spec.gpu = true;  // writes Kineto's gpu_user_annotation copies of ProfilerStep#N, listed first
  spec.plan = [](int, int) {
    RankStep st;
    st.segs = {{Op("volta_sgemm_128x64_nn", 20 * kMs, "kernel")}};
    st.tail = {Op("void multi_tensor_apply_kernel", 2 * kMs, "kernel")};
    return st;
  };
  SimulatedJob sim = SimulateDdp(spec);
  // The device lags: the GPU-side copy of step 7 ends 30 ms after the CPU step (no stream in its args, as
  // Kineto writes it).
  bool found = false;
  for (Event& e : sim.events[1])
    if (e.name == "ProfilerStep#7" && e.cat == "gpu_user_annotation") {
      ASSERT_EQ(e.stream, -1);
      e.dur = sim.step_end[2][1] + spec.clock_offset[1] + 30 * kMs - e.ts;
      found = true;
    }
  ASSERT_TRUE(found);
  // PyTorch 1.x writes ProfilerStep#N twice, nested: a copy that starts 1 ms later and ends 2 ms later.
  Event dup;
  for (const Event& e : sim.events[0])
    if (e.name == "ProfilerStep#6" && e.cat == "user_annotation") dup = e;
  ASSERT_FALSE(dup.name.empty());
  dup.ts += 1 * kMs;
  dup.dur += 1 * kMs;
  sim.events[0].push_back(dup);
  // A copy on a stream (args.stream set) far outside the step must not widen it either.
  Event on_stream = dup;
  on_stream.cat = "gpu_user_annotation";
  on_stream.pid = 0;
  on_stream.tid = 7;
  on_stream.stream = 7;
  on_stream.ts -= 500 * kMs;
  sim.events[0].push_back(on_stream);
  const TraceStore store = LoadRankJsons(JobJsons(spec, sim));
  const model::StepModel steps = FindSteps(store, SlicesByRank(store));
  EXPECT_EQ(model::StepSourceName(steps.source), "profiler-step");
  EXPECT_EQ(steps.steps, (std::vector<int64_t>{5, 6, 7, 8}));
  for (int r = 0; r < 2; ++r) {
    ASSERT_EQ(steps.by_rank[r].size(), 4u);
    for (size_t i = 0; i < 4; ++i) {
      SCOPED_TRACE("rank " + std::to_string(r) + " window " + std::to_string(i));
      const StepWindow& w = steps.by_rank[r][i];
      EXPECT_EQ(w.step, 5 + static_cast<int64_t>(i));
      EXPECT_EQ(w.start_ns, sim.step_start[i][r] + spec.clock_offset[r]);
      EXPECT_EQ(w.end_ns, sim.step_end[i][r] + spec.clock_offset[r] + (r == 0 && i == 1 ? 2 * kMs : 0));
      // The main track is the training loop's CPU thread, not the device's annotation lane.
      ASSERT_LT(w.main_track.value, store.tracks.size());
      EXPECT_EQ(store.track(w.main_track).pid, 1000 + r);
      EXPECT_EQ(store.track(w.main_track).tid, 1);
    }
  }
}

TEST(DiagStepWindows, AStepNumberSeenAgainAtAnotherTimeIsCountedNotMerged) {
  // Issue 11: two files' events in one trace (ProfilerStep#5 again 87 days later) made one 87-day step.
  DdpSpec spec = ThreeRanks();
  spec.plan = [](int, int) { return BasicStep(80 * kMs); };  // clean: nothing else to report
  SimulatedJob sim = SimulateDdp(spec);
  Event again;
  for (const Event& e : sim.events[1])
    if (e.name == "ProfilerStep#5") again = e;
  ASSERT_FALSE(again.name.empty());
  again.ts += 87LL * 24 * 3600 * kSec;
  sim.events[1].push_back(again);
  const TraceStore store = LoadRankJsons(JobJsons(spec, sim));
  const model::StepModel steps = FindSteps(store, SlicesByRank(store));
  EXPECT_EQ(steps.steps, (std::vector<int64_t>{5, 6, 7, 8}));
  const StepWindow& w = steps.by_rank[1][0];
  EXPECT_EQ(w.step, 5);
  EXPECT_EQ(w.end_ns, sim.step_end[0][1] + spec.clock_offset[1]);  // the first instance, not the union
  EXPECT_EQ(steps.duplicate_markers, (std::vector<size_t>{0, 1, 0}));
  EXPECT_EQ(steps.out_of_order_markers, (std::vector<size_t>{0, 0, 0}));
  // The diagnosis says so, and does not call the job healthy.
  const diagnosis::DiagnosisResult r = diagnosis::Diagnose(store);
  EXPECT_EQ(r.status, diagnosis::Verdict::kInconclusive);
  ASSERT_FALSE(r.status_reasons.empty());
  EXPECT_NE(r.status_reasons[0].find("rank 1 has 1 ProfilerStep markers whose number it already had"),
            std::string::npos)
      << r.status_reasons[0];
}

TEST(DiagStepWindows, StepNumbersGoingBackwardsInTimeAreCounted) {
  DdpSpec spec = ThreeRanks();
  SimulatedJob sim = SimulateDdp(spec);
  for (Event& e : sim.events[2]) {  // swap the numbers of steps 6 and 7 on rank 2
    if (e.name == "ProfilerStep#6")
      e.name = "ProfilerStep#7";
    else if (e.name == "ProfilerStep#7")
      e.name = "ProfilerStep#6";
  }
  const TraceStore store = LoadRankJsons(JobJsons(spec, sim));
  const model::StepModel steps = FindSteps(store, SlicesByRank(store));
  EXPECT_EQ(steps.out_of_order_markers, (std::vector<size_t>{0, 0, 1}));
}

TEST(DiagStepWindows, OpTableStepColumn) {
  TraceStore store;
  const StringId fwd = store.strings.intern("forward-compute");
  for (int r = 0; r < 2; ++r) {
    RankInfo info;
    info.rank = r;
    store.ranks.push_back(info);
    Track t;
    t.rank = static_cast<uint32_t>(r);
    t.kind = TrackKind::kOpTable;
    store.tracks.push_back(t);
  }
  // rank 0: steps 3 (two ops) and 9; rank 1: step 3 only, plus a row without a step.
  auto add = [&](uint32_t track, int64_t ts, int64_t dur, int32_t step) {
    store.slices.append(ts, dur, fwd, StringId(), TrackId(track), kNoCorrelation, kSliceComplete);
    store.slices.step.back() = step;
  };
  add(0, 100, 10, 3);
  add(0, 50, 20, 3);
  add(0, 500, 5, 9);
  add(1, 60, 30, 3);
  add(1, 1000, 1, -1);
  const model::StepModel steps = FindSteps(store, SlicesByRank(store));
  EXPECT_EQ(model::StepSourceName(steps.source), "op-table");
  EXPECT_EQ(steps.steps, (std::vector<int64_t>{3}));
  ASSERT_EQ(steps.by_rank[0].size(), 2u);
  EXPECT_EQ(steps.by_rank[0][0].step, 3);
  EXPECT_EQ(steps.by_rank[0][0].start_ns, 50);
  EXPECT_EQ(steps.by_rank[0][0].end_ns, 110);
  EXPECT_EQ(steps.by_rank[0][0].main_track, kNoTrack);
  EXPECT_EQ(steps.by_rank[0][1].step, 9);
  ASSERT_EQ(steps.by_rank[1].size(), 1u);
  EXPECT_EQ(steps.by_rank[1][0].start_ns, 60);
  EXPECT_EQ(steps.by_rank[1][0].end_ns, 90);
}

TEST(DiagStepWindows, NoStepsAtAll) {
  const TraceStore store =
      LoadRankJsons({RankJson({Event{"aten::mm", "cpu_op", kBase, 5 * kMs}}, 0, 2, Style::kKineto),
                     RankJson({Event{"aten::mm", "cpu_op", kBase, 6 * kMs}}, 1, 2, Style::kKineto)});
  const model::StepModel steps = FindSteps(store, SlicesByRank(store));
  EXPECT_EQ(model::StepSourceName(steps.source), "none");
  EXPECT_TRUE(steps.steps.empty());
  EXPECT_TRUE(steps.by_rank[0].empty());
}

TEST(DiagStepWindows, FindWindow) {
  const std::vector<StepWindow> w = {{1, 10, 20}, {2, 30, 40}, {3, 40, 55}};
  EXPECT_EQ(FindWindow(w, 5), -1);
  EXPECT_EQ(FindWindow(w, 10), 0);
  EXPECT_EQ(FindWindow(w, 15), 0);
  EXPECT_EQ(FindWindow(w, 20), 0);  // ends are inclusive
  EXPECT_EQ(FindWindow(w, 25), -1);
  EXPECT_EQ(FindWindow(w, 30), 1);
  EXPECT_EQ(FindWindow(w, 40), 2);  // a shared boundary belongs to the later window
  EXPECT_EQ(FindWindow(w, 55), 2);
  EXPECT_EQ(FindWindow(w, 56), -1);
  EXPECT_EQ(FindWindow({}, 10), -1);
}

}  // namespace
}  // namespace strata::diagtest
