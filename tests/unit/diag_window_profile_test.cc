// Window profile (analysis/diagnosis/window_profile): a hand-made main thread split into compute, data
// loading, communication and host gap by self time, on Kineto (with categories) and PyTorch 1.x (without)
// traces, clipped to sub-windows; device busy/idle from kernels (NCCL kernels excluded); the invariant
// compute + data + comm + host_gap == window.
//
// Main thread (ms from the step start):
//   ProfilerStep#1                                   [0, 100]   annotation
//     enumerate(DataLoader)#...__next__              [5, 20]    data (whole)
//       aten::stack [6, 18] > aten::cat [7, 17]                 inside data: not split
//     forward                                        [22, 60]   annotation (user range)
//       aten::linear [23, 40] > aten::mm [24, 38]               compute 3 + 14
//       aten::relu [42, 50]                                     compute 8
//     c10d::allreduce_                               [62, 70]   comm (whole)
//       aten::copy_ [63, 64]
//     Optimizer.step#SGD.step [75, 95] > aten::add_ [76, 90]    compute 6 + 14
// Whole step: compute 45, data 15, comm 8, host gap 19 (ProfilerStep self) + 13 (forward self) = 32.
// Another thread's ops (a gloo:all_reduce, an aten::mm) are not the main thread's.
// Streams: a GEMM on stream 7 [10, 30], one on stream 8 [20, 40] (union 30), an NCCL kernel [50, 60].
#include "analysis/diagnosis/window_profile.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "diag_test_util.h"

namespace strata::diagtest {
namespace {

using diagnosis::ProfileWindow;
using diagnosis::TrackIndex;
using diagnosis::WindowProfile;

std::vector<Event> MainThread(bool with_cat) {
  auto ev = [&](const char* name, const char* cat, double from_ms, double to_ms, int64_t tid = 1) {
    return Event{name,
                 with_cat ? cat : "",
                 kBase + static_cast<int64_t>(from_ms * kMs),
                 static_cast<int64_t>((to_ms - from_ms) * kMs),
                 1000,
                 tid};
  };
  return {ev("ProfilerStep#1", "user_annotation", 0, 100), ev(kDataLoaderNext, "user_annotation", 5, 20),
          ev("aten::stack", "cpu_op", 6, 18), ev("aten::cat", "cpu_op", 7, 17),
          ev("forward", "user_annotation", 22, 60), ev("aten::linear", "cpu_op", 23, 40),
          ev("aten::mm", "cpu_op", 24, 38), ev("aten::relu", "cpu_op", 42, 50),
          ev("c10d::allreduce_", "cpu_op", 62, 70), ev("aten::copy_", "cpu_op", 63, 64),
          ev("Optimizer.step#SGD.step", "cpu_op", 75, 95), ev("aten::add_", "cpu_op", 76, 90),
          // another thread
          ev("gloo:all_reduce", "cpu_op", 62, 80, 2), ev("aten::mm", "cpu_op", 10, 90, 2)};
}

std::vector<Event> Kernels() {
  auto k = [](const char* name, double from_ms, double to_ms, int64_t stream, int64_t corr) {
    return Event{name,
                 "kernel",
                 kBase + static_cast<int64_t>(from_ms * kMs),
                 static_cast<int64_t>((to_ms - from_ms) * kMs),
                 0,
                 stream,
                 stream,
                 corr};
  };
  return {k("volta_sgemm_128x64_nn", 10, 30, 7, 1), k("volta_sgemm_64x64_nn", 20, 40, 8, 2),
          k(kNcclKernel, 50, 60, 7, 3)};
}

struct Loaded {
  TraceStore store;
  std::unique_ptr<TrackIndex> index;
  TrackId main_track = kNoTrack;

  explicit Loaded(std::vector<Event> events, Style style) {
    store = LoadRankJsons({RankJson(events, 0, 1, style)});
    const auto rows = SlicesByRank(store);
    index = std::make_unique<TrackIndex>(store, rows);
    const model::StepModel steps = model::FindSteps(store, rows);
    EXPECT_EQ(steps.steps, (std::vector<int64_t>{1}));
    if (!steps.by_rank.empty() && !steps.by_rank[0].empty()) main_track = steps.by_rank[0][0].main_track;
  }
  WindowProfile Profile(double from_ms, double to_ms) const {
    return ProfileWindow(store, *index, 0, main_track, kBase + static_cast<int64_t>(from_ms * kMs),
                         kBase + static_cast<int64_t>(to_ms * kMs));
  }
  double OpMs(const WindowProfile& w, const char* name) const {
    for (const auto& [id, ns] : w.op_ns)
      if (store.strings.view(id) == name) return ns / 1e6;
    return 0;
  }
};

void ExpectSplit(const WindowProfile& w, double compute, double data, double comm, double host_gap) {
  EXPECT_NEAR(w.compute_ns / 1e6, compute, 1e-9);
  EXPECT_NEAR(w.data_ns / 1e6, data, 1e-9);
  EXPECT_NEAR(w.comm_ns / 1e6, comm, 1e-9);
  EXPECT_NEAR(w.host_gap_ns / 1e6, host_gap, 1e-9);
}

TEST(DiagWindowProfile, WholeStepSplit) {
  std::vector<Event> events = MainThread(true);
  for (const Event& k : Kernels()) events.push_back(k);
  const Loaded job(events, Style::kKineto);
  ASSERT_NE(job.main_track, kNoTrack);
  const WindowProfile w = job.Profile(0, 100);
  ExpectSplit(w, 45, 15, 8, 32);
  EXPECT_NEAR(w.compute_ns + w.data_ns + w.comm_ns + w.host_gap_ns, 100.0 * kMs, 1e-6);
  // Per-name totals at every depth of the main thread (inside data / comm ops too), and kernels.
  EXPECT_NEAR(job.OpMs(w, "aten::mm"), 14, 1e-9);  // not the other thread's aten::mm
  EXPECT_NEAR(job.OpMs(w, "aten::stack"), 12, 1e-9);
  EXPECT_NEAR(job.OpMs(w, "aten::cat"), 10, 1e-9);
  EXPECT_NEAR(job.OpMs(w, "ProfilerStep#1"), 100, 1e-9);
  EXPECT_NEAR(job.OpMs(w, "volta_sgemm_128x64_nn"), 20, 1e-9);
  EXPECT_NEAR(job.OpMs(w, "gloo:all_reduce"), 0, 1e-9);  // another thread
  EXPECT_NEAR(job.OpMs(w, kNcclKernel), 0, 1e-9);        // communication kernels are not device work
  // Device: union of the two GEMMs, NCCL excluded.
  EXPECT_NEAR(w.device_busy_ns / 1e6, 30, 1e-9);
  EXPECT_NEAR(w.device_idle_ns / 1e6, 70, 1e-9);
}

TEST(DiagWindowProfile, SubWindowsAreClipped) {
  std::vector<Event> events = MainThread(true);
  for (const Event& k : Kernels()) events.push_back(k);
  const Loaded job(events, Style::kKineto);
  // [10, 50]: data [10, 20]; forward [22, 50] with linear 3 + mm 14 and relu 8; host gap: ProfilerStep
  // self 40 - 10 - 28 = 2, forward self 28 - 17 - 8 = 3.
  const WindowProfile a = job.Profile(10, 50);
  ExpectSplit(a, 25, 10, 0, 5);
  EXPECT_NEAR(a.device_busy_ns / 1e6, 30, 1e-9);
  EXPECT_NEAR(a.device_idle_ns / 1e6, 10, 1e-9);
  EXPECT_NEAR(job.OpMs(a, "aten::stack"), 8, 1e-9);
  // [64, 80]: inside the comm op [64, 70] counted whole (6), host gap [70, 75] (5), optimizer self [75, 76]
  // and add_ [76, 80].
  const WindowProfile b = job.Profile(64, 80);
  ExpectSplit(b, 5, 0, 6, 5);
  // Wider than the step: 20 ms covered by nothing are host gap too.
  const WindowProfile c = job.Profile(-10, 110);
  ExpectSplit(c, 45, 15, 8, 52);
  // Empty or inverted windows are all zero.
  const WindowProfile d = job.Profile(50, 50);
  ExpectSplit(d, 0, 0, 0, 0);
  EXPECT_EQ(d.device_busy_ns, 0);
}

TEST(DiagWindowProfile, PyTorch1xWithoutCategories) {
  // No "cat": "forward" (no "::") is a user range, aten ops and Optimizer.step are compute, the
  // DataLoader range is data, c10d:: is communication: the same split.
  const Loaded job(MainThread(false), Style::kLegacy);
  ASSERT_NE(job.main_track, kNoTrack);
  EXPECT_EQ(job.store.inputs[0].format, InputFormat::kPytorchLegacy);
  const WindowProfile w = job.Profile(0, 100);
  ExpectSplit(w, 45, 15, 8, 32);
  EXPECT_EQ(w.device_busy_ns, 0);  // no streams
  EXPECT_EQ(w.device_idle_ns, 0);
}

TEST(DiagWindowProfile, PartsAlwaysSumToTheWindow) {
  const Loaded job(MainThread(true), Style::kKineto);
  for (double from = -5; from < 100; from += 7.5) {
    for (double len : {0.5, 3.0, 11.0, 40.0, 120.0}) {
      const WindowProfile w = job.Profile(from, from + len);
      EXPECT_NEAR(w.compute_ns + w.data_ns + w.comm_ns + w.host_gap_ns, len * kMs, 1e-3)
          << "window [" << from << ", " << from + len << "]";
      EXPECT_GE(w.compute_ns, 0);
      EXPECT_GE(w.host_gap_ns, 0);
    }
  }
}

TEST(DiagWindowProfile, NoMainTrack) {
  const Loaded job(MainThread(true), Style::kKineto);
  const WindowProfile w = ProfileWindow(job.store, *job.index, 0, kNoTrack, kBase, kBase + 100 * kMs);
  ExpectSplit(w, 0, 0, 0, 0);
}

}  // namespace
}  // namespace strata::diagtest

namespace strata::diagnosis {
namespace {

// The culprit op is the largest excess of the cause's own class: a slow-compute finding of a recording
// whose biggest excess is a DataLoader wait names the compute frame below it (the lab's slow_compute case
// named "DataLoader: off CPU in DistributedSampler.__iter__" before).
TEST(CulpritOp, TakesTheLargestExcessOfTheCausesClass) {
  StringPool strings;
  const StringId wait = strings.intern("DataLoader: off CPU in Python DistributedSampler.__iter__");
  const StringId comm = strings.intern("gloo:all_reduce");
  const StringId step = strings.intern("ProfilerStep#3");
  const StringId gemm = strings.intern("sgemm_ [libblas.so.3] in Python extra_compute (job.py:253)");
  const std::vector<std::pair<StringId, double>> excess = {{step, 20}, {wait, 9}, {comm, 5}, {gemm, 4}};
  EXPECT_EQ(CulpritOp(strings, excess, Cause::kSlowCompute), gemm);
  EXPECT_EQ(CulpritOp(strings, excess, Cause::kLaunchOverhead), gemm);
  EXPECT_EQ(CulpritOp(strings, excess, Cause::kDataloaderStall), wait);
  EXPECT_EQ(CulpritOp(strings, excess, Cause::kHostStall), std::nullopt);
  EXPECT_EQ(CulpritOp(strings, {{wait, 9}, {comm, 5}}, Cause::kSlowCompute), std::nullopt);
}

}  // namespace
}  // namespace strata::diagnosis
