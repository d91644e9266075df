// Perfetto export (reports/perfetto_export): a constructed two-rank DDP job whose rank 1 computes 60 ms
// longer each step and whose clock runs 7.000123456 s ahead is exported; the collectives' completions (which
// the simulation makes simultaneous) must coincide in the written timeline, each rank must be one process
// named after it with the applied offset in its metadata, every blame edge (finding, late step, peer) must
// be exactly one s/f flow pair from the straggler to its peer, and every finding one instant on its rank.
// A constructed recording (no profiler) exports its layers: off-CPU intervals, run-queue waits, GC pauses
// and host counters as tracks and counters of the rank that recorded them, and the host in the process name.
// The streaming form hands the same text to its sink in bounded pieces and stops at the sink's first error.
// A recorded job that stopped (issue 22) shows it: for a hang, an instant on each waiting rank where the stall
// began, a "stalled in all_reduce" slice as long as it lasted on a track of its own, and an instant where the
// missing rank stopped naming its state and frame (its hang finding drawn there); for a collective mismatch,
// an instant on each rank where it called its side. Unix times land on the rank's aligned clock, nothing
// before the time origin; a result whose recording is not given leaves them out, counted.
#include "reports/perfetto_export.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "analysis/diagnosis/stall.h"
#include "diag_test_util.h"
#include "importers/recording_trace.h"
#include "reports/evidence_json.h"

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
  e.result = diagnosis::Diagnose(store, {.drawn_facts = true});
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

TEST(PerfettoExport, BlameIsDrawnWhereTheDiagnosisSaysTheRankArrivedLatest) {
  // The export measures no lateness itself: it draws each late step's blame at the instance the result names
  // (DiagnosisResult::drawn), and at none when the result names none.
  const TraceStore store = LoadDdp(TwoRanksOneSlow());
  diagnosis::DiagnosisResult result = diagnosis::Diagnose(store, {.drawn_facts = true});
  ASSERT_TRUE(result.drawn.latest_arrival.count(1));
  PerfettoExportStats drawn;
  (void)ExportPerfettoJson(store, RecordedRun{}, result, {}, &drawn);
  EXPECT_GT(drawn.blame_flows, 0u);
  const size_t steps = result.drawn.latest_arrival.at(1).size();
  result.drawn.latest_arrival.clear();
  PerfettoExportStats none;
  const nlohmann::json trace = nlohmann::json::parse(ExportPerfettoJson(store, RecordedRun{}, result, {}, &none));
  EXPECT_EQ(none.blame_flows, 0u);
  EXPECT_GT(trace["otherData"]["export_skipped"]["blame_step_without_shared_collective"].get<size_t>(), 0u);
  EXPECT_LE(trace["otherData"]["export_skipped"]["blame_step_without_shared_collective"].get<size_t>(), steps);
}

TEST(PerfettoExport, OneFlowPerBlameEdgeAndOneInstantPerFinding) {
  const Exported e = Export();
  ASSERT_FALSE(e.result.findings.empty());
  const diagnosis::Finding& f = e.result.findings.front();
  ASSERT_EQ(f.rank, RankNumber(1));
  const size_t late_steps = FindingEvidenceJson(f.evidence)["late_steps"].size();
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

  const auto instants = Events(e.trace, "I", "strata.finding");
  ASSERT_EQ(instants.size(), e.result.findings.size());
  EXPECT_EQ(instants.front()["pid"], 1);
  EXPECT_EQ(instants.front()["s"], "p");
  EXPECT_EQ(instants.front()["args"]["cause"], std::string(diagnosis::CauseName(f.cause)));
}

// Rank r (pid 100 + 10 r, gloo thread pid + 1) computes 30 ms (rank 1: 40 ms) per 100 ms step and sleeps
// until its all_reduce; rank 1 also has one GC pause, one run-queue wait and an RSS counter.
RecordedRun Recording() {
  RecordedSegment seg;
  seg.data.path = "run/record-node-a-1.sseg";
  seg.host = "node-a";
  seg.probes.push_back(
      {"gloo::allreduce(gloo::AllreduceOptions const&)", "all_reduce", ProbeKind::kCollective, "libgloo.so"});
  seg.series.push_back({"rss_bytes", 110, 0, "", "bytes", false});
  for (int r = 0; r < 2; ++r) {
    const auto pid = static_cast<uint32_t>(100 + 10 * r);
    seg.processes[static_cast<int>(pid)] = {static_cast<int>(pid), 1, r, "python3", "", 0, 0};
    const int64_t compute = r == 0 ? 30 : 40;
    for (int s = 1; s <= 10; ++s) {
      const auto t0 = static_cast<uint64_t>(s * 100);
      const uint64_t runq = r == 1 && s == 3 ? 2 * kMs : 0;
      seg.data.off_cpu.push_back({pid, pid, (t0 + compute) * kMs, (t0 + 100) * kMs, runq, 1, 0, 0, 0, 0});
      seg.data.calls.push_back({pid + 1, pid, 0, (t0 + compute) * kMs, (t0 + 41) * kMs});
    }
  }
  seg.data.gcs.push_back({110, 110, 305 * kMs, 309 * kMs, 2, 1234});
  seg.data.gcs.push_back({100, 100, 1 * kMs, 2 * kMs, 0, 7});  // before the first step: at the origin, not before
  for (int i = 0; i < 5; ++i) seg.data.counters.push_back({static_cast<uint64_t>(200 + 100 * i) * kMs, 0, 1e9 + i});
  RecordedRun run;
  run.segments.push_back(std::move(seg));
  return run;
}

TEST(PerfettoExport, RecorderLayersBecomeTracksOfTheirRank) {
  const RecordedRun run = Recording();
  auto store = TraceStoreFromRecording(run);
  ASSERT_TRUE(store.ok()) << store.error();
  const diagnosis::DiagnosisResult result = diagnosis::Diagnose(store.value(), {.drawn_facts = true});
  PerfettoExportStats stats;
  const nlohmann::json trace = nlohmann::json::parse(ExportPerfettoJson(store.value(), run, result, {}, &stats));

  std::map<std::pair<int, int64_t>, std::string> threads;
  std::map<int, std::string> processes;
  for (const auto& m : Events(trace, "M")) {
    if (m["name"] == "thread_name") threads[{m["pid"].get<int>(), m["tid"].get<int64_t>()}] = m["args"]["name"];
    if (m["name"] == "process_name") processes[m["pid"].get<int>()] = m["args"]["name"];
  }
  EXPECT_EQ(processes[0], "rank 0 (node-a)");
  EXPECT_EQ(processes[1], "rank 1 (node-a)");
  std::map<std::string, std::map<int, size_t>> by_track;  // track name -> pid -> events
  for (const auto& x : Events(trace, "X", "strata.recorder"))
    ++by_track[threads[{x["pid"].get<int>(), x["tid"].get<int64_t>()}]][x["pid"].get<int>()];
  EXPECT_EQ(by_track["off-CPU · tid 100 (python3)"][0], 10u);
  EXPECT_EQ(by_track["off-CPU · tid 110 (python3)"][1], 10u);
  EXPECT_EQ(by_track["run-queue wait · tid 110 (python3)"][1], 1u);
  EXPECT_EQ(by_track["GC · tid 110 (python3)"][1], 1u);
  EXPECT_EQ(by_track["calls · tid 111 (python3)"][1], 10u);
  size_t rss = 0;
  for (const auto& c : Events(trace, "C", "strata.recorder")) rss += c["pid"] == 1 && c["name"] == "rss_bytes";
  EXPECT_EQ(rss, 5u);
  EXPECT_EQ(stats.recorder_events, 20u + 2 + 1 + 20 + 5);
  // Nothing before the time origin (Perfetto misreads negative decimals), and a thread id names one thread
  // of one process (Perfetto, like the kernel, keys threads by tid alone).
  std::map<int64_t, std::set<int>> pids_of_tid;
  for (const auto& e : trace["traceEvents"]) {
    EXPECT_GE(e["ts"].get<double>(), 0.0) << e.dump();
    if (e["tid"].get<int64_t>() != 0) pids_of_tid[e["tid"].get<int64_t>()].insert(e["pid"].get<int>());
  }
  for (const auto& [tid, pids] : pids_of_tid) EXPECT_EQ(pids.size(), 1u) << "tid " << tid;
  EXPECT_TRUE(trace["otherData"]["export_skipped"].empty()) << trace["otherData"]["export_skipped"].dump();
  // The GC pause sits where it was recorded, on the rank's aligned clock.
  const int64_t origin = trace["otherData"]["time_origin_ns"].get<int64_t>();
  for (const auto& x : Events(trace, "X", "strata.recorder"))
    if (x["name"] == "GC gen 2") {
      const double offset_us = result.clock_offsets_us.at(1);
      EXPECT_NEAR(x["ts"].get<double>() * 1000.0 + static_cast<double>(origin) + offset_us * 1000.0, 305.0 * kMs, 1.0);
      EXPECT_NEAR(x["dur"].get<double>(), 4000.0, 0.001);
    }
}

// A 3-rank gloo job on one host (pid 10 + rank, its gloo thread pid + 100) calling c10d's allreduce and then
// gloo's algorithm every 100 ms from 1 s on; the host's wall clock is `kWall` ahead of its monotonic clock.
// hang: rank 1 stops after 3 collectives, blocked on a lock since 1.25 s; ranks 0 and 2 wait in #3 until the
// recording ends at 31 s. Else (mismatch): at #2 rank 1 calls broadcast where ranks 0 and 2 call all_reduce,
// and no rank completes a collective after it (a real mismatch derails the communicator: stall.cc).
constexpr int64_t kWall = 1'700'000'000 * kSec;

RecordedRun StoppedJob(bool hang) {
  RecordedSegment seg;
  seg.launched = true;
  seg.end_ns = hang ? 31 * kSec : 2 * kSec;
  seg.data.header.realtime_minus_monotonic_ns = kWall;
  seg.probes = {
      {"c10d::ProcessGroupGloo::allreduce(x)", "all_reduce", ProbeKind::kCollectiveEnqueue, "libtorch_cpu.so"},
      {"gloo::allreduce(gloo::AllreduceOptions const&)", "all_reduce", ProbeKind::kCollective, "libtorch_cpu.so"},
      {"c10d::ProcessGroupGloo::broadcast(x)", "broadcast", ProbeKind::kCollectiveEnqueue, "libtorch_cpu.so"},
      {"gloo::broadcast(gloo::BroadcastOptions&)", "broadcast", ProbeKind::kCollective, "libtorch_cpu.so"}};
  for (int r = 0; r < 3; ++r) {
    const auto pid = static_cast<uint32_t>(10 + r);
    seg.processes[static_cast<int>(pid)] = {static_cast<int>(pid), 1, r, "python3", "", 0, 0};
    for (int k = 0; k < 4; ++k) {
      if (k == 3 && (!hang || r == 1)) break;
      const bool odd = !hang && r == 1 && k == 2;
      const uint32_t c10d = odd ? 2 : 0, algo = odd ? 3 : 1;
      const auto t = static_cast<uint64_t>(kSec + k * 100 * kMs);
      seg.data.call_enters.push_back({pid, pid, c10d, t, 0xab, 0});
      seg.data.calls.push_back({pid, pid, c10d, t, t + 10'000});
      seg.data.call_enters.push_back({pid + 100, pid, algo, t + 20'000, 0, 0});
      if (!hang || k < 3) seg.data.calls.push_back({pid + 100, pid, algo, t + 20'000, t + 5 * kMs});
    }
  }
  if (hang) {
    const uint64_t since = kSec + 250 * kMs;
    seg.thread_states.push_back({11, 11, since + 2 * kSec, since, 1, "202", "futex_wait_queue", -1, -1, 0});
    seg.python_stacks[{11, 0}] = {{"blocked", "/x/job.py", 7}};
  }
  RecordedRun run;
  run.segments.push_back(std::move(seg));
  return run;
}

struct StoppedExport {
  diagnosis::DiagnosisResult result;
  nlohmann::json trace;
  PerfettoExportStats stats;
  /// An event's Unix time (ns): its written µs put back on the rank's own clock, then on the wall clock.
  double UnixNs(const nlohmann::json& ev, double plus_us = 0) const {
    const double origin = static_cast<double>(trace["otherData"]["time_origin_ns"].get<int64_t>());
    const double offset_us = result.clock_offsets_us.at(ev["pid"].get<int>());
    return (ev["ts"].get<double>() + plus_us + offset_us) * 1000.0 + origin + static_cast<double>(kWall);
  }
};

StoppedExport ExportStopped(bool hang) {
  StoppedExport e;
  const RecordedRun run = StoppedJob(hang);
  auto store = TraceStoreFromRecording(run);
  EXPECT_TRUE(store.ok()) << store.error();
  if (!store.ok()) return e;
  e.result = diagnosis::Diagnose(store.value(), {.drawn_facts = true});
  e.trace = nlohmann::json::parse(ExportPerfettoJson(store.value(), run, e.result, {}, &e.stats));
  return e;
}

TEST(PerfettoExport, AHangIsDrawnOnTheWaitingRanksAndWhereTheMissingRankStopped) {
  const StoppedExport e = ExportStopped(true);
  ASSERT_FALSE(e.result.findings.empty());
  ASSERT_EQ(e.result.findings.front().cause, diagnosis::Cause::kHang);
  const diagnosis::StallEvidence* stall = diagnosis::JobStall(e.result);
  ASSERT_NE(stall, nullptr);
  const double since_ns = stall->stalled_since_unix * 1e9;
  std::map<int64_t, std::string> thread_names;  // tid -> name
  std::map<int64_t, std::set<int>> pids_of_tid;
  for (const auto& ev : e.trace["traceEvents"]) {
    EXPECT_GE(ev["ts"].get<double>(), 0.0) << ev.dump();
    if (ev["ph"] == "M" && ev["name"] == "thread_name") thread_names[ev["tid"].get<int64_t>()] = ev["args"]["name"];
    if (ev["tid"].get<int64_t>() != 0) pids_of_tid[ev["tid"].get<int64_t>()].insert(ev["pid"].get<int>());
  }
  for (const auto& [tid, pids] : pids_of_tid) EXPECT_EQ(pids.size(), 1u) << "tid " << tid;
  // Ranks 0 and 2: where the stall began, and a slice as long as it lasted on a "stopped job" track.
  std::map<int, nlohmann::json> waiting, slices, stopped;
  for (const auto& ev : Events(e.trace, "I", "strata.stall")) {
    EXPECT_EQ(ev["s"], "p");
    EXPECT_EQ(ev["tid"], 0);
    (ev["pid"] == 1 ? stopped : waiting)[ev["pid"].get<int>()] = ev;
  }
  for (const auto& ev : Events(e.trace, "X", "strata.stall")) slices[ev["pid"].get<int>()] = ev;
  ASSERT_EQ(waiting.size(), 2u);
  ASSERT_EQ(slices.size(), 2u);
  for (const int r : {0, 2}) {
    EXPECT_EQ(waiting[r]["name"], "waiting in all_reduce (pg0 #3) for rank 1");
    EXPECT_NEAR(e.UnixNs(waiting[r]), since_ns, 1000.0) << "rank " << r;
    EXPECT_EQ(waiting[r]["args"]["missing_ranks"], nlohmann::json::array({1}));
    const nlohmann::json& x = slices[r];
    EXPECT_EQ(x["name"], "stalled in all_reduce");
    EXPECT_EQ(thread_names[x["tid"].get<int64_t>()], "stopped job");
    EXPECT_NEAR(e.UnixNs(x), since_ns, 1000.0);
    EXPECT_NEAR(x["dur"].get<double>(), stall->stalled_for_s * 1e6, 1.0);
    EXPECT_NEAR(stall->stalled_for_s, 31 - 1.205, 0.01);  // the last completion (#2) to the recording's end
  }
  // Rank 1: where it stopped (its state's start), naming the state, the frame and the Python stack.
  ASSERT_EQ(stopped.size(), 1u);
  const nlohmann::json& s = stopped[1];
  EXPECT_EQ(s["name"], "rank 1 stopped here: blocked on a lock (futex) in Python blocked (job.py:7)");
  EXPECT_NEAR(e.UnixNs(s), static_cast<double>(kWall + kSec + 250 * kMs), 1000.0);
  EXPECT_EQ(s["args"]["python_stack"], nlohmann::json::array({"Python blocked (job.py:7)"}));
  EXPECT_EQ(s["args"]["last_completed"], "all_reduce #2");
  // The hang finding is drawn where rank 1 stopped, not at the start of the timeline.
  const auto findings = Events(e.trace, "I", "strata.finding");
  ASSERT_FALSE(findings.empty());
  EXPECT_EQ(findings.front()["pid"], 1);
  EXPECT_EQ(findings.front()["ts"], s["ts"]);
  EXPECT_EQ(e.stats.stall_events, 5u);
  EXPECT_FALSE(e.trace["otherData"]["export_skipped"].contains("recorder_unplaced_stall_event"));
}

TEST(PerfettoExport, AMismatchIsAnInstantOnEachRankWhereItCalledItsSide) {
  const StoppedExport e = ExportStopped(false);
  ASSERT_FALSE(e.result.findings.empty());
  ASSERT_EQ(e.result.findings.front().cause, diagnosis::Cause::kCollectiveMismatch);
  std::map<int, nlohmann::json> at;
  for (const auto& ev : Events(e.trace, "I", "strata.stall")) at[ev["pid"].get<int>()] = ev;
  ASSERT_EQ(at.size(), 3u);
  EXPECT_EQ(at[1]["name"], "mismatch at pg0 #2: called broadcast; ranks 0, 2 called all_reduce");
  EXPECT_EQ(at[0]["name"], "mismatch at pg0 #2: called all_reduce; rank 1 called broadcast");
  EXPECT_EQ(at[2]["name"], at[0]["name"]);
  for (const auto& [r, ev] : at) {
    EXPECT_NEAR(e.UnixNs(ev), static_cast<double>(kWall + kSec + 200 * kMs), 1000.0) << "rank " << r;  // #2's call
    EXPECT_EQ(ev["args"]["calls"].size(), 2u);
  }
  EXPECT_TRUE(Events(e.trace, "X", "strata.stall").empty());
  const auto findings = Events(e.trace, "I", "strata.finding");
  ASSERT_FALSE(findings.empty());
  EXPECT_EQ(findings.front()["pid"], 1);
  EXPECT_EQ(findings.front()["ts"], at[1]["ts"]);
}

TEST(PerfettoExport, AStallWithoutItsRecordingIsLeftOutAndCounted) {
  // The result of a recorded hang exported over the traces alone: nowhere to place its Unix times.
  const StoppedExport stopped = ExportStopped(true);
  const TraceStore store = LoadDdp(TwoRanksOneSlow());
  const nlohmann::json trace =
      nlohmann::json::parse(ExportPerfettoJson(store, RecordedRun{}, stopped.result, {}, nullptr));
  EXPECT_TRUE(Events(trace, "I", "strata.stall").empty());
  EXPECT_EQ(trace["otherData"]["export_skipped"]["recorder_unplaced_stall_event"], 5);
  for (const auto& ev : trace["traceEvents"]) EXPECT_GE(ev["ts"].get<double>(), 0.0) << ev.dump();
}

TEST(PerfettoExport, StreamsTheSameTextInBoundedPieces) {
  const TraceStore store = LoadDdp(TwoRanksOneSlow());
  const diagnosis::DiagnosisResult result = diagnosis::Diagnose(store, {.drawn_facts = true});
  const std::string whole = ExportPerfettoJson(store, RecordedRun{}, result);
  PerfettoExportOptions options;
  options.piece_bytes = 4096;
  std::string joined;
  size_t pieces = 0, largest = 0;
  const Status st = WritePerfettoJson(
      store, RecordedRun{}, result,
      [&](std::string_view piece) {
        joined.append(piece);
        ++pieces, largest = std::max(largest, piece.size());
        return Status::Ok();
      },
      options);
  ASSERT_TRUE(st.ok()) << st.message();
  EXPECT_EQ(joined, whole);
  EXPECT_GE(pieces, whole.size() / 8192);  // many pieces, not the whole text at the end
  EXPECT_LT(largest, 4096u + 2048u);       // a piece passes the bound by at most one event
}

TEST(PerfettoExport, StopsAtTheSinksFirstError) {
  const TraceStore store = LoadDdp(TwoRanksOneSlow());
  const diagnosis::DiagnosisResult result = diagnosis::Diagnose(store, {.drawn_facts = true});
  PerfettoExportOptions options;
  options.piece_bytes = 1024;
  int calls = 0;
  const Status st = WritePerfettoJson(
      store, RecordedRun{}, result,
      [&](std::string_view) { return ++calls == 2 ? Status::Resource("disk full") : Status::Ok(); }, options);
  EXPECT_FALSE(st.ok());
  EXPECT_EQ(st.message(), "disk full");
  EXPECT_EQ(calls, 2);
}

}  // namespace
}  // namespace strata::diagtest
