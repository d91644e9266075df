// The run diff (HTA's TraceDiff rules) on small hand-built runs whose per-name table is known by hand.
#include "analysis/diff/run_diff.h"

#include <gtest/gtest.h>

#include "reports/diff_report.h"

#include <algorithm>
#include <sstream>
#include <string>
#include <vector>

namespace strata::diff {
namespace {

constexpr int64_t us = 1000;

// Builds a store of one or more ranks directly; times in ns, rows in the order added (file order).
class BuiltRun {
 public:
  explicit BuiltRun(std::vector<int32_t> ranks = {0}) {
    for (int32_t r : ranks) {
      s_.inputs.emplace_back();
      RankInfo info;
      info.rank = r;
      info.input = static_cast<uint32_t>(s_.inputs.size() - 1);
      s_.ranks.push_back(info);
      s_.tracks.push_back(
          Track{static_cast<uint32_t>(s_.ranks.size() - 1), TrackKind::kCpuThread, 1, 1, -1, StringId()});
    }
  }
  void Step(int64_t n, int64_t ts, int64_t dur, size_t rank = 0) {
    Cpu("ProfilerStep#" + std::to_string(n), ts, dur, kNoCorrelation, "user_annotation", rank);
  }
  void Cpu(const std::string& name, int64_t ts, int64_t dur, int64_t corr = kNoCorrelation,
           const std::string& cat = "cpu_op", size_t rank = 0) {
    Add(name, cat, ts, dur, CpuTrack(rank), corr);
  }
  void Kernel(const std::string& name, int64_t ts, int64_t dur, int64_t corr, int64_t stream = 7, size_t rank = 0,
              const std::string& cat = "kernel") {
    Add(name, cat, ts, dur, StreamTrack(stream, rank), corr);
  }
  // A row without a category (PyTorch 1.x's legacy profiler writes none), in an input of format `format`.
  void Uncategorized(const std::string& name, int64_t ts, int64_t dur, InputFormat format) {
    s_.inputs[0].format = format;
    s_.slices.append(ts, dur, s_.strings.intern(name), StringId(), TrackId(CpuTrack(0)), kNoCorrelation,
                     kSliceComplete);
  }
  // A row of an op table: its step is the table's (the store's step column), on the rank's op-table track.
  void OpRow(const std::string& name, int64_t step, int64_t ts, int64_t dur, size_t rank) {
    const uint32_t track = CpuTrack(rank);
    s_.tracks[track].kind = TrackKind::kOpTable;
    s_.inputs[s_.ranks[rank].input].format = InputFormat::kOpTable;
    Add(name, "op", ts, dur, track, kNoCorrelation);
    s_.slices.step.back() = static_cast<int32_t>(step);
  }
  void SetFloatTimestamps() {
    for (InputInfo& in : s_.inputs) in.float_timestamps = true;
  }
  const TraceStore& store() const { return s_; }

 private:
  void Add(const std::string& name, const std::string& cat, int64_t ts, int64_t dur, uint32_t track, int64_t corr) {
    const int64_t stream = s_.tracks[track].stream;
    s_.slices.append(ts, dur, s_.strings.intern(name), s_.strings.intern(cat), TrackId(track), corr,
                     kSliceComplete | kSliceHasCategory | (stream >= 0 && corr >= 0 ? kSliceGpu : 0));
  }
  uint32_t CpuTrack(size_t rank) {
    for (uint32_t t = 0; t < s_.tracks.size(); ++t)
      if (s_.tracks[t].rank == rank && s_.tracks[t].stream == -1) return t;
    return 0;
  }
  uint32_t StreamTrack(int64_t stream, size_t rank) {
    for (uint32_t t = 0; t < s_.tracks.size(); ++t)
      if (s_.tracks[t].rank == rank && s_.tracks[t].stream == stream) return t;
    s_.tracks.push_back(Track{static_cast<uint32_t>(rank), TrackKind::kGpuStream, 0, stream, stream, StringId()});
    return static_cast<uint32_t>(s_.tracks.size() - 1);
  }
  TraceStore s_;
};

DiffOptions Options() {
  DiffOptions o;
  o.base.rank_option = "--base-rank", o.base.step_option = "--base-step";
  o.test.rank_option = "--test-rank", o.test.step_option = "--test-step";
  return o;
}

Expected<RunDiff> Diff(const BuiltRun& base, const BuiltRun& test, const DiffOptions& o = Options()) {
  auto b = ReadRun(base.store(), "BASE b");
  auto t = ReadRun(test.store(), "TEST t");
  EXPECT_TRUE(b.ok()) << b.error();
  EXPECT_TRUE(t.ok()) << t.error();
  return DiffRuns(base.store(), b.value(), test.store(), t.value(), o);
}

const Change* Find(const std::vector<Change>& v, const std::string& name) {
  for (const Change& c : v)
    if (c.name == name) return &c;
  return nullptr;
}

// Base: step 5 is 100 µs with two aten::mm (10 µs each), aten::copy_ and a launch whose kernel (20 µs) runs
// after the step ends; step 6 holds one more aten::mm. Test: step 5 is 130 µs with three aten::mm, a new
// aten::relu, no aten::copy_, the kernel 30 µs.
BuiltRun BaseRun() {
  BuiltRun r;
  r.Step(5, 0, 100 * us);
  r.Cpu("aten::mm", 10 * us, 10 * us);
  r.Cpu("aten::mm", 30 * us, 10 * us);
  r.Cpu("aten::copy_", 50 * us, 4 * us);
  r.Cpu("cudaLaunchKernel", 60 * us, 2 * us, 1, "cuda_runtime");
  r.Step(6, 100 * us, 100 * us);
  r.Cpu("aten::mm", 110 * us, 10 * us);
  r.Kernel("gemm_kernel", 150 * us, 20 * us, 1);
  return r;
}

BuiltRun TestRun() {
  BuiltRun r;
  r.Step(5, 0, 130 * us);
  for (int i = 0; i < 3; ++i) r.Cpu("aten::mm", (10 + 20 * i) * us, 10 * us);
  r.Cpu("aten::relu", 80 * us, 5 * us);
  r.Cpu("cudaLaunchKernel", 90 * us, 2 * us, 1, "cuda_runtime");
  r.Step(6, 130 * us, 100 * us);
  r.Kernel("gemm_kernel", 140 * us, 30 * us, 1);
  return r;
}

TEST(RunDiff, PerNameTableOfTheFirstStep) {
  auto d = Diff(BaseRun(), TestRun());
  ASSERT_TRUE(d.ok()) << d.error();
  const RunDiff& r = d.value();
  EXPECT_EQ(r.base.steps, std::vector<int64_t>{5});
  EXPECT_EQ(r.base.ranks, std::vector<int32_t>{0});
  EXPECT_DOUBLE_EQ(r.base.step_time_us, 100);
  EXPECT_DOUBLE_EQ(r.test.step_time_us, 130);
  const Change* mm = Find(r.names, "aten::mm");
  ASSERT_NE(mm, nullptr);
  EXPECT_EQ(mm->base_count, 2u);  // step 6's aten::mm is not selected
  EXPECT_EQ(mm->test_count, 3u);
  EXPECT_DOUBLE_EQ(mm->base_total_us, 20);
  EXPECT_DOUBLE_EQ(mm->test_total_us, 30);
  EXPECT_EQ(mm->diff_count(), 1);
  EXPECT_EQ(mm->kind, "CPU cpu_op");
  // The kernel runs after step 5 ends but belongs to it through its launch's correlation.
  const Change* gemm = Find(r.names, "gemm_kernel");
  ASSERT_NE(gemm, nullptr);
  EXPECT_EQ(gemm->base_count, 1u);
  EXPECT_DOUBLE_EQ(gemm->diff_total_us(), 10);
  EXPECT_EQ(gemm->kind, "GPU COMPUTATION");
  EXPECT_TRUE(Find(r.names, "aten::relu")->is_new());
  EXPECT_TRUE(Find(r.names, "aten::copy_")->is_gone());
  EXPECT_DOUBLE_EQ(Find(r.names, "aten::copy_")->diff_total_us(), -4);
  // Largest change first: the step itself (+30 µs), then the rest.
  EXPECT_EQ(r.names.front().name, "ProfilerStep#5");
  const Change* gpu = Find(r.kinds, "GPU COMPUTATION");
  ASSERT_NE(gpu, nullptr);
  EXPECT_DOUBLE_EQ(gpu->diff_total_us(), 10);
}

TEST(RunDiff, AllStepsSumsEveryStep) {
  DiffOptions o = Options();
  o.base.all_steps = o.test.all_steps = true;
  auto d = Diff(BaseRun(), TestRun(), o);
  ASSERT_TRUE(d.ok()) << d.error();
  EXPECT_EQ(d.value().base.steps, (std::vector<int64_t>{5, 6}));
  EXPECT_EQ(Find(d.value().names, "aten::mm")->base_count, 3u);
  EXPECT_DOUBLE_EQ(d.value().base.step_time_us, 100);  // mean of 100 and 100
  EXPECT_DOUBLE_EQ(d.value().test.step_time_us, 115);  // mean of 130 and 100
}

TEST(RunDiff, StepAndDeviceSelection) {
  DiffOptions o = Options();
  o.base.steps = {6};
  o.device = DeviceFilter::kCpu;
  auto d = Diff(BaseRun(), TestRun(), o);
  ASSERT_TRUE(d.ok()) << d.error();
  EXPECT_EQ(Find(d.value().names, "aten::mm")->base_count, 1u);
  EXPECT_EQ(Find(d.value().names, "gemm_kernel"), nullptr);  // a GPU row, left out by --device cpu
}

TEST(RunDiff, MissingRankOrStepIsAnErrorNamingTheOption) {
  DiffOptions o = Options();
  o.base.ranks = {9};
  auto d = Diff(BaseRun(), TestRun(), o);
  ASSERT_FALSE(d.ok());
  EXPECT_NE(d.error().find("--base-rank 9: BASE b has no rank 9 (its ranks: 0)"), std::string::npos) << d.error();
  o = Options();
  o.test.steps = {99};
  d = Diff(BaseRun(), TestRun(), o);
  ASSERT_FALSE(d.ok());
  EXPECT_NE(d.error().find("--test-step 99: TEST t has no ProfilerStep#99 (its steps: 5, 6)"), std::string::npos)
      << d.error();
}

TEST(RunDiff, RunWithoutStepsIsAnError) {
  BuiltRun r;
  r.Cpu("aten::mm", 0, 10 * us);
  auto read = ReadRun(r.store(), "BASE x");
  ASSERT_FALSE(read.ok());
  EXPECT_NE(read.error().find("BASE x: no ProfilerStep#N"), std::string::npos) << read.error();
}

TEST(RunDiff, DefaultRankIsTheSmallestAndAllRanksSums) {
  BuiltRun multi({3, 1});
  for (size_t rank = 0; rank < 2; ++rank) {
    multi.Step(1, 0, 50 * us, rank);
    multi.Cpu("aten::add", 5 * us, rank == 0 ? 7 * us : 3 * us, kNoCorrelation, "cpu_op", rank);
  }
  auto d = Diff(multi, multi);
  ASSERT_TRUE(d.ok()) << d.error();
  EXPECT_EQ(d.value().base.ranks, std::vector<int32_t>{1});
  EXPECT_DOUBLE_EQ(Find(d.value().names, "aten::add")->base_total_us, 3);
  DiffOptions o = Options();
  o.base.all_ranks = o.test.all_ranks = true;
  d = Diff(multi, multi, o);
  ASSERT_TRUE(d.ok()) << d.error();
  EXPECT_EQ(d.value().base.ranks, (std::vector<int32_t>{1, 3}));
  EXPECT_EQ(Find(d.value().names, "aten::add")->base_count, 2u);
  EXPECT_DOUBLE_EQ(Find(d.value().names, "aten::add")->base_total_us, 10);
}

// Four ranks 100 µs a step in base; in test three take 101-103 µs and rank 3 takes 150 µs: its change stands
// apart. Ranks are matched by number, not by position in the store.
TEST(RunDiff, RankWhoseChangeDiffersFromTheRest) {
  BuiltRun base({0, 1, 2, 3}), test({3, 2, 1, 0});
  for (size_t i = 0; i < 4; ++i) base.Step(1, 0, 100 * us, i);
  const int64_t test_us[] = {150, 103, 101, 102};  // ranks 3, 2, 1, 0
  for (size_t i = 0; i < 4; ++i) test.Step(1, 0, test_us[i] * us, i);
  DiffOptions o = Options();
  o.base.all_ranks = o.test.all_ranks = true;
  auto d = Diff(base, test, o);
  ASSERT_TRUE(d.ok()) << d.error();
  ASSERT_EQ(d.value().ranks.size(), 4u);
  for (const RankChange& r : d.value().ranks) {
    EXPECT_EQ(r.differs, r.rank == 3) << r.rank;
    EXPECT_DOUBLE_EQ(r.base_step_time_us, 100);
  }
  EXPECT_DOUBLE_EQ(d.value().ranks[3].change_us(), 50);
  EXPECT_DOUBLE_EQ(d.value().ranks[0].change_us(), 2);
}

// Every rank's step grows by 50 µs, but on ranks 0, 1 and 3 because they wait 45 µs longer in the all-reduce
// kernel for rank 2, which does not: rank 2 differs in GPU COMMUNICATION, not in step time.
TEST(RunDiff, RankDiffersInAKindWhenStepsGrowAlike) {
  BuiltRun base({0, 1, 2, 3}), test({0, 1, 2, 3});
  for (size_t i = 0; i < 4; ++i) {
    for (BuiltRun* run : {&base, &test}) {
      const bool waits = run == &test && i != 2;
      run->Step(1, 0, (run == &test ? 150 : 100) * us, i);
      run->Cpu("ncclAllReduce", 10 * us, 1 * us, 1, "cuda_runtime", i);
      run->Kernel("ncclKernel_AllReduce", 20 * us, (waits ? 55 : 10) * us, 1, 7, i);
    }
  }
  DiffOptions o = Options();
  o.base.all_ranks = o.test.all_ranks = true;
  auto d = Diff(base, test, o);
  ASSERT_TRUE(d.ok()) << d.error();
  for (const RankChange& r : d.value().ranks) {
    EXPECT_DOUBLE_EQ(r.change_us(), 50);
    EXPECT_EQ(r.differs, r.rank == 2) << r.rank;
  }
  const RankChange& slow = d.value().ranks[2];
  EXPECT_EQ(slow.measure, "GPU COMMUNICATION");
  EXPECT_DOUBLE_EQ(slow.measure_change_us, 0);
  EXPECT_DOUBLE_EQ(slow.measure_median_us, 45);
}

// Two ranks (no rest to compare with): rank 1 runs a new aten::matmul (+30 µs a step) and rank 0 waits for
// it in the collective (+30 µs of gloo:all_reduce). Compared name by name, rank 1 changed alone in
// aten::matmul; rank 0's wait is not a change of its own (collectives are left out), and an op both ranks
// changed alike (aten::mm +20 µs each) names nobody.
TEST(RunDiff, TwoRanksNameTheOpThatChangedOnOneRankOnly) {
  BuiltRun base({0, 1}), test({0, 1});
  for (size_t i = 0; i < 2; ++i) {
    for (BuiltRun* run : {&base, &test}) {
      const bool after = run == &test;
      run->Step(1, 0, (after ? 150 : 100) * us, i);
      run->Cpu("aten::mm", 5 * us, (after ? 40 : 20) * us, kNoCorrelation, "cpu_op", i);
      if (after && i == 1) run->Cpu("aten::matmul", 50 * us, 30 * us, kNoCorrelation, "cpu_op", i);
      run->Cpu("gloo:all_reduce", 90 * us, (after && i == 0 ? 40 : 10) * us, kNoCorrelation, "cpu_op", i);
    }
  }
  DiffOptions o = Options();
  o.base.all_ranks = o.test.all_ranks = true;
  auto d = Diff(base, test, o);
  ASSERT_TRUE(d.ok()) << d.error();
  ASSERT_EQ(d.value().ranks.size(), 2u);
  EXPECT_FALSE(d.value().ranks[0].differs) << d.value().ranks[0].measure;
  const RankChange& changed = d.value().ranks[1];
  EXPECT_TRUE(changed.differs);
  EXPECT_EQ(changed.measure, "aten::matmul");
  EXPECT_DOUBLE_EQ(changed.measure_change_us, 30);
  EXPECT_DOUBLE_EQ(changed.measure_median_us, 0);  // the other rank's change
  EXPECT_TRUE(IsWaitOrStepRow("gloo:all_reduce"));
  EXPECT_TRUE(IsWaitOrStepRow("ncclKernel_AllReduce_RING_LL_Sum_float"));
  EXPECT_TRUE(IsWaitOrStepRow("ProfilerStep#12"));
  EXPECT_FALSE(IsWaitOrStepRow("aten::matmul"));
}

// HTA's add_iteration: a cpu_op on stream 0 (a Triton launch) is placed by time; any other row on stream 0 is in
// no step; a row on a stream > 0 without a linked launch is in none (-1).
TEST(RunDiff, StreamZeroAndUnlinkedRows) {
  BuiltRun r;
  r.Step(1, 0, 100 * us);
  r.Kernel("triton_poi_fused", 10 * us, 2 * us, kNoCorrelation, 0, 0, "cpu_op");
  r.Kernel("amd_kernel_on_stream_0", 20 * us, 2 * us, 5, 0);
  r.Kernel("orphan_kernel", 30 * us, 2 * us, 77);
  auto d = Diff(r, r);
  ASSERT_TRUE(d.ok()) << d.error();
  EXPECT_NE(Find(d.value().names, "triton_poi_fused"), nullptr);
  EXPECT_EQ(Find(d.value().names, "amd_kernel_on_stream_0"), nullptr);
  EXPECT_EQ(Find(d.value().names, "orphan_kernel"), nullptr);
}

// A float-timestamp input is rounded inward to whole µs as HTA does: [0.5, 1.7) -> [1, 1), dur 0.
TEST(RunDiff, FloatTimestampsRoundInward) {
  BuiltRun r;
  r.Step(1, 0, 100 * us);
  r.Cpu("tiny", 500, 1200);
  r.Cpu("wide", 2 * us + 100, 3 * us + 800);  // [2.1, 5.9) -> [3, 5)
  r.SetFloatTimestamps();
  auto d = Diff(r, r);
  ASSERT_TRUE(d.ok()) << d.error();
  EXPECT_DOUBLE_EQ(Find(d.value().names, "tiny")->base_total_us, 0);
  EXPECT_DOUBLE_EQ(Find(d.value().names, "wide")->base_total_us, 2);
  EXPECT_TRUE(d.value().base.rounded_to_us);
}

// HTA drops rows without a category, so it reads nothing of a legacy PyTorch 1.x trace; strata takes them there
// (and only there).
TEST(RunDiff, LegacyTracesWithoutCategoriesAreRead) {
  for (InputFormat format : {InputFormat::kPytorchLegacy, InputFormat::kKineto}) {
    BuiltRun r;
    r.Uncategorized("ProfilerStep#4", 0, 100 * us, format);
    r.Uncategorized("aten::mm", 10 * us, 5 * us, format);
    auto read = ReadRun(r.store(), "BASE legacy");
    if (format == InputFormat::kKineto) {
      EXPECT_FALSE(read.ok());  // no categorized row: nothing HTA would compare
      continue;
    }
    ASSERT_TRUE(read.ok()) << read.error();
    auto d = Diff(r, r);
    ASSERT_TRUE(d.ok()) << d.error();
    EXPECT_DOUBLE_EQ(d.value().base.step_time_us, 100);
    EXPECT_EQ(Find(d.value().names, "aten::mm")->kind, "CPU (no category)");
  }
}

// When step rows overlap, the last one in file order that holds a row's start takes it.
TEST(RunDiff, LastContainingStepWins) {
  BuiltRun r;
  r.Step(1, 0, 100 * us);
  r.Step(2, 50 * us, 100 * us);
  r.Cpu("in_both", 60 * us, 1 * us);
  DiffOptions o = Options();
  o.base.steps = o.test.steps = {1};
  auto d = Diff(r, r, o);
  ASSERT_TRUE(d.ok()) << d.error();
  EXPECT_EQ(Find(d.value().names, "in_both"), nullptr);
  o.base.steps = o.test.steps = {2};
  d = Diff(r, r, o);
  ASSERT_TRUE(d.ok()) << d.error();
  EXPECT_NE(Find(d.value().names, "in_both"), nullptr);
}

}  // namespace
}  // namespace strata::diff

namespace strata::diff {
namespace {

// The text's names get the columns the terminal has: shortened in the middle to 44 at the default 100, whole at
// 160.
TEST(RunDiff, TextNamesFitTheWidthGiven) {
  const std::string longname(70, 'x');
  BuiltRun base, test;
  base.Step(5, 0, 100 * us);
  base.Cpu(longname, 10 * us, 10 * us);
  test.Step(5, 0, 130 * us);
  test.Cpu(longname, 10 * us, 40 * us);
  auto d = Diff(base, test);
  ASSERT_TRUE(d.ok()) << d.error();
  const DiffSides sides{base.store(), test.store(), "base", "test"};
  EXPECT_EQ(DiffToText(sides, d.value()).find(longname), std::string::npos);
  EXPECT_NE(DiffToText(sides, d.value()).find(longname.substr(0, 20) + "…" + longname.substr(0, 20)),
            std::string::npos);
  EXPECT_NE(DiffToText(sides, d.value(), 20, 160).find(longname), std::string::npos);
  EXPECT_EQ(DiffToText(sides, d.value(), 20, 10), DiffToText(sides, d.value(), 20, kMinTextWidth));
}

// Two long names that differ only at their end, or only in their middle, never print alike (issue 51: two
// kernels printed identically, both cut at the same column): the end is kept, and names that would still read
// alike are printed whole.
TEST(RunDiff, TextKeepsDifferentLongNamesApart) {
  const std::string head = "ampere_bf16_s16816gemm_bf16_128x128_ldg8_f2f_stages_32x5_";
  const std::vector<std::string> names = {head + "64x3_nn", head + "64x3_tn", head + "MIDDLE" + head + "64x3_nn",
                                          head + "middle" + head + "64x3_nn"};
  BuiltRun base, test;
  base.Step(5, 0, 100 * us);
  test.Step(5, 0, 130 * us);
  for (size_t i = 0; i < names.size(); ++i) {
    base.Cpu(names[i], (10 + 10 * static_cast<int64_t>(i)) * us, 5 * us);
    test.Cpu(names[i], (10 + 10 * static_cast<int64_t>(i)) * us, (6 + static_cast<int64_t>(i)) * us);
  }
  auto d = Diff(base, test);
  ASSERT_TRUE(d.ok()) << d.error();
  const DiffSides sides{base.store(), test.store(), "base", "test"};
  const std::string text = DiffToText(sides, d.value());
  std::vector<std::string> rows;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);)
    if (line.find(head.substr(0, 20)) != std::string::npos) rows.push_back(line);
  ASSERT_EQ(rows.size(), names.size()) << text;
  for (size_t i = 0; i < rows.size(); ++i)
    for (size_t j = i + 1; j < rows.size(); ++j) {
      const std::string a = rows[i].substr(rows[i].find(head.substr(0, 20)));
      const std::string b = rows[j].substr(rows[j].find(head.substr(0, 20)));
      EXPECT_NE(a, b) << text;
    }
  // A name alike no other is shortened in the middle, its end kept.
  EXPECT_TRUE(std::any_of(rows.begin(), rows.end(), [](const std::string& row) {
    return row.find("…") != std::string::npos && row.ends_with("_64x3_tn");
  })) << text;
  for (const char* change : {"+1.00 µs", "+2.00 µs", "+3.00 µs", "+4.00 µs"})
    EXPECT_NE(text.find(change), std::string::npos) << change << "\n" << text;
}

// An op table left to the default compares the whole of one typical step: every rank's rows of the step whose
// time is the median (issue 51: one row of rank 0's first step was compared, "(rank 0, step 23; 1 events)").
TEST(RunDiff, OpTableComparesEveryRankOfItsMedianStep) {
  auto table = [] {
    BuiltRun r({0, 1});
    const int64_t length[] = {10, 30, 20};  // steps 1, 2, 3: the median step is 3
    int64_t t = 0;
    for (int64_t step = 1; step <= 3; ++step) {
      for (size_t rank = 0; rank < 2; ++rank) {
        r.OpRow("forward-compute", step, t * us, 2 * us, rank);
        r.OpRow("backward-compute", step, (t + 2) * us, (length[step - 1] - 2) * us, rank);
      }
      t += length[step - 1];
    }
    return r;
  };
  BuiltRun base = table(), test = table();
  auto d = Diff(base, test);
  ASSERT_TRUE(d.ok()) << d.error();
  EXPECT_TRUE(d.value().base.whole_median_step);
  EXPECT_EQ(d.value().base.ranks, (std::vector<int32_t>{0, 1}));
  EXPECT_EQ(d.value().base.steps, (std::vector<int64_t>{3}));
  EXPECT_EQ(d.value().base.rows, 4u);
  const DiffSides sides{base.store(), test.store(), "base", "test"};
  const std::string text = DiffToText(sides, d.value());
  EXPECT_NE(text.find("base (every rank: 0-1, its median step by time: 3; 4 events"), std::string::npos) << text;
  // A step named on the command line is compared as asked, HTA's way (the first rank).
  DiffOptions o = Options();
  o.base.steps = {1};
  o.test.steps = {1};
  auto asked = Diff(base, test, o);
  ASSERT_TRUE(asked.ok()) << asked.error();
  EXPECT_FALSE(asked.value().base.whole_median_step);
  EXPECT_EQ(asked.value().base.ranks, (std::vector<int32_t>{0}));
  EXPECT_EQ(asked.value().base.steps, (std::vector<int64_t>{1}));
}

}  // namespace
}  // namespace strata::diff
