// Tests of the multi-rank critical path (analysis/critical_path.h): constructed jobs whose path is known
// (the late rank's compute is on it, the others' wait is not; a kernel-bound step; a step with no collective; a
// kernel waiting on a collective of another stream), synthetic GPU jobs with a slow rank (16 and 256 ranks, tensor
// and pipeline layouts), every path tiling its step with its segments merged and entering each collective on it at
// its last arrival, the merge itself, and the public multi-rank traces.
#include "analysis/critical_path.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <set>
#include <unordered_map>

#include "diag_test_util.h"
#include "model/job_model.h"
#include "synth/generator.h"
#include "test_paths.h"

namespace strata {
namespace {

using namespace diagtest;

struct PathOf {
  TraceStore store;
  std::vector<SliceRows> rows;
  model::JobModel job;
  std::optional<CriticalPath> path;
};

std::unique_ptr<PathOf> ComputeFor(TraceStore store, std::optional<int64_t> step = std::nullopt) {
  auto p = std::make_unique<PathOf>();
  p->store = std::move(store);
  p->rows = SlicesByRank(p->store);
  p->job = model::BuildJobModel(p->store, p->rows);
  if (!step) step = MedianStep(p->job, p->store.ranks.size());
  if (step) p->path = ComputeCriticalPath(p->store, p->rows, p->job, *step);
  return p;
}

bool SameRankAndKind(const PathSegment& a, const PathSegment& b) { return a.rank == b.rank && a.kind == b.kind; }
bool Host(PathKind k) { return k == PathKind::kCpu || k == PathKind::kLaunch || k == PathKind::kIdle; }

// The segments are in time order, adjacent, positive, and tile [start, end] exactly; they are merged (no two
// neighbours of the same rank, kind and name; no two tiny neighbours of the same rank and kind).
void ExpectTiles(const CriticalPath& path) {
  ASSERT_FALSE(path.segments.empty());
  const double min_width = kPathMinSegmentShare * static_cast<double>(path.end_ns - path.start_ns);
  const auto tiny = [&](const PathSegment& s) { return static_cast<double>(s.dur_ns) < min_width; };
  int64_t t = path.start_ns, sum = 0;
  const PathSegment* prev = nullptr;
  for (const PathSegment& s : path.segments) {
    EXPECT_EQ(s.start_ns, t) << PathKindName(s.kind) << " " << s.name;
    EXPECT_GT(s.dur_ns, 0);
    if (prev && SameRankAndKind(*prev, s)) {
      EXPECT_NE(prev->name, s.name) << "unmerged at " << s.start_ns;
      EXPECT_FALSE(tiny(*prev) && tiny(s)) << "unmerged tiny segments at " << s.start_ns;
    }
    if (prev && prev->rank == s.rank && Host(prev->kind) && Host(s.kind)) {
      EXPECT_FALSE(tiny(*prev) && tiny(s)) << "unmerged tiny host segments at " << s.start_ns;
    }
    if (!s.parts.empty()) {
      int64_t parts = 0;
      for (const PathPart& q : s.parts) parts += q.dur_ns;
      EXPECT_EQ(parts, s.dur_ns) << "a merged segment's parts sum to it";
      EXPECT_GT(s.parts.size(), 1u);
    }
    prev = &s;
    t = s.start_ns + s.dur_ns;
    sum += s.dur_ns;
  }
  EXPECT_EQ(t, path.end_ns);
  const int64_t span = path.end_ns - path.start_ns;
  EXPECT_LE(std::abs(sum - span), span / 100);  // the contract's 1 %
}

// Time of the path on `rank` of `kind` (any kind when nullopt) within [a, b) of the step (ns from its start).
int64_t TimeOn(const CriticalPath& path, int32_t rank, std::optional<PathKind> kind, int64_t a = 0,
               int64_t b = INT64_MAX) {
  int64_t sum = 0;
  for (const PathSegment& s : path.segments) {
    if (s.rank != rank) continue;
    if (kind && !s.parts.empty()) {  // a merged run of several kinds: its part of this kind (whole runs only)
      for (const PathPart& q : s.parts)
        if (q.kind == *kind && s.start_ns - path.start_ns >= a && s.start_ns - path.start_ns + s.dur_ns <= b)
          sum += q.dur_ns;
      continue;
    }
    if (kind && s.kind != *kind) continue;
    const int64_t lo = std::max(s.start_ns - path.start_ns, a), hi = std::min(s.start_ns - path.start_ns + s.dur_ns, b);
    sum += std::max<int64_t>(0, hi - lo);
  }
  return sum;
}

// The aligned start and end of rank index r's call of matched collective `m`.
std::pair<int64_t, int64_t> AlignedCall(const model::JobModel& job, const model::MatchedCollective& m, size_t r) {
  const model::CollectiveCall& c = job.collectives.calls[r][static_cast<size_t>(m.call[r])];
  const int64_t off = r < job.clocks.offset_ns.size() ? job.clocks.offset_ns[r] : 0;
  return {c.start_ns - off, c.end_ns - off};
}

// A collective is a join: each `collective` segment of the path (rank r) lies in a complete instance whose call on
// r covers its start, starts at that instance's last arrival (or r's own start when r arrived last: the wait is
// not on the path), and follows a segment of a rank that arrived last. Returns the collective segments checked.
size_t ExpectCollectivesEnteredAtTheLastArrival(const PathOf& p, const CriticalPath& path) {
  std::unordered_map<int32_t, size_t> index;  // rank number -> rank index
  for (size_t i = 0; i < p.store.ranks.size(); ++i) index[p.store.ranks[i].rank] = i;
  size_t checked = 0;
  for (size_t i = 1; i < path.segments.size(); ++i) {
    const PathSegment& s = path.segments[i];
    if (s.kind != PathKind::kCollective) continue;
    const size_t r = index.at(s.rank);
    bool entered = false;
    for (const model::MatchedCollective& m : p.job.collectives.matched) {
      if (!m.complete() || m.present < 2 || r >= m.call.size() || m.call[r] < 0) continue;
      const auto [own, end] = AlignedCall(p.job, m, r);
      if (s.start_ns < own || s.start_ns >= end) continue;
      int64_t last = INT64_MIN;
      std::set<int32_t> lasts;  // the ranks that arrived last
      for (size_t q = 0; q < m.call.size(); ++q) {
        if (m.call[q] < 0) continue;
        const int64_t a = AlignedCall(p.job, m, q).first;
        if (a > last) lasts.clear(), last = a;
        if (a == last) lasts.insert(p.store.ranks[q].rank);
      }
      const int32_t before = path.segments[i - 1].rank;
      if (s.start_ns == std::max(last, own) && (last > own ? lasts.count(before) > 0 : before == s.rank))
        entered = true;
    }
    EXPECT_TRUE(entered) << "collective " << s.name << " on rank " << s.rank << " at "
                         << (s.start_ns - path.start_ns) / 1000 << " µs of the step is not entered at its last arrival";
    ++checked;
  }
  return checked;
}

// Two ranks, three steps, one 10 ms all_reduce per step: rank 1 computes 60 ms before it, rank 0 30 ms.
DdpSpec LateRankOneSpec() {
  DdpSpec spec;
  spec.ranks = 2;
  spec.steps = 3;
  spec.transfer = {10 * kMs};
  spec.plan = [](int r, int) { return BasicStep(r == 1 ? 60 * kMs : 30 * kMs); };
  return spec;
}

TEST(CriticalPath, TwoRanksLateComputeIsOnThePathTheWaitIsNot) {
  DdpSpec spec = LateRankOneSpec();
  spec.clock_offset = {0, 7 * kMs};
  auto p = ComputeFor(LoadDdp(spec));
  ASSERT_TRUE(p->path);
  const CriticalPath& path = *p->path;
  ExpectTiles(path);
  EXPECT_EQ(path.end_ns - path.start_ns, 80 * kMs);  // 60 ms late compute + 10 ms transfer + 10 ms tail
  EXPECT_EQ(path.rank_changes, 1u);
  EXPECT_EQ(ExpectCollectivesEnteredAtTheLastArrival(*p, path), 1u);
  EXPECT_EQ(TimeOn(path, 1, PathKind::kCpu), 60 * kMs);      // rank 1's whole compute
  EXPECT_EQ(TimeOn(path, 0, std::nullopt, 0, 60 * kMs), 0);  // rank 0 waited then: not on the path
  EXPECT_EQ(TimeOn(path, 0, PathKind::kCollective), 10 * kMs);
  const std::vector<PathContributor> parts = PathContributors(path);
  ASSERT_FALSE(parts.empty());
  EXPECT_EQ(parts[0].rank, 1);
  EXPECT_EQ(parts[0].kind, PathKind::kCpu);
  EXPECT_NEAR(parts[0].share, 0.75, 1e-9);
  EXPECT_EQ(parts[0].top_name, "aten::conv2d");
}

// Four ranks, two collectives: rank 2 is late at the first, rank 3 at the second; the path runs through
// rank 2's first compute phase and rank 3's second, jumping at each collective.
TEST(CriticalPath, FourRanksFollowsEachLateArrival) {
  DdpSpec spec;
  spec.ranks = 4;
  spec.steps = 3;
  spec.transfer = {5 * kMs, 5 * kMs};
  spec.clock_offset = {0, 5 * kMs, -3 * kMs, 2 * kSec};
  spec.plan = [](int r, int) {
    RankStep st;
    st.segs.push_back({Op("aten::conv2d", r == 2 ? 50 * kMs : 20 * kMs)});
    st.segs.push_back({Op("aten::mm", r == 3 ? 40 * kMs : 15 * kMs)});
    st.tail = {Op("Optimizer.step#SGD.step", 10 * kMs)};
    return st;
  };
  auto p = ComputeFor(LoadDdp(spec));
  ASSERT_TRUE(p->path);
  const CriticalPath& path = *p->path;
  ExpectTiles(path);
  EXPECT_EQ(path.end_ns - path.start_ns, 110 * kMs);  // 50 + 5 + 40 + 5 + 10
  EXPECT_EQ(TimeOn(path, 2, PathKind::kCpu), 50 * kMs);
  EXPECT_EQ(TimeOn(path, 3, PathKind::kCpu), 40 * kMs);
  EXPECT_EQ(TimeOn(path, 1, std::nullopt), 0);                 // never late: never on the path
  EXPECT_EQ(TimeOn(path, 3, PathKind::kCpu, 0, 55 * kMs), 0);  // rank 3's first phase was not critical
  EXPECT_GE(path.rank_changes, 2u);
  EXPECT_EQ(ExpectCollectivesEnteredAtTheLastArrival(*p, path), 2u);
}

// GPU style, kernel-bound: the host runs ahead, the late rank's kernels are the path.
TEST(CriticalPath, KernelBoundStepIsTheLateRanksKernels) {
  DdpSpec spec;
  spec.ranks = 2;
  spec.steps = 3;
  spec.gpu = true;
  spec.transfer = {4 * kMs};
  spec.plan = [](int r, int) {
    RankStep st;
    const int64_t k = r == 1 ? 30 * kMs : 15 * kMs;
    st.segs.push_back({Op("gemm_kernel_a", k, "kernel"), Op("gemm_kernel_b", k, "kernel")});
    return st;
  };
  auto p = ComputeFor(LoadDdp(spec));
  ASSERT_TRUE(p->path);
  const CriticalPath& path = *p->path;
  ExpectTiles(path);
  const int64_t span = path.end_ns - path.start_ns;
  EXPECT_EQ(TimeOn(path, 1, PathKind::kKernel), 60 * kMs);
  EXPECT_EQ(TimeOn(path, 0, PathKind::kKernel), 0);
  EXPECT_EQ(TimeOn(path, 0, PathKind::kCollective), 4 * kMs);
  EXPECT_EQ(ExpectCollectivesEnteredAtTheLastArrival(*p, path), 1u);
  EXPECT_GT(static_cast<double>(TimeOn(path, 1, PathKind::kKernel)) / static_cast<double>(span), 0.9);
  const std::vector<PathContributor> parts = PathContributors(path);
  ASSERT_FALSE(parts.empty());
  EXPECT_EQ(parts[0].rank, 1);
  EXPECT_EQ(parts[0].kind, PathKind::kKernel);
}

// GPU, two streams, one step: on each rank a compute kernel on stream 7, then the all-reduce kernel on stream 20,
// which starts when the compute ends (NCCL's stream waits on the compute stream's event), then an optimizer kernel
// on stream 7, which starts when the all-reduce ends; every kernel was launched long before it ran. Rank 1 computes
// 30 ms, rank 0 10 ms, and both end the step together, so the walk starts on rank 0. The optimizer kernel waited for
// the all-reduce, the all-reduce for rank 1's arrival, and rank 1's all-reduce for its compute: the path is rank
// 1's compute, then rank 0's transfer and optimizer. Rank 0's 20 ms wait in the all-reduce is not on the path (nor
// is it idle time, as it was when a kernel's wait on another stream read as its stream's idle gap).
TEST(CriticalPath, KernelWaitingOnAnotherStreamFollowsIt) {
  const int64_t transfer = 5 * kMs, opt = 2 * kMs, late_arrival = 30 * kUs + 30 * kMs;
  std::vector<std::string> jsons;
  for (int r = 0; r < 2; ++r) {
    const int64_t pid = 1000 + r, b = kBase, arrival = b + 30 * kUs + (r == 1 ? 30 * kMs : 10 * kMs);
    const int64_t reduced = b + late_arrival + transfer, end = reduced + opt + 10 * kUs;
    const std::vector<Event> ev = {
        {"ProfilerStep#1", "user_annotation", b, end - b, pid, 1},
        {"aten::mm", "cpu_op", b, 40 * kUs, pid, 1},
        {"cudaLaunchKernel", "cuda_runtime", b + 10 * kUs, 20 * kUs, pid, 1, -1, 1},
        {"gemm_kernel", "kernel", b + 30 * kUs, arrival - (b + 30 * kUs), 0, 7, 7, 1},
        {"c10d::allreduce_", "cpu_op", b + 50 * kUs, 40 * kUs, pid, 1},
        {"cudaLaunchKernel", "cuda_runtime", b + 60 * kUs, 20 * kUs, pid, 1, -1, 2},
        {kNcclKernel, "kernel", arrival, reduced - arrival, 0, 20, 20, 2},
        {"aten::add_", "cpu_op", b + 100 * kUs, 40 * kUs, pid, 1},
        {"cudaLaunchKernel", "cuda_runtime", b + 110 * kUs, 20 * kUs, pid, 1, -1, 3},
        {"optimizer_kernel", "kernel", reduced, opt, 0, 7, 7, 3},
        {"cudaDeviceSynchronize", "cuda_runtime", b + 150 * kUs, reduced + opt + 5 * kUs - (b + 150 * kUs), pid, 1},
    };
    jsons.push_back(RankJson(ev, r, 2, Style::kKineto));
  }
  auto p = ComputeFor(LoadRankJsons(jsons));
  ASSERT_TRUE(p->path);
  const CriticalPath& path = *p->path;
  ExpectTiles(path);
  EXPECT_EQ(path.end_ns - path.start_ns, late_arrival + transfer + opt + 10 * kUs);
  EXPECT_EQ(path.rank_changes, 1u);
  EXPECT_EQ(ExpectCollectivesEnteredAtTheLastArrival(*p, path), 1u);
  EXPECT_EQ(TimeOn(path, 1, PathKind::kKernel), 30 * kMs);
  EXPECT_EQ(TimeOn(path, 1, std::nullopt), late_arrival);  // its launch, then its compute
  EXPECT_EQ(TimeOn(path, 0, std::nullopt, 0, late_arrival), 0);
  EXPECT_EQ(TimeOn(path, 0, PathKind::kCollective), transfer);
  EXPECT_EQ(TimeOn(path, 0, PathKind::kKernel), opt);
  EXPECT_EQ(TimeOn(path, 0, PathKind::kIdle), 5 * kUs);  // after the synchronize returned
}

// A synthetic GPU job (strata synth: compute on stream 7, each collective kind on its own stream, every rank's host
// running ahead of its device) with the GEMMs of `late` slowed by 20 % of a step; the path of its median step.
std::unique_ptr<PathOf> SynthPath(int64_t ranks, int64_t late, int64_t pp = 0, int64_t tp = 0) {
  testing::TempDir dir;
  synth::SynthOptions o;
  o.out_dir = dir.path();
  o.ranks = ranks;
  o.pp = pp;
  o.tp = tp;
  o.steps = 3;
  o.layers = 4;
  o.progress = 0;
  o.fault.name = "slow_compute";
  o.fault.rank = late;
  if (const Status st = synth::Generate(o); !st.ok()) {
    ADD_FAILURE() << st.message();
    return nullptr;
  }
  auto job = LoadJob({dir.path()}, LoadOptions{});
  if (!job.ok()) {
    ADD_FAILURE() << job.error();
    return nullptr;
  }
  return ComputeFor(std::move(job.value().store));
}

// The path of a synthetic job with a slow rank holds that rank's compute: most of the step's time on the path is
// the late rank's, and every collective on the path is entered at the rank that arrived last (the path jumps
// there instead of idling through the wait). Returns the late rank's share of the path.
double ExpectPathHoldsTheLateRank(const PathOf& p, int32_t late, const char* what) {
  if (!p.path) {
    ADD_FAILURE() << what << ": no path";
    return 0;
  }
  const CriticalPath& path = *p.path;
  ExpectTiles(path);
  const double span = static_cast<double>(path.end_ns - path.start_ns);
  const double share = static_cast<double>(TimeOn(path, late, std::nullopt)) / span;
  int64_t idle = 0;
  for (const RankInfo& r : p.store.ranks) idle += TimeOn(path, r.rank, PathKind::kIdle);
  EXPECT_GE(ExpectCollectivesEnteredAtTheLastArrival(p, path), 1u) << what;
  EXPECT_GE(path.rank_changes, 1u) << what;
  EXPECT_LT(static_cast<double>(idle) / span, 0.05) << what;
  const std::vector<PathContributor> parts = PathContributors(path);
  EXPECT_EQ(parts.at(0).rank, late) << what;
  std::printf("[ info ] %s: step %lld, %.1f ms, %zu rank changes: %.1f %% of the path on late rank %d, %.1f %% idle\n",
              what, static_cast<long long>(path.step), span / 1e6, path.rank_changes, 100 * share, late,
              100 * static_cast<double>(idle) / span);
  return share;
}

// Issue 46: at f071f68 the path of `strata synth --ranks 16 --fault slow_compute --fault-rank 5` stayed on rank 10
// (76.7 % kernel, 23.2 % idle through the DP all-reduce), and at 256 ranks on rank 191 (the straggler is 177).
TEST(CriticalPath, SynthSlowRankHoldsThePathAt16And256Ranks) {
  for (const auto& [ranks, late] : {std::pair<int64_t, int32_t>{16, 5}, {256, 177}}) {
    auto p = SynthPath(ranks, late);
    ASSERT_TRUE(p);
    const std::string what = "synth " + std::to_string(ranks) + " ranks";
    EXPECT_GT(ExpectPathHoldsTheLateRank(*p, late, what.c_str()), 0.7) << what;
  }
}

// Tensor- and pipeline-parallel layouts: the path crosses the TP all-reduces and the pipeline's send/recv (each a
// join of its group) and still spends most of the step on the slow rank.
TEST(CriticalPath, SynthTensorAndPipelineLayoutsPathThroughTheSlowRank) {
  struct Layout {
    int64_t pp, tp;
    const char* what;
  };
  for (const Layout& l : {Layout{1, 4, "synth 16 ranks tp 4"}, Layout{4, 1, "synth 16 ranks pp 4"},
                          Layout{2, 2, "synth 16 ranks pp 2 tp 2"}}) {
    auto p = SynthPath(16, 5, l.pp, l.tp);
    ASSERT_TRUE(p);
    EXPECT_GT(ExpectPathHoldsTheLateRank(*p, 5, l.what), 0.5) << l.what;
  }
}

// Launch-bound: the kernels are short and the host is slow to launch them; the path goes through the host.
TEST(CriticalPath, LaunchBoundStepGoesThroughTheHost) {
  DdpSpec spec;
  spec.ranks = 2;
  spec.steps = 3;
  spec.gpu = true;
  spec.transfer = {1 * kMs};
  spec.plan = [](int, int) {
    RankStep st;
    std::vector<Item> seg;
    for (int i = 0; i < 20; ++i) {
      seg.push_back(Op("aten::slow_host_op", 2 * kMs));
      seg.push_back(Op("tiny_kernel", 5 * kUs, "kernel"));
    }
    st.segs.push_back(seg);
    return st;
  };
  auto p = ComputeFor(LoadDdp(spec));
  ASSERT_TRUE(p->path);
  ExpectTiles(*p->path);
  int64_t cpu = 0;
  for (const PathSegment& s : p->path->segments)
    if (s.kind == PathKind::kCpu) cpu += s.dur_ns;
  EXPECT_GT(static_cast<double>(cpu) / static_cast<double>(p->path->end_ns - p->path->start_ns), 0.9);
}

// No collective: the path stays on the rank that ends last.
TEST(CriticalPath, StepWithoutCollectiveStaysOnOneRank) {
  DdpSpec spec;
  spec.ranks = 2;
  spec.steps = 1;  // one step: without collectives the ranks' later steps start apart (no common instant)
  spec.plan = [](int r, int) {
    RankStep st;
    st.tail = {Op("aten::conv2d", 20 * kMs), Gap(2 * kMs), Op("aten::mm", r == 1 ? 30 * kMs : 10 * kMs)};
    return st;
  };
  auto p = ComputeFor(LoadDdp(spec));
  ASSERT_TRUE(p->path);
  const CriticalPath& path = *p->path;
  ExpectTiles(path);
  EXPECT_EQ(path.rank_changes, 0u);
  EXPECT_EQ(TimeOn(path, 1, std::nullopt), path.end_ns - path.start_ns);
  EXPECT_EQ(TimeOn(path, 1, PathKind::kCpu), 50 * kMs);
  EXPECT_EQ(TimeOn(path, 1, PathKind::kIdle), 2 * kMs);
}

// The late rank runs 200 ops of 10 and 5 µs (below 0.1 % of the ~52 ms step) in turn before the collective:
// unmerged they would be 200 segments on the path; merged they are one, named by the 10 µs op that holds 2/3
// of its time, and rank 1's cpu time is unchanged.
TEST(CriticalPath, TinySegmentsOfOneRankAndKindMerge) {
  DdpSpec spec = LateRankOneSpec();
  spec.plan = [](int r, int) {
    std::vector<Item> tiny;
    for (int i = 0; r == 1 && i < 100; ++i) {
      tiny.push_back(Op("aten::add", 10 * kUs));
      tiny.push_back(Op("aten::mul", 5 * kUs));
    }
    return BasicStep(30 * kMs, tiny);
  };
  auto p = ComputeFor(LoadDdp(spec));
  ASSERT_TRUE(p->path);
  const CriticalPath& path = *p->path;
  ExpectTiles(path);
  EXPECT_LT(path.segments.size(), 20u);
  EXPECT_EQ(TimeOn(path, 1, PathKind::kCpu), 30 * kMs + 1500 * kUs);
  int64_t add = 0, mul = 0;
  for (const PathSegment& s : path.segments) {
    if (s.name == "aten::add") add += s.dur_ns;
    if (s.name == "aten::mul") mul += s.dur_ns;
  }
  EXPECT_EQ(add, 1500 * kUs);
  EXPECT_EQ(mul, 0);
}

// The text's names come from the segments before merging. Rank 1 computes aten::conv2d for 1.5 ms, then 100
// aten::slice (11 µs) and aten::mul (10 µs) in turn, all tiny on a ~14 ms step: merged, they are one 2.1 ms
// segment named aten::slice, longer than conv2d's; yet conv2d holds most of rank 1's cpu time (1.5 ms against
// slice's 1.1 ms), and the contributors say so.
TEST(CriticalPath, ContributorsNameWhatHeldTheTimeBeforeMerging) {
  DdpSpec spec = LateRankOneSpec();
  spec.plan = [](int r, int) {
    RankStep st;
    std::vector<Item> seg = {Op("aten::conv2d", r == 1 ? 1500 * kUs : 500 * kUs)};
    for (int i = 0; r == 1 && i < 100; ++i) {
      seg.push_back(Op("aten::slice", 11 * kUs));
      seg.push_back(Op("aten::mul", 10 * kUs));
    }
    st.segs.push_back(std::move(seg));
    return st;
  };
  auto p = ComputeFor(LoadDdp(spec));
  ASSERT_TRUE(p->path);
  const CriticalPath& path = *p->path;
  ExpectTiles(path);
  const auto top_of = [](const std::vector<PathContributor>& v) {
    for (const PathContributor& c : v)
      if (c.rank == 1 && c.kind == PathKind::kCpu) return c.top_name;
    return std::string();
  };
  EXPECT_EQ(top_of(PathContributors(path)), "aten::conv2d");
  CriticalPath merged_only = path;
  merged_only.contributors.clear();
  EXPECT_EQ(top_of(PathContributors(merged_only)), "aten::slice") << "the merged segments alone name the run";
}

// The merge on constructed segments of a 100 ms step (tiny: below 100 µs): touching same-name segments join
// (within 1 µs), a run of tiny ones takes its main name, and a kind or rank change or a wide segment ends a run.
TEST(CriticalPath, MergePathSegmentsKeepsTheTilingAndTotals) {
  const int64_t step = 100 * kMs;
  std::vector<PathSegment> in;
  int64_t t = 0;
  const auto add = [&](int32_t rank, PathKind kind, std::string name, int64_t dur, int64_t gap = 0) {
    in.push_back({rank, kind, std::move(name), t + gap, dur - gap});
    t += dur;
  };
  add(0, PathKind::kCpu, "a", 40 * kMs);
  add(0, PathKind::kCpu, "a", 10 * kMs, 1 * kUs);  // touches within 1 µs: joins the one before
  for (int i = 0; i < 50; ++i) {                   // 50 tiny pairs: one "b" segment (b holds 3/4)
    add(0, PathKind::kCpu, "b", 30 * kUs);
    add(0, PathKind::kCpu, "c", 10 * kUs);
  }
  add(0, PathKind::kLaunch, "cudaLaunchKernel", 5 * kUs);  // another kind: its own segment
  add(0, PathKind::kCpu, "d", 20 * kUs);
  add(1, PathKind::kCpu, "d", 20 * kUs);  // another rank: its own segment
  add(1, PathKind::kCpu, "e", 50 * kMs - 2 * kMs - 45 * kUs);
  ASSERT_EQ(t, step);
  const std::vector<PathSegment> out = MergePathSegments(in, step);
  ASSERT_EQ(out.size(), 5u);
  const std::vector<std::pair<std::string, int64_t>> want = {
      {"a", 50 * kMs}, {"b", 2 * kMs}, {"d", 25 * kUs}, {"d", 20 * kUs}, {"e", 50 * kMs - 2 * kMs - 45 * kUs}};
  int64_t end = 0;
  for (size_t i = 0; i < out.size(); ++i) {
    EXPECT_EQ(out[i].name, want[i].first);
    EXPECT_EQ(out[i].dur_ns, want[i].second) << out[i].name;
    EXPECT_EQ(out[i].start_ns, end);
    end = out[i].start_ns + out[i].dur_ns;
  }
  EXPECT_EQ(end, step);
  EXPECT_EQ(out[1].kind, PathKind::kCpu);
  EXPECT_TRUE(out[1].parts.empty()) << "one kind: no parts";
  // The tiny launch and the tiny cpu op after it (rank 0): one cpu segment, its parts by kind.
  EXPECT_EQ(out[2].kind, PathKind::kCpu);
  ASSERT_EQ(out[2].parts.size(), 2u);
  EXPECT_EQ(out[2].parts[0].kind, PathKind::kCpu);
  EXPECT_EQ(out[2].parts[0].name, "d");
  EXPECT_EQ(out[2].parts[0].dur_ns, 20 * kUs);
  EXPECT_EQ(out[2].parts[1].kind, PathKind::kLaunch);
  EXPECT_EQ(out[2].parts[1].name, "cudaLaunchKernel");
  EXPECT_EQ(out[2].parts[1].dur_ns, 5 * kUs);
  EXPECT_EQ(out[3].rank, 1);
  EXPECT_TRUE(out[3].parts.empty());
}

// A loop's short ops between its kernel launches (cpu, launch, cpu, launch, ... each a few µs, with a gap now
// and then) make a run of tiny host segments of mixed kinds: merged into one segment of the kind holding most of
// the time, each kind's time and main name in its parts; the time by kind is kept, a wide segment or another rank
// ends the run, and a kernel (not a host kind) is never folded in.
TEST(CriticalPath, TinyHostSegmentsOfMixedKindsMergeWithTheirParts) {
  const int64_t step = 100 * kMs;  // tiny: below 100 µs
  std::vector<PathSegment> in;
  int64_t t = 0;
  const auto add = [&](int32_t rank, PathKind kind, std::string name, int64_t dur) {
    in.push_back({rank, kind, std::move(name), t, dur});
    t += dur;
  };
  add(0, PathKind::kCpu, "wide", 40 * kMs);
  for (int i = 0; i < 100; ++i) {
    add(0, PathKind::kCpu, i % 2 ? "permute" : "index", 30 * kUs);
    add(0, PathKind::kLaunch, "cudaLaunchKernel", 10 * kUs);
    if (i % 10 == 0) add(0, PathKind::kIdle, "", 5 * kUs);
  }
  add(0, PathKind::kKernel, "k", 50 * kUs);  // tiny, but the device's: its own segment
  add(0, PathKind::kCpu, "after", 50 * kUs);
  add(1, PathKind::kLaunch, "cudaLaunchKernel", 10 * kUs);  // another rank
  add(1, PathKind::kCpu, "rest", step - t);
  const std::vector<PathSegment> out = MergePathSegments(in, step);
  ASSERT_EQ(out.size(), 6u);
  const PathSegment& run = out[1];
  EXPECT_EQ(run.rank, 0);
  EXPECT_EQ(run.kind, PathKind::kCpu);
  EXPECT_EQ(run.name, "index") << "ties between names: the first in byte order";
  EXPECT_EQ(run.start_ns, 40 * kMs);
  EXPECT_EQ(run.dur_ns, 100 * 40 * kUs + 10 * 5 * kUs);
  ASSERT_EQ(run.parts.size(), 3u);
  EXPECT_EQ(run.parts[0].kind, PathKind::kCpu);
  EXPECT_EQ(run.parts[0].dur_ns, 3000 * kUs);
  EXPECT_EQ(run.parts[1].kind, PathKind::kLaunch);
  EXPECT_EQ(run.parts[1].dur_ns, 1000 * kUs);
  EXPECT_EQ(run.parts[2].kind, PathKind::kIdle);
  EXPECT_EQ(run.parts[2].dur_ns, 50 * kUs);
  EXPECT_EQ(out[2].kind, PathKind::kKernel);
  EXPECT_EQ(out[3].name, "after");
  EXPECT_EQ(out[4].rank, 1);
  EXPECT_EQ(out[4].kind, PathKind::kLaunch);
  // The text's time by (rank, kind) counts the parts: nothing moved between kinds.
  CriticalPath path;
  path.start_ns = 0;
  path.end_ns = step;
  path.segments = out;
  int64_t launch0 = 0;
  for (const PathContributor& c : PathContributors(path))
    if (c.rank == 0 && c.kind == PathKind::kLaunch) launch0 = c.dur_ns;
  EXPECT_EQ(launch0, 1000 * kUs);
}

TEST(CriticalPath, MedianStepIsTheMedianSpan) {
  DdpSpec spec;
  spec.ranks = 2;
  spec.steps = 5;
  spec.first_step = 10;
  spec.transfer = {1 * kMs};
  const int64_t compute[] = {40, 10, 30, 20, 50};
  spec.plan = [&](int, int s) { return BasicStep(compute[s] * kMs); };
  auto p = ComputeFor(LoadDdp(spec));
  ASSERT_TRUE(p->path);
  EXPECT_EQ(p->path->step, 12);  // spans 40, 10, 30, 20, 50 ms (+ the rest): the median is the third
}

TEST(CriticalPath, DiagnoseReportsTheMedianStepsPath) {
  const diagnosis::DiagnosisResult result = DiagnoseDdp(LateRankOneSpec());
  ASSERT_TRUE(result.critical_path);
  ExpectTiles(*result.critical_path);
  EXPECT_EQ(PathContributors(*result.critical_path)[0].rank, 1);
}

// Real PyTorch DDP jobs (tests/data/ddp, gloo on CPU): with rank 1's compute slowed by 30 %, the path's largest
// part is rank 1's host work; with a slow loader or GC pauses most of the path is on the fault rank; on the
// clean 4-rank job every path still tiles its step.
TEST(CriticalPath, LabJobSlowComputeRankIsOnThePath) {
  const std::string dir = std::string(::strata::test_paths::kSourceDir) + "/tests/data/ddp/slow-compute-rank1";
  auto job = LoadJob({dir}, LoadOptions{});
  ASSERT_TRUE(job.ok()) << job.error();
  auto p = ComputeFor(std::move(job.value().store));
  ASSERT_TRUE(p->path);
  ExpectTiles(*p->path);
  const std::vector<PathContributor> parts = PathContributors(*p->path);
  ASSERT_FALSE(parts.empty());
  EXPECT_EQ(parts[0].rank, 1);
  EXPECT_EQ(parts[0].kind, PathKind::kCpu);
  EXPECT_GE(p->path->rank_changes, 1u);
  EXPECT_GE(ExpectCollectivesEnteredAtTheLastArrival(*p, *p->path), 1u);
  for (const PathContributor& c : parts)
    std::printf("[ info ] slow-compute-rank1 step %lld: %5.1f %% rank %d %s (%s)\n",
                static_cast<long long>(p->path->step), 100 * c.share, c.rank, std::string(PathKindName(c.kind)).c_str(),
                c.top_name.substr(0, 60).c_str());
  // The other persistent lab faults: a slow data loader on rank 0, GC pauses on rank 1. The fault rank holds
  // most of the median step's path (91 % and 79 % measured 2026-12-03, the rest the collective's transfer).
  for (const auto& [name, rank] :
       {std::pair<const char*, int32_t>{"dataloader-stall-rank0", 0}, {"gc-pause-rank1", 1}}) {
    auto other = LoadJob({std::string(::strata::test_paths::kSourceDir) + "/tests/data/ddp/" + name}, LoadOptions{});
    ASSERT_TRUE(other.ok()) << other.error();
    auto o = ComputeFor(std::move(other.value().store));
    ASSERT_TRUE(o->path) << name;
    ExpectTiles(*o->path);
    const int64_t span = o->path->end_ns - o->path->start_ns;
    int64_t on_fault_rank = 0;
    for (const PathSegment& s : o->path->segments)
      if (s.rank == rank) on_fault_rank += s.dur_ns;
    EXPECT_GE(on_fault_rank, span * 3 / 4) << name;
  }
  auto clean = LoadJob({std::string(::strata::test_paths::kSourceDir) + "/tests/data/ddp/clean-4rank"}, LoadOptions{});
  ASSERT_TRUE(clean.ok()) << clean.error();
  auto q = ComputeFor(std::move(clean.value().store));
  for (int64_t step : q->job.steps.steps) {
    auto path = ComputeCriticalPath(q->store, q->rows, q->job, step);
    ASSERT_TRUE(path);
    ExpectTiles(*path);
    ExpectCollectivesEnteredAtTheLastArrival(*q, *path);
  }
}

// The bundled example (real DDP, gloo: rank 1 runs 234 ms of extra compute per step before its backward).
// Rank 0's loop thread waits inside its forward_backward op while a first all_reduce, on a gloo thread, runs
// 200 ms; a later, shorter call on another thread starts after it and ends first. The walk must find the long
// call that covers the instant (not the last one to start) and hand the wait to rank 1's late compute: rank
// 1's host work is most of the step, rank 0's forward_backward self time is not.
TEST(CriticalPath, ExampleWaitInsideTheLoopOpGoesToTheLateRank) {
  auto job =
      LoadJob({std::string(::strata::test_paths::kSourceDir) + "/examples/ddp-2rank-slow-compute"}, LoadOptions{});
  ASSERT_TRUE(job.ok()) << job.error();
  auto p = ComputeFor(std::move(job.value().store));
  ASSERT_TRUE(p->path);
  const CriticalPath& path = *p->path;
  ExpectTiles(path);
  const int64_t span = path.end_ns - path.start_ns;
  EXPECT_GE(path.rank_changes, 1u);
  EXPECT_GE(ExpectCollectivesEnteredAtTheLastArrival(*p, path), 1u);
  EXPECT_GE(TimeOn(path, 1, PathKind::kCpu), span / 2);  // rank 1's extra compute is 234 of ~265 ms
  int64_t fb0 = 0;
  for (const PathSegment& s : path.segments)
    if (s.rank == 0 && s.name == "forward_backward") fb0 += s.dur_ns;
  EXPECT_LT(fb0, span / 5);
  const std::vector<PathContributor> parts = PathContributors(path);
  ASSERT_FALSE(parts.empty());
  EXPECT_EQ(parts[0].rank, 1);
  EXPECT_EQ(parts[0].kind, PathKind::kCpu);
}

// The public traces: the 2-rank HTA set (the only multi-rank one in ../shared/datasets/hta) and single-rank
// GPU traces; every path tiles its step. On the 2-rank set the path visits the rank that arrives last at the
// step's longest collective before that arrival.
TEST(CriticalPath, PublicTwoRankTraces) {
  const std::string dir = testing::SharedDir() + "/datasets/hta/trace_filter";
  if (!testing::Exists(dir)) GTEST_SKIP() << "dataset absent: " << dir;
  auto job = LoadJob({dir}, LoadOptions{});
  ASSERT_TRUE(job.ok()) << job.error();
  auto p = ComputeFor(std::move(job.value().store));
  ASSERT_TRUE(p->path);
  const CriticalPath& path = *p->path;
  ExpectTiles(path);
  ExpectCollectivesEnteredAtTheLastArrival(*p, path);
  // The step's longest complete collective and the rank that arrived last at it.
  const model::MatchedCollective* big = nullptr;
  int64_t big_dur = -1;
  for (const model::MatchedCollective& m : p->job.collectives.matched) {
    if (m.step != path.step || !m.complete()) continue;
    int64_t d = 0;
    for (size_t r = 0; r < m.call.size(); ++r) {
      const auto& c = p->job.collectives.calls[r][static_cast<size_t>(m.call[r])];
      d = std::max(d, c.end_ns - c.start_ns);
    }
    if (d > big_dur) big_dur = d, big = &m;
  }
  ASSERT_NE(big, nullptr);
  size_t last = 0;
  int64_t latest = INT64_MIN;
  for (size_t r = 0; r < big->call.size(); ++r) {
    const auto& c = p->job.collectives.calls[r][static_cast<size_t>(big->call[r])];
    const int64_t a = c.start_ns - p->job.clocks.offset_ns[r];
    if (a > latest) latest = a, last = r;
  }
  const int32_t last_rank = p->store.ranks[last].rank;
  EXPECT_GT(TimeOn(path, last_rank, std::nullopt, 0, latest - path.start_ns), 0);
  std::printf(
      "[ info ] trace_filter step %lld: %.3f ms, %zu segments, %zu rank changes; last at the longest "
      "collective: rank %d\n",
      static_cast<long long>(path.step), (path.end_ns - path.start_ns) / 1e6, path.segments.size(), path.rank_changes,
      last_rank);
  for (const PathContributor& c : PathContributors(path))
    std::printf("[ info ]   %5.1f %% rank %d %s (%s)\n", 100 * c.share, c.rank,
                std::string(PathKindName(c.kind)).c_str(), c.top_name.substr(0, 60).c_str());
}

// Single ranks of DLRM jobs (TorchRec: the embeddings' all-to-all as NCCL send/recv kernels on their own stream):
// the compute that uses an all-to-all's result waits for it on the device, launched long before. The path of the
// median step goes through those NCCL kernels (at f071f68 it held none of them: the wait read as `idle` or as the
// compute's `launch`).
TEST(CriticalPath, PublicDlrmRanksWaitOnTheirAllToAll) {
  for (const char* t : {"trace_diff/control", "trace_diff/test"}) {
    const std::string dir = testing::SharedDir() + "/datasets/hta/" + t;
    if (!testing::Exists(dir)) GTEST_SKIP() << "dataset absent: " << dir;
    SCOPED_TRACE(t);
    auto job = LoadJob({dir}, LoadOptions{});
    ASSERT_TRUE(job.ok()) << job.error();
    auto p = ComputeFor(std::move(job.value().store));
    ASSERT_TRUE(p->path);
    const CriticalPath& path = *p->path;
    ExpectTiles(path);
    int64_t nccl = 0;
    for (const PathSegment& s : path.segments)
      if (s.kind == PathKind::kKernel && s.name.starts_with("ncclKernel_SendRecv")) nccl += s.dur_ns;
    const double share = static_cast<double>(nccl) / static_cast<double>(path.end_ns - path.start_ns);
    EXPECT_GT(share, 0.1);
    std::printf("[ info ] %s step %lld: %.1f %% of the path in NCCL send/recv kernels\n", t,
                static_cast<long long>(path.step), 100 * share);
  }
}

TEST(CriticalPath, PublicSingleRankTracesTileEveryStep) {
  const char* const traces[] = {"critical_path/alexnet", "critical_path/simple_add", "trace_diff/control",
                                "df_index_resolver", "ns_resolution_trace"};
  for (const char* t : traces) {
    const std::string dir = testing::SharedDir() + "/datasets/hta/" + t;
    if (!testing::Exists(dir)) GTEST_SKIP() << "dataset absent: " << dir;
    SCOPED_TRACE(t);
    auto job = LoadJob({dir}, LoadOptions{});
    ASSERT_TRUE(job.ok()) << job.error();
    auto p = ComputeFor(std::move(job.value().store));
    const auto t0 = std::chrono::steady_clock::now();
    size_t steps = 0, segments = 0;
    for (int64_t step : p->job.steps.steps) {
      auto path = ComputeCriticalPath(p->store, p->rows, p->job, step);
      ASSERT_TRUE(path);
      ExpectTiles(*path);
      ++steps;
      segments += path->segments.size();
    }
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    std::printf("[ info ] %s: %zu slices, %zu steps, %zu segments, %.1f ms for all steps' paths\n", t,
                p->store.slices.size(), steps, segments, ms);
  }
}

}  // namespace
}  // namespace strata
