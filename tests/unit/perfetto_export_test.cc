// Perfetto export (reports/perfetto_export): a constructed two-rank DDP job whose rank 1 computes 60 ms
// longer each step and whose clock runs 7.000123456 s ahead is exported; the collectives' completions (which
// the simulation makes simultaneous) must coincide in the written timeline, each rank must be one process
// named after it with the applied offset in its metadata, every blame edge (finding, late step, peer) must
// be exactly one s/f flow pair from the straggler to its peer, and every finding one instant on its rank.
#include "reports/perfetto_export.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "diag_test_util.h"

namespace strata::diagtest {
namespace {

constexpr int64_t kSkew = 7 * kSec + 123'456;

DdpSpec TwoRanksOneSlow() {
  DdpSpec spec;
  spec.ranks = 2;
  spec.steps = 6;
  spec.clock_offset = {0, kSkew};
  spec.transfer = {3 * kMs, 5 * kMs};
  spec.plan = [](int r, int) {
    RankStep st;
    st.segs = {{Op("aten::mm", (r == 1 ? 90 : 30) * kMs)}, {Op("aten::conv2d", 15 * kMs)}};
    st.tail = {Op("aten::add_", 4 * kMs)};
    return st;
  };
  return spec;
}

struct Exported {
  diagnosis::DiagnosisResult result;
  nlohmann::json trace;
  PerfettoExportStats stats;
};

Exported Export() {
  Exported e;
  const TraceStore store = LoadDdp(TwoRanksOneSlow());
  e.result = diagnosis::Diagnose(store);
  e.trace = nlohmann::json::parse(ExportPerfettoJson(store, RecordedRun{}, e.result, {}, &e.stats));
  return e;
}

std::vector<nlohmann::json> Events(const nlohmann::json& trace, const std::string& ph, const std::string& cat = "") {
  std::vector<nlohmann::json> out;
  for (const auto& ev : trace["traceEvents"])
    if (ev["ph"] == ph && (cat.empty() || ev.value("cat", "") == cat)) out.push_back(ev);
  return out;
}

TEST(PerfettoExport, EveryEventHasPhaseTimeAndProcess) {
  const Exported e = Export();
  ASSERT_TRUE(e.trace.contains("traceEvents"));
  ASSERT_GT(e.trace["traceEvents"].size(), 50u);
  for (const auto& ev : e.trace["traceEvents"]) {
    ASSERT_TRUE(ev.contains("ph") && ev.contains("ts") && ev.contains("pid") && ev.contains("tid")) << ev.dump();
    if (ev["ph"] == "X") {
      EXPECT_GE(ev["dur"].get<double>(), 0.0);
    }
  }
  EXPECT_EQ(e.stats.events, e.trace["traceEvents"].size());
  EXPECT_TRUE(e.trace["otherData"].contains("export_skipped"));
  EXPECT_TRUE(e.trace["otherData"]["inputs"][0].contains("skipped"));
}

TEST(PerfettoExport, RanksAreProcessesNamedWithTheirOffset) {
  const Exported e = Export();
  std::map<int, nlohmann::json> names;
  for (const auto& m : Events(e.trace, "M"))
    if (m["name"] == "process_name") names[m["pid"].get<int>()] = m["args"];
  ASSERT_EQ(names.size(), 2u);
  EXPECT_EQ(names[0]["name"], "rank 0");
  EXPECT_EQ(names[1]["name"], "rank 1");
  const double applied = names[1]["clock_offset_us"].get<double>() - names[0]["clock_offset_us"].get<double>();
  EXPECT_NEAR(applied, static_cast<double>(kSkew) / 1000.0, 0.002);
  // Every slice of a rank is on that rank's process.
  std::set<int> pids;
  for (const auto& x : Events(e.trace, "X")) pids.insert(x["pid"].get<int>());
  EXPECT_EQ(pids, (std::set<int>{0, 1}));
}

TEST(PerfettoExport, CollectiveCompletionsAlignAcrossRanks) {
  const Exported e = Export();
  std::map<int, std::vector<double>> ends;  // pid -> completion times (µs), in order
  for (const auto& x : Events(e.trace, "X"))
    if (x["name"] == "gloo:all_reduce")
      ends[x["pid"].get<int>()].push_back(x["ts"].get<double>() + x["dur"].get<double>());
  ASSERT_EQ(ends[0].size(), 12u);
  ASSERT_EQ(ends[1].size(), ends[0].size());
  std::sort(ends[0].begin(), ends[0].end());
  std::sort(ends[1].begin(), ends[1].end());
  for (size_t k = 0; k < ends[0].size(); ++k) EXPECT_NEAR(ends[0][k], ends[1][k], 0.002) << "collective " << k;
  // The timeline starts near zero (relative to otherData.time_origin_ns), not at the raw clock.
  EXPECT_LT(ends[0].front(), 1e6);
}

TEST(PerfettoExport, OneFlowPerBlameEdgeAndOneInstantPerFinding) {
  const Exported e = Export();
  ASSERT_FALSE(e.result.findings.empty());
  const diagnosis::Finding& f = e.result.findings.front();
  ASSERT_EQ(f.rank, 1);
  const size_t late_steps = f.evidence["late_steps"].size();
  ASSERT_GT(late_steps, 0u);

  const auto starts = Events(e.trace, "s", "strata.blame"), finishes = Events(e.trace, "f", "strata.blame");
  EXPECT_EQ(starts.size(), late_steps);  // one peer per late step
  EXPECT_EQ(e.stats.blame_flows, late_steps);
  std::map<int64_t, int> start_pid, finish_pid;
  for (const auto& s : starts) start_pid[s["id"].get<int64_t>()] = s["pid"].get<int>();
  for (const auto& s : finishes) {
    finish_pid[s["id"].get<int64_t>()] = s["pid"].get<int>();
    EXPECT_EQ(s["bp"], "e");
  }
  ASSERT_EQ(start_pid.size(), starts.size());
  for (const auto& [id, pid] : start_pid) {
    EXPECT_EQ(pid, 1) << "flow " << id << " starts at the straggler";
    ASSERT_TRUE(finish_pid.count(id)) << "flow " << id << " has no end";
    EXPECT_EQ(finish_pid[id], 0) << "flow " << id << " ends at the waiting peer";
  }

  const auto instants = Events(e.trace, "i", "strata.finding");
  ASSERT_EQ(instants.size(), e.result.findings.size());
  EXPECT_EQ(instants.front()["pid"], 1);
  EXPECT_EQ(instants.front()["s"], "p");
  EXPECT_EQ(instants.front()["args"]["cause"], f.cause);
}

}  // namespace
}  // namespace strata::diagtest
