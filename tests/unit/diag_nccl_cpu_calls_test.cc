// CPU-side NCCL calls are no synchronization points (issue 23): `nccl:*` ops return once the kernel is
// enqueued, so their ends only say when each rank launched. A constructed 8-rank job on one host (epoch
// clocks, no GPU events, as Megatron's traces with the device side removed): every rank computes, launches
// three all_reduces per step, and waits for the device at the step's end; rank 5 computes 12 ms longer before
// each launch. Aligning clocks by the calls' ends moved rank 5 back by its own lateness; the ranks' own
// clocks must be kept and rank 5 named from its launches.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "analysis/diagnosis/diagnose.h"
#include "diag_test_util.h"
#include "model/job_model.h"
#include "reports/perfetto_export.h"

#include <map>
#include <nlohmann/json.hpp>

namespace strata::diagtest {
namespace {

constexpr int kRanks = 8, kSteps = 8, kCalls = 3, kSlow = 5;
constexpr int64_t kEpoch = 1'700'000'000 * kSec;  // Kineto's clock: time since 1970

/// The events of each rank (one shared host clock).
std::vector<std::string> NonBlockingNcclJob() {
  std::vector<std::vector<Event>> events(kRanks);
  int64_t t = kEpoch;
  for (int s = 0; s < kSteps; ++s) {
    std::vector<int64_t> launch_end(kRanks);
    int64_t last = t;
    for (int r = 0; r < kRanks; ++r) {
      int64_t c = t;
      std::vector<Event> step;
      for (int k = 0; k < kCalls; ++k) {
        const int64_t compute = (20 + (r * 7 + s * 3 + k) % 3) * kMs / 10 * 10 + (r == kSlow ? 4 * kMs : 0);
        events[r].push_back(Event{"aten::mm", "cpu_op", c, compute, 1000 + r, 1});
        c += compute;
        events[r].push_back(Event{"nccl:all_reduce", "cpu_op", c, 50 * kUs, 1000 + r, 1});
        c += 50 * kUs;
      }
      launch_end[r] = c;
      last = std::max(last, c);
    }
    const int64_t end = last + 3 * kMs;  // the device finishes the last all_reduce; every host waits for it
    for (int r = 0; r < kRanks; ++r) {
      events[r].push_back(
          Event{"cudaDeviceSynchronize", "cuda_runtime", launch_end[r], end - launch_end[r], 1000 + r, 1});
      events[r].push_back(Event{"ProfilerStep#" + std::to_string(s + 1), "user_annotation", t, end - t, 1000 + r, 1});
    }
    t = end + 200 * kUs;
  }
  std::vector<std::string> out;
  for (int r = 0; r < kRanks; ++r) out.push_back(RankJson(events[r], r, kRanks, Style::kKineto));
  return out;
}

TEST(DiagNcclCpuCalls, TheirEndsAreNoCommonInstantAndTheHostClockIsKept) {
  const TraceStore store = LoadRankJsons(NonBlockingNcclJob());
  const auto rows = SlicesByRank(store);
  const model::JobModel job = model::BuildJobModel(store, rows);
  EXPECT_FALSE(job.collectives.ends_synchronize);
  EXPECT_TRUE(job.clocks.host_clocks);
  for (int64_t offset : job.clocks.offset_ns) EXPECT_EQ(offset, 0);

  const diagnosis::DiagnosisResult r = diagnosis::Diagnose(store);
  EXPECT_TRUE(r.host_clocks);
  ASSERT_FALSE(r.stragglers.empty());
  EXPECT_EQ(r.stragglers[0].rank, RankNumber(kSlow));
  EXPECT_NEAR(r.stragglers[0].late_ms_per_step, 12.0, 2.5);
  ASSERT_FALSE(r.findings.empty());
  EXPECT_EQ(r.findings[0].rank, RankNumber(kSlow));
}

TEST(DiagNcclCpuCalls, BlockingGlooCallsAreStillAlignedByTheirEnds) {
  DdpSpec spec;
  spec.ranks = 4;
  spec.clock_offset = {kEpoch, kEpoch + 5 * kMs, kEpoch, kEpoch};
  spec.plan = [](int, int) { return BasicStep(20 * kMs); };
  const TraceStore store = LoadDdp(spec);
  const model::JobModel job = model::BuildJobModel(store, SlicesByRank(store));
  EXPECT_TRUE(job.collectives.ends_synchronize);
  EXPECT_FALSE(job.clocks.host_clocks);
  EXPECT_NEAR(static_cast<double>(job.clocks.offset_ns[1] - job.clocks.offset_ns[0]), 5e6, 1e5);
}

TEST(DiagNcclCpuCalls, TheExportDrawsNoBlameArrowThatEndsBeforeItStarts) {
  // The peers' calls end long before rank 5 launches (they did not wait in them): an arrow from rank 5's
  // launch to them would end before it starts, which viewers drop (issue 22's export bug).
  const TraceStore store = LoadRankJsons(NonBlockingNcclJob());
  const diagnosis::DiagnosisResult result = diagnosis::Diagnose(store, {.drawn_facts = true});
  ASSERT_FALSE(result.findings.empty());
  PerfettoExportStats stats;
  const auto trace = nlohmann::json::parse(ExportPerfettoJson(store, RecordedRun{}, result, {}, &stats));
  std::map<int64_t, double> start, finish;
  for (const auto& e : trace["traceEvents"]) {
    if (!e.contains("cat") || e["cat"] != "strata.blame") continue;
    (e["ph"] == "s" ? start : finish)[e["id"].get<int64_t>()] = e["ts"].get<double>();
  }
  EXPECT_EQ(start.size(), finish.size());
  for (const auto& [id, ts] : start) {
    ASSERT_TRUE(finish.count(id)) << id;
    EXPECT_GE(finish.at(id), ts) << "flow " << id << " ends before it starts";
  }
}

}  // namespace
}  // namespace strata::diagtest
