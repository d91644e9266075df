// HTA-compatible GPU breakdown on small hand-built traces whose answers are computed by hand.
#include "analysis/gpu_breakdown.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "analysis/job_summary.h"
#include "test_util.h"

namespace strata {
namespace {

// Builds a one-rank store directly; times in ns.
class Builder {
 public:
  Builder() {
    s_.inputs.emplace_back();
    s_.ranks.emplace_back();
    s_.ranks[0].rank = 0;
    s_.tracks.push_back(Track{0, TrackKind::kCpuThread, 1, 1, -1, StringId()});
  }
  // A GPU event (stream >= 0, correlation >= 0) on the stream's track.
  void Kernel(const std::string& name, int64_t ts_ns, int64_t dur_ns, int64_t stream, int64_t correlation,
              const std::string& cat = "kernel") {
    s_.slices.append(ts_ns, dur_ns, s_.strings.intern(name), s_.strings.intern(cat), TrackId(StreamTrack(stream)),
                     correlation,
                     kSliceComplete | (correlation >= 0 ? kSliceGpu : 0) | (cat.empty() ? 0 : kSliceHasCategory));
  }
  // A CPU event on the CPU thread's track.
  void Cpu(const std::string& name, int64_t ts_ns, int64_t dur_ns, int64_t correlation = kNoCorrelation,
           const std::string& cat = "cpu_op") {
    s_.slices.append(ts_ns, dur_ns, s_.strings.intern(name), s_.strings.intern(cat), TrackId(0), correlation,
                     kSliceComplete | kSliceHasCategory);
  }
  void SetFloatTimestamps() { s_.inputs[0].float_timestamps = true; }
  const TraceStore& store() const { return s_; }
  std::optional<GpuBreakdown> Compute(bool include_last_step = false, size_t top = 10) const {
    SliceRows rows;
    for (uint32_t i = 0; i < s_.slices.size(); ++i) rows.push_back(SliceId(i));
    BreakdownOptions o;
    o.include_last_step = include_last_step;
    o.top_kernels = top;
    return ComputeGpuBreakdown(s_, rows, s_.inputs[0], o);
  }

 private:
  uint32_t StreamTrack(int64_t stream) {
    for (uint32_t t = 0; t < s_.tracks.size(); ++t)
      if (s_.tracks[t].stream == stream) return t;
    s_.tracks.push_back(Track{0, TrackKind::kGpuStream, 0, stream, stream, StringId()});
    return static_cast<uint32_t>(s_.tracks.size() - 1);
  }
  TraceStore s_;
};

constexpr int64_t us = 1000;

size_t T(KernelType t) { return static_cast<size_t>(t); }

void ExpectConsistent(const GpuBreakdown& b) {
  EXPECT_NEAR(b.idle_us + b.compute_us + b.non_compute_us, b.kernel_time_us, 1e-9);
  if (b.kernel_time_us > 0) {
    EXPECT_NEAR(b.idle_pct + b.compute_pct + b.non_compute_pct, 100.0, 1e-9);
  }
}

TEST(GpuBreakdown, OverlappingKernelsOnTwoStreamsAndMemcpy) {
  Builder b;
  b.Kernel("gemm", 0, 10 * us, 7, 1);                                    // [0, 10)
  b.Kernel("gemm2", 5 * us, 15 * us, 8, 2);                              // [5, 20)
  b.Kernel("Memcpy HtoD (Pageable -> Device)", 30 * us, 10 * us, 7, 3);  // [30, 40)
  const auto r = b.Compute();
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->gpu_events, 3u);
  EXPECT_DOUBLE_EQ(r->kernel_time_us, 40);
  EXPECT_DOUBLE_EQ(r->idle_us, 10);         // [20, 30)
  EXPECT_DOUBLE_EQ(r->compute_us, 20);      // [0, 20)
  EXPECT_DOUBLE_EQ(r->non_compute_us, 10);  // the memcpy
  EXPECT_DOUBLE_EQ(r->idle_pct, 25.0);
  EXPECT_DOUBLE_EQ(r->compute_pct, 50.0);
  EXPECT_DOUBLE_EQ(r->non_compute_pct, 25.0);
  EXPECT_FALSE(r->comm_comp_overlap_pct.has_value());
  EXPECT_EQ(r->type_count[T(KernelType::kComputation)], 2u);
  EXPECT_DOUBLE_EQ(r->type_time_us[T(KernelType::kComputation)], 25);
  EXPECT_EQ(r->type_count[T(KernelType::kMemory)], 1u);
  EXPECT_DOUBLE_EQ(r->type_time_us[T(KernelType::kMemory)], 10);
  EXPECT_EQ(r->type_count[T(KernelType::kCommunication)], 0u);
  ASSERT_EQ(r->top_kernels.size(), 3u);
  EXPECT_EQ(r->top_kernels[0].name, "gemm2");
  EXPECT_EQ(r->top_kernels[1].name, "Memcpy HtoD (Pageable -> Device)");  // ties by name
  EXPECT_EQ(r->top_kernels[2].name, "gemm");
  EXPECT_EQ(r->top_kernels[1].type, KernelType::kMemory);
  EXPECT_FALSE(r->last_step_dropped);
  EXPECT_FALSE(r->rounded_to_us);
  ExpectConsistent(*r);
}

TEST(GpuBreakdown, CommunicationComputationOverlap) {
  Builder b;
  b.Kernel("ncclDevKernel_AllReduce_Sum_f32_RING_LL", 0, 100 * us, 9, 1);  // comm [0, 100)
  b.Kernel("void at::native::elementwise", 50 * us, 100 * us, 7, 2);       // comp [50, 150)
  b.Kernel("void at::native::elementwise", 200 * us, 20 * us, 7, 3);       // comp [200, 220)
  const auto r = b.Compute();
  ASSERT_TRUE(r.has_value());
  EXPECT_DOUBLE_EQ(r->kernel_time_us, 220);
  EXPECT_DOUBLE_EQ(r->idle_us, 50);  // [150, 200)
  EXPECT_DOUBLE_EQ(r->compute_us, 120);
  EXPECT_DOUBLE_EQ(r->non_compute_us, 50);  // communication alone on [0, 50)
  ASSERT_TRUE(r->comm_comp_overlap_pct.has_value());
  EXPECT_DOUBLE_EQ(*r->comm_comp_overlap_pct, 50.0);  // 50 of the 100 µs of communication
  EXPECT_DOUBLE_EQ(r->type_time_us[T(KernelType::kCommunication)], 100);
  ASSERT_EQ(r->top_kernels.size(), 2u);
  EXPECT_EQ(r->top_kernels[0].name, "void at::native::elementwise");
  EXPECT_EQ(r->top_kernels[0].count, 2u);
  EXPECT_DOUBLE_EQ(r->top_kernels[0].time_us, 120);
  EXPECT_DOUBLE_EQ(r->top_kernels[0].min_us, 20);
  EXPECT_DOUBLE_EQ(r->top_kernels[0].max_us, 100);
  ExpectConsistent(*r);
}

TEST(GpuBreakdown, CommunicationWithoutOverlapAndOtherKernels) {
  Builder b;
  b.Kernel("ncclKernel_AllGather_RING_LL", 0, 10 * us, 9, 1);
  b.Kernel("cudaStreamSynchronize", 10 * us, 10 * us, 7, 2);  // OTHER: neither compute nor comm
  b.Kernel("sgemm", 30 * us, 10 * us, 7, 3);
  const auto r = b.Compute();
  ASSERT_TRUE(r.has_value());
  EXPECT_DOUBLE_EQ(r->kernel_time_us, 40);
  EXPECT_DOUBLE_EQ(r->idle_us, 10);
  EXPECT_DOUBLE_EQ(r->compute_us, 10);
  EXPECT_DOUBLE_EQ(r->non_compute_us, 20);
  ASSERT_TRUE(r->comm_comp_overlap_pct.has_value());
  EXPECT_DOUBLE_EQ(*r->comm_comp_overlap_pct, 0.0);
  EXPECT_EQ(r->type_count[T(KernelType::kOther)], 1u);
  ASSERT_EQ(r->top_kernels.size(), 2u);  // kernels of no type are not listed
  ExpectConsistent(*r);
}

// Two ProfilerSteps: CPU events starting before the last step's start are kept, and GPU events are kept
// when their correlation matches a kept CPU event.
void AddTwoSteps(Builder& b) {
  b.Cpu("ProfilerStep#1", 0, 100 * us, kNoCorrelation, "user_annotation");
  b.Cpu("ProfilerStep#2", 100 * us, 100 * us, kNoCorrelation, "user_annotation");
  b.Cpu("cudaLaunchKernel", 10 * us, 2 * us, 1, "cuda_runtime");
  b.Cpu("cudaLaunchKernel", 110 * us, 2 * us, 2, "cuda_runtime");
  b.Kernel("gemm", 20 * us, 10 * us, 7, 1);    // launched in step 1
  b.Kernel("gemm", 120 * us, 20 * us, 7, 2);   // launched in the last step
  b.Kernel("orphan", 50 * us, 5 * us, 7, 77);  // no CPU launcher at all
}

TEST(GpuBreakdown, LastProfilerStepIsDroppedByDefault) {
  Builder b;
  AddTwoSteps(b);
  const auto r = b.Compute();
  ASSERT_TRUE(r.has_value());
  EXPECT_TRUE(r->last_step_dropped);
  EXPECT_EQ(r->gpu_events, 1u);
  EXPECT_DOUBLE_EQ(r->kernel_time_us, 10);
  EXPECT_DOUBLE_EQ(r->idle_us, 0);
  EXPECT_DOUBLE_EQ(r->compute_us, 10);
  ExpectConsistent(*r);
}

TEST(GpuBreakdown, IncludeLastStepKeepsIt) {
  Builder b;
  AddTwoSteps(b);
  const auto r = b.Compute(/*include_last_step=*/true);
  ASSERT_TRUE(r.has_value());
  EXPECT_FALSE(r->last_step_dropped);
  EXPECT_EQ(r->gpu_events, 2u);              // the orphan has no launcher in either case
  EXPECT_DOUBLE_EQ(r->kernel_time_us, 120);  // [20, 140)
  EXPECT_DOUBLE_EQ(r->compute_us, 30);
  EXPECT_DOUBLE_EQ(r->idle_us, 90);
  ExpectConsistent(*r);
}

TEST(GpuBreakdown, OneProfilerStepDropsNothing) {
  Builder b;
  b.Cpu("ProfilerStep#5", 0, 100 * us, kNoCorrelation, "user_annotation");
  b.Kernel("gemm", 20 * us, 10 * us, 7, 1);
  b.Kernel("orphan", 50 * us, 5 * us, 7, 77);
  const auto r = b.Compute();
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->gpu_events, 2u);
  EXPECT_FALSE(r->last_step_dropped);
  EXPECT_DOUBLE_EQ(r->kernel_time_us, 35);
}

TEST(GpuBreakdown, FloatTimestampsAreRoundedInward) {
  Builder b;
  b.SetFloatTimestamps();
  b.Kernel("k1", 1000400, 10200, 7, 1);  // [1000.4, 1010.6] -> [1001, 1010]
  b.Kernel("k2", 1020000, 5900, 7, 2);   // [1020.0, 1025.9] -> [1020, 1025]
  b.Kernel("k3", 1030999, 2, 7, 3);      // [1030.999, 1031.001] -> [1031, 1031]: zero length
  const auto r = b.Compute();
  ASSERT_TRUE(r.has_value());
  EXPECT_TRUE(r->rounded_to_us);
  EXPECT_DOUBLE_EQ(r->kernel_time_us, 30);  // 1031 - 1001
  EXPECT_DOUBLE_EQ(r->compute_us, 14);      // 9 + 5 + 0
  EXPECT_DOUBLE_EQ(r->idle_us, 16);
  ASSERT_EQ(r->top_kernels.size(), 3u);
  EXPECT_DOUBLE_EQ(r->top_kernels[0].time_us, 9);
  EXPECT_DOUBLE_EQ(r->top_kernels[2].time_us, 0);
  ExpectConsistent(*r);
}

TEST(GpuBreakdown, IntegerTimestampsAreNotRounded) {
  Builder b;  // the trace wrote integer ts: HTA keeps full precision (here: sub-µs values from dur)
  b.Kernel("k1", 1000000, 10200, 7, 1);  // [1000, 1010.2]
  b.Kernel("k2", 1020000, 5900, 7, 2);   // [1020, 1025.9]
  const auto r = b.Compute();
  ASSERT_TRUE(r.has_value());
  EXPECT_FALSE(r->rounded_to_us);
  EXPECT_NEAR(r->kernel_time_us, 25.9, 1e-9);
  EXPECT_NEAR(r->compute_us, 16.1, 1e-9);
  EXPECT_NEAR(r->idle_us, 9.8, 1e-9);
  ExpectConsistent(*r);
}

TEST(GpuBreakdown, NegativeFloatTimestampsAreRoundedInward) {
  Builder b;
  b.SetFloatTimestamps();
  b.Kernel("k1", -1500, 3000, 7, 1);  // [-1.5, 1.5] -> [-1, 1]
  const auto r = b.Compute();
  ASSERT_TRUE(r.has_value());
  EXPECT_DOUBLE_EQ(r->kernel_time_us, 2);
  EXPECT_DOUBLE_EQ(r->compute_us, 2);
}

TEST(GpuBreakdown, NoGpuEventsGivesNothing) {
  Builder b;
  b.Cpu("aten::mm", 0, 10 * us);
  b.Cpu("ProfilerStep#1", 0, 100 * us);
  EXPECT_FALSE(b.Compute().has_value());
  Builder empty;
  EXPECT_FALSE(empty.Compute().has_value());
}

TEST(GpuBreakdown, EventsWithoutCategoryOrInTraceCategoryDoNotCount) {
  Builder b;
  b.Kernel("k", 0, 10 * us, 7, 1, "");  // no "cat"
  b.Kernel("k", 0, 10 * us, 7, 2, "Trace");
  EXPECT_FALSE(b.Compute().has_value());
  b.Kernel("k", 20 * us, 10 * us, 7, 3);
  const auto r = b.Compute();
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->gpu_events, 1u);
  EXPECT_DOUBLE_EQ(r->kernel_time_us, 10);
}

TEST(GpuBreakdown, GpuUserAnnotationsAreNotDeviceRows) {
  Builder b;
  b.Kernel("my_region", 0, 100 * us, 7, 1, "gpu_user_annotation");
  b.Kernel("k", 20 * us, 10 * us, 7, 2);
  const auto r = b.Compute();
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->gpu_events, 1u);
  EXPECT_DOUBLE_EQ(r->kernel_time_us, 10);
}

TEST(GpuBreakdown, TopKernelsIsLimited) {
  Builder b;
  for (int i = 0; i < 20; ++i) b.Kernel("k" + std::to_string(100 + i), i * 10 * us, (i + 1) * us, 7, i);
  const auto r = b.Compute(false, 5);
  ASSERT_TRUE(r.has_value());
  ASSERT_EQ(r->top_kernels.size(), 5u);
  EXPECT_EQ(r->top_kernels[0].name, "k119");
  EXPECT_EQ(r->top_kernels[4].name, "k115");
  EXPECT_EQ(r->type_count[T(KernelType::kComputation)], 20u);
}

TEST(GpuBreakdown, FromAnImportedTraceThroughSummarize) {
  // The same computation reached through the importer (µs text with fractions) and Summarize.
  const std::string json = R"({"traceEvents": [
    {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#3", "pid": 1, "tid": 1, "ts": 0, "dur": 100},
    {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 1, "dur": 1, "args": {"correlation": 1}},
    {"ph": "X", "cat": "kernel", "name": "sgemm", "pid": 0, "tid": 7, "ts": 10.4, "dur": 20.2, "args": {"stream": 7, "correlation": 1}},
    {"ph": "X", "cat": "kernel", "name": "ncclKernel_AllReduce", "pid": 0, "tid": 9, "ts": 20, "dur": 20, "args": {"stream": 9, "correlation": 2}}
  ]})";
  auto imported = testing::ImportKinetoText(json);
  ASSERT_TRUE(imported.ok()) << imported.error();
  EXPECT_TRUE(imported.value().inputs[0].float_timestamps);
  const JobSummary job = Summarize(imported.value(), BreakdownOptions());
  ASSERT_EQ(job.ranks.size(), 1u);
  EXPECT_EQ(job.ranks[0].steps, (std::vector<int64_t>{3}));
  EXPECT_EQ(model::StepSourceName(job.ranks[0].step_source), "profiler-step");
  EXPECT_EQ(job.ranks[0].events, 4u);
  ASSERT_TRUE(job.ranks[0].gpu.has_value());
  const GpuBreakdown& g = *job.ranks[0].gpu;
  // sgemm [10.4, 30.6] -> [11, 30]; nccl [20, 40].
  EXPECT_DOUBLE_EQ(g.kernel_time_us, 29);
  EXPECT_DOUBLE_EQ(g.compute_us, 19);
  EXPECT_DOUBLE_EQ(g.idle_us, 0);
  EXPECT_DOUBLE_EQ(g.non_compute_us, 10);
  ASSERT_TRUE(g.comm_comp_overlap_pct.has_value());
  EXPECT_DOUBLE_EQ(*g.comm_comp_overlap_pct, 50.0);  // [20, 30] of [20, 40]
  EXPECT_EQ(job.ranks[0].span_start_ns, 0);
  EXPECT_EQ(job.ranks[0].span_end_ns, 100000);
}

}  // namespace
}  // namespace strata

namespace strata {
namespace {

// HTA fixes memory rows without a stream (stream = tid) only on MTIA traces: on an AMD trace the CPU-side
// hipMemcpyWithStream call (its args.stream is the string "0x0", so no stream) matches the memory pattern
// and must not count as device time (HTA on amd_trace: non-compute 35 us, not 93).
void AmdLikeSteps(Builder& b, const std::string& launch) {
  b.Cpu("ProfilerStep#1", 0, 1000 * us);
  b.Cpu("ProfilerStep#2", 1000 * us, 500 * us);
  b.Cpu(launch, 10 * us, 5 * us, 1, "cuda_runtime");
  b.Kernel("void elementwise_kernel", 20 * us, 10 * us, 0, 1);
  b.Cpu("hipMemcpyWithStream", 100 * us, 60 * us, 2, "cuda_runtime");
  b.Kernel("Memcpy HtoD (Host -> Device)", 110 * us, 20 * us, 0, 2, "gpu_memcpy");
}

TEST(GpuBreakdown, CpuSideMemcpyCallsAreNotDeviceTimeOutsideMtia) {
  Builder b;
  AmdLikeSteps(b, "hipLaunchKernel");
  const auto r = b.Compute();
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->gpu_events, 2u);
  EXPECT_DOUBLE_EQ(r->kernel_time_us, 110.0);  // [20, 130): the kernel and the device-side copy only
  EXPECT_DOUBLE_EQ(r->non_compute_us, 20.0);
}

TEST(GpuBreakdown, MtiaMemoryRowsWithoutAStreamAreDeviceTime) {
  Builder b;
  AmdLikeSteps(b, "runFunction - job_prep_and_submit_for_execution");  // MTIA's job submission, no CUDA/HIP launch
  const auto r = b.Compute();
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->gpu_events, 3u);                // the stream-less memcpy row is fixed into a device row
  EXPECT_DOUBLE_EQ(r->kernel_time_us, 140.0);  // [20, 160)
}

}  // namespace
}  // namespace strata
