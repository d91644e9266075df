// HTA's idle-time breakdown, kernel launch statistics, queue length and frequent kernel sequences on small hand-built
// ranks whose answers are worked out by hand from HTA's definitions (the comments beside each row).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "analysis/hta_rows.h"
#include "analysis/idle_time.h"
#include "analysis/kernel_sequences.h"
#include "analysis/launch_stats.h"
#include "analysis/memory_bandwidth.h"
#include "analysis/queue_length.h"

namespace strata {
namespace {

constexpr int64_t us = 1000;

// One rank: a CPU thread (track 0) and a track per GPU stream; times in ns.
class Rank {
 public:
  Rank() {
    s_.inputs.emplace_back();
    s_.ranks.emplace_back();
    s_.tracks.push_back(Track{0, TrackKind::kCpuThread, 1, 1, -1, StringId()});
  }
  void Kernel(const std::string& name, int64_t ts, int64_t dur, int64_t stream, int64_t corr) {
    s_.slices.append(ts, dur, s_.strings.intern(name), s_.strings.intern("kernel"), StreamTrack(stream), corr,
                     kSliceComplete | kSliceHasCategory | (corr >= 0 ? kSliceGpu : 0));
  }
  // A memory row with Kineto's args["memory bandwidth (GB/s)"].
  void Copy(const std::string& name, int64_t ts, int64_t dur, int64_t stream, int64_t corr, double gbps) {
    const auto args = static_cast<uint32_t>(s_.memory_bandwidth_gbps.size());
    s_.memory_bandwidth_gbps.push_back(gbps);
    s_.slices.append(ts, dur, s_.strings.intern(name), s_.strings.intern("gpu_memcpy"), StreamTrack(stream), corr,
                     kSliceComplete | kSliceHasCategory | kSliceGpu | kSliceMemoryBandwidth, args);
  }
  void Call(const std::string& name, int64_t ts, int64_t dur, int64_t corr) {
    s_.slices.append(ts, dur, s_.strings.intern(name), s_.strings.intern("cuda_runtime"), TrackId(0), corr,
                     kSliceComplete | kSliceHasCategory);
  }
  void Op(const std::string& name, int64_t ts, int64_t dur) {
    s_.slices.append(ts, dur, s_.strings.intern(name), s_.strings.intern("cpu_op"), TrackId(0), kNoCorrelation,
                     kSliceComplete | kSliceHasCategory);
  }
  HtaRows Rows() const {
    SliceRows rows;
    for (uint32_t i = 0; i < s_.slices.size(); ++i) rows.push_back(SliceId(i));
    std::optional<HtaRows> kept = KeptHtaRows(s_, rows, s_.inputs[0], false);
    EXPECT_TRUE(kept.has_value());
    return kept.value_or(HtaRows{});
  }
  const TraceStore& store() const { return s_; }

 private:
  TrackId StreamTrack(int64_t stream) {
    for (uint32_t t = 0; t < s_.tracks.size(); ++t)
      if (s_.tracks[t].stream == stream) return TrackId(t);
    s_.tracks.push_back(Track{0, TrackKind::kGpuStream, 0, stream, stream, StringId()});
    return TrackId(static_cast<uint32_t>(s_.tracks.size() - 1));
  }
  TraceStore s_;
};

double Idle(const StreamIdleTime& s, IdleCategory c) { return s.idle_us[static_cast<size_t>(c)]; }

TEST(IdleTime, EachGapIsHostWaitKernelWaitOrOther) {
  Rank r;
  r.Call("cudaLaunchKernel", 0, 1 * us, 1);
  r.Kernel("k1", 0, 10 * us, 7, 1);  // the stream's first row: no gap
  r.Call("cudaLaunchKernel", 15 * us, 1 * us, 2);
  r.Kernel("k2", 20 * us, 10 * us, 7, 2);  // gap 10, launched at 15 > 10: host wait 10
  r.Call("cudaLaunchKernel", 5 * us, 1 * us, 3);
  r.Kernel("k3", 31 * us, 9 * us, 7, 3);  // gap 1 < 30, launched at 5 < 30: kernel wait 1
  r.Call("cudaLaunchKernel", 10 * us, 1 * us, 4);
  r.Kernel("k4", 100 * us, 10 * us, 7, 4);  // gap 60 >= 30, launched at 10 < 40: other 60
  r.Kernel("k5", 112 * us, 1 * us, 7, 5);   // gap 2 < 30, no launch call: kernel wait 2
  r.Kernel("k6", 200 * us, 1 * us, 8, 6);   // alone on stream 8: no gap
  const IdleTimeBreakdown idle = ComputeIdleTime(r.store(), r.Rows());
  ASSERT_EQ(idle.streams.size(), 2u);
  const StreamIdleTime& s7 = idle.streams[0];
  EXPECT_EQ(s7.stream, 7);
  EXPECT_DOUBLE_EQ(Idle(s7, IdleCategory::kHostWait), 10);
  EXPECT_DOUBLE_EQ(Idle(s7, IdleCategory::kKernelWait), 3);
  EXPECT_DOUBLE_EQ(Idle(s7, IdleCategory::kOther), 60);
  EXPECT_EQ(s7.gaps[0] + s7.gaps[1] + s7.gaps[2], 4u);
  EXPECT_EQ(idle.streams[1].stream, 8);
  EXPECT_DOUBLE_EQ(idle.streams[1].total_us(), 0);
  EXPECT_DOUBLE_EQ(idle.total_us(), 73);
}

TEST(IdleTime, TheKernelWaitThresholdIsAnOption) {
  Rank r;
  r.Kernel("k1", 0, 10 * us, 7, -1);
  r.Kernel("k2", 50 * us, 10 * us, 7, -1);  // gap 40: other at 30 µs, kernel wait at 45 µs
  EXPECT_DOUBLE_EQ(ComputeIdleTime(r.store(), r.Rows()).idle_us[static_cast<size_t>(IdleCategory::kOther)], 40);
  const IdleTimeBreakdown wide = ComputeIdleTime(r.store(), r.Rows(), IdleTimeOptions{45});
  EXPECT_DOUBLE_EQ(wide.idle_us[static_cast<size_t>(IdleCategory::kKernelWait)], 40);
}

TEST(LaunchStats, DelaysShortKernelsAndOutliers) {
  Rank r;
  r.Call("cudaLaunchKernel", 0, 5 * us, 1);
  r.Kernel("k1", 10 * us, 2 * us, 7, 1);  // cpu 5, gpu 2, delay 10 - 5 = 5: a short kernel
  r.Call("cudaLaunchKernel", 20 * us, 60 * us, 2);
  r.Kernel("k2", 300 * us, 100 * us, 7, 2);  // cpu 60 > 50: runtime outlier; delay 300 - 80 = 220 > 100
  r.Call("cudaMemcpyAsync", 100 * us, 10 * us, 3);
  r.Kernel("Memcpy HtoD (Pageable -> Device)", 115 * us, 20 * us, 7, 3);  // cpu 10, gpu 20, delay 5
  r.Call("cudaEventRecord", 500 * us, 1 * us, 4);
  r.Kernel("k4", 600 * us, 1 * us, 7, 4);  // not a launch call: left out
  const std::optional<LaunchStats> l = ComputeLaunchStats(r.store(), r.Rows());
  ASSERT_TRUE(l.has_value());
  EXPECT_EQ(l->launches, 3u);
  EXPECT_EQ(l->short_kernels, 1u);
  EXPECT_EQ(l->runtime_outliers, 1u);
  EXPECT_EQ(l->launch_delay_outliers, 1u);
  EXPECT_DOUBLE_EQ(l->launch_delay.median_us, 5);
  EXPECT_DOUBLE_EQ(l->launch_delay.p95_us, 220);
  EXPECT_DOUBLE_EQ(l->launch_delay.max_us, 220);
  EXPECT_DOUBLE_EQ(l->launch_delay.mean_us, 230.0 / 3);
  EXPECT_DOUBLE_EQ(l->cpu_duration.max_us, 60);
  EXPECT_DOUBLE_EQ(l->gpu_duration.median_us, 20);
}

TEST(LaunchStats, NoneWithoutLaunchCalls) {
  Rank r;
  r.Kernel("k1", 0, 10 * us, 7, 1);
  EXPECT_FALSE(ComputeLaunchStats(r.store(), r.Rows()).has_value());
  EXPECT_TRUE(ComputeQueueLength(r.store(), r.Rows()).empty());
}

TEST(QueueLength, LaunchesAddAndStartsRemoveOnTheKernelsStream) {
  Rank r;
  r.Call("cudaLaunchKernel", 0, 1 * us, 1);
  r.Call("cudaLaunchKernel", 1 * us, 1 * us, 2);
  r.Call("cudaLaunchKernel", 2 * us, 1 * us, 3);
  r.Kernel("k1", 2 * us, 5 * us, 7, 1);  // starts when k3 is launched: the launch counts first
  r.Kernel("k2", 10 * us, 5 * us, 7, 2);
  r.Kernel("k3", 20 * us, 5 * us, 7, 3);
  const std::vector<StreamQueueLength> q = ComputeQueueLength(r.store(), r.Rows());
  ASSERT_EQ(q.size(), 1u);
  EXPECT_EQ(q[0].stream, 7);
  ASSERT_EQ(q[0].series.size(), 6u);  // 1 2 3 2 1 0
  EXPECT_EQ(q[0].max, 3);
  EXPECT_DOUBLE_EQ(q[0].mean, 9.0 / 6);
  EXPECT_EQ(q[0].series.back().second, 0);
  EXPECT_DOUBLE_EQ(q[0].full_us, 0);
}

TEST(QueueLength, TimeAtAFullQueue) {
  Rank r;
  for (int64_t i = 0; i < kFullQueue; ++i) {
    r.Call("cudaLaunchKernel", i * us, 1, i);
    r.Kernel("k", (2000 + i) * us, 1 * us, 7, i);
  }
  const std::vector<StreamQueueLength> q = ComputeQueueLength(r.store(), r.Rows());
  ASSERT_EQ(q.size(), 1u);
  EXPECT_EQ(q[0].max, kFullQueue);
  EXPECT_DOUBLE_EQ(q[0].full_us, 2000 - (kFullQueue - 1));  // from the last launch to the first start
}

TEST(MemoryBandwidth, KindsSeriesAndSummaryAsHtaDefinesThem) {
  Rank r;
  // HtoD: 10 GB/s over [0, 10) µs and 30 GB/s over [5, 15) µs: 10, 40, 30, 0 (the 0 point left out of the summary).
  r.Copy("Memcpy HtoD (Pageable -> Device)", 0, 10 * us, 7, 1, 10);
  r.Copy("Memcpy HtoD (Pinned -> Device)", 5 * us, 10 * us, 7, 2, 30);
  // Memset of 0 µs lasts 1 µs; a copy that ends as the next begins is not counted twice (ends first): 4, 0, 6, 0.
  r.Copy("Memset (Device)", 20 * us, 0, 7, 3, 4);
  r.Copy("Memset (Device)", 21 * us, 2 * us, 8, 4, 6);
  r.Kernel("Memcpy DtoD kernel without a bandwidth", 30 * us, 1 * us, 7, 5);  // takes no part
  r.Kernel("gemm", 40 * us, 1 * us, 7, 6);
  const std::vector<MemoryBandwidthKind> k = ComputeMemoryBandwidth(r.store(), r.Rows());
  ASSERT_EQ(k.size(), 2u);
  EXPECT_EQ(k[0].kind, "Memcpy HtoD");
  ASSERT_EQ(k[0].series.size(), 4u);
  EXPECT_DOUBLE_EQ(k[0].series[1].first, 5);
  EXPECT_DOUBLE_EQ(k[0].series[1].second, 40);
  EXPECT_DOUBLE_EQ(k[0].series.back().second, 0);
  EXPECT_EQ(k[0].points, 3u);
  EXPECT_DOUBLE_EQ(k[0].mean, 80.0 / 3);
  EXPECT_DOUBLE_EQ(k[0].p50, 30);
  EXPECT_DOUBLE_EQ(k[0].p25, 20);  // linear: 10 + 0.5 * (30 - 10)
  EXPECT_DOUBLE_EQ(k[0].p75, 35);
  ASSERT_TRUE(k[0].std.has_value());
  EXPECT_NEAR(*k[0].std, 15.275252, 1e-6);
  EXPECT_EQ(k[1].kind, "Memset");
  ASSERT_EQ(k[1].series.size(), 4u);
  EXPECT_EQ(k[1].points, 2u);
  EXPECT_DOUBLE_EQ(k[1].max, 6);
  EXPECT_EQ(MemoryKernelKind("Memcpy DtoH (Device -> Pinned)"), "Memcpy DtoH");
  EXPECT_EQ(MemoryKernelKind("cudaMemcpy"), "Memcpy Unknown");
}

TEST(MemoryBandwidth, EverySeriesEndsAtZeroAndNeverGoesBelow) {
  Rank r;
  uint64_t x = 88172645463325252ull;
  auto next = [&x] { return x ^= x << 13, x ^= x >> 7, x ^= x << 17; };
  for (int64_t i = 0; i < 500; ++i)
    r.Copy(next() % 2 ? "Memcpy DtoD (Device -> Device)" : "Memset (Device)", static_cast<int64_t>(next() % 1000) * us,
           static_cast<int64_t>(next() % 50) * us, 7, i, static_cast<double>(next() % 1000) / 7);
  for (const MemoryBandwidthKind& k : ComputeMemoryBandwidth(r.store(), r.Rows())) {
    EXPECT_NEAR(k.series.back().second, 0, 1e-6) << k.kind;
    for (const auto& [t, v] : k.series) EXPECT_GE(v, -1e-6) << k.kind << " at " << t;
    EXPECT_LE(k.min, k.p25);
    EXPECT_LE(k.p25, k.p50);
    EXPECT_LE(k.p50, k.p75);
    EXPECT_LE(k.p75, k.max);
  }
}

// An operator that launches `kernels` (names) from t0 µs, one launch call and one kernel per µs.
void Linear(Rank* r, int64_t t0, const std::vector<std::string>& kernels, int64_t* corr) {
  r->Op("aten::linear", t0 * us, 10 * us);
  for (size_t i = 0; i < kernels.size(); ++i) {
    const int64_t t = t0 + 1 + static_cast<int64_t>(i);
    r->Call("cudaLaunchKernel", t * us, 500, *corr);
    r->Kernel(kernels[i], (t + 100) * us, 500, 7, (*corr)++);
  }
}

TEST(KernelSequences, CountsEachShallowestOperatorsPattern) {
  Rank r;
  int64_t corr = 1;
  r.Op("Module.forward", 0, 1000 * us);  // encloses every aten::linear: the linears are the shallowest matches
  Linear(&r, 10, {"gemm", "bias", "relu"}, &corr);
  Linear(&r, 30, {"gemm", "bias", "relu"}, &corr);
  Linear(&r, 50, {"gemm", "bias", "gelu"}, &corr);
  Linear(&r, 70, {"gemm", "bias"}, &corr);         // two kernels: under min_pattern_len
  r.Op("aten::linear_backward", 80 * us, 5 * us);  // nested in no linear, and at the same depth: a root, no kernel
  KernelSequenceOptions o;
  o.operator_name = "aten::linear";
  const std::vector<KernelSequence> s = FrequentKernelSequences(r.store(), r.Rows(), o);
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(s[0].names, (std::vector<std::string>{"aten::linear", "gemm", "bias", "relu"}));
  EXPECT_EQ(s[0].count, 2u);
  EXPECT_DOUBLE_EQ(s[0].gpu_us, 3.0);  // 2 x 3 kernels of 0.5 µs
  EXPECT_DOUBLE_EQ(s[0].cpu_us, 20);
  EXPECT_EQ(s[1].names.back(), "gelu");
  EXPECT_EQ(s[1].count, 1u);
  o.operator_name = "Module.forward";  // the outer operator: one pattern of all eleven kernels
  const std::vector<KernelSequence> outer = FrequentKernelSequences(r.store(), r.Rows(), o);
  ASSERT_EQ(outer.size(), 1u);
  EXPECT_EQ(outer[0].names.size(), 12u);
}

}  // namespace
}  // namespace strata
