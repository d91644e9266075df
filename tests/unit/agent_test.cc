// strata agent's pieces that need no root: job identity from a process environment, discovery over a
// constructed /proc, and the Prometheus rendering of its state.
#include <gtest/gtest.h>

#ifdef STRATA_HAVE_RECORDER

#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "agent/discovery.h"
#include "agent/flight_recorder.h"
#include "agent/live_diagnosis.h"
#include "agent/status_render.h"
#include "test_util.h"

namespace strata::agent {
namespace {

std::string Env(std::initializer_list<std::string> vars) {
  std::string out;
  for (const auto& v : vars) out += v + '\0';
  return out;
}

TEST(AgentDiscovery, JobIdFromTheEnvironment) {
  EXPECT_EQ(JobIdOf(Env({"PATH=/bin", "RANK=3", "TORCHELASTIC_RUN_ID=run-7", "SLURM_JOB_ID=99"})), "run-7");
  EXPECT_EQ(JobIdOf(Env({"SLURM_PROCID=1", "SLURM_JOB_ID=99"})), "99");
  EXPECT_EQ(JobIdOf(Env({"RANK=0", "MASTER_ADDR=10.0.0.1", "MASTER_PORT=29500"})), "10.0.0.1:29500");
  EXPECT_EQ(JobIdOf(Env({"PMI_RANK=2"})), "local");
  EXPECT_EQ(JobIdOf(Env({"PATH=/bin", "TORCHELASTIC_RUN_ID=run-7"})), "") << "no rank: not a training process";
}

void WriteProc(const std::string& root, int pid, uint64_t start, const std::string& environ, char state = 'S') {
  const std::string dir = root + "/" + std::to_string(pid);
  std::filesystem::create_directories(dir);
  std::ofstream(dir + "/stat") << pid << " (python3) " << state << " 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 " << start
                               << " 0 0\n";
  std::ofstream(dir + "/environ", std::ios::binary) << environ;
}

TEST(AgentDiscovery, ScansProcForRankedProcessesAndRereadsAReusedPid) {
  testing::TempDir proc;
  WriteProc(proc.path(), 100, 5, Env({"RANK=0", "TORCHELASTIC_RUN_ID=a"}));
  WriteProc(proc.path(), 101, 6, Env({"RANK=1", "TORCHELASTIC_RUN_ID=a"}));
  WriteProc(proc.path(), 102, 7, Env({"HOME=/root"}));
  std::filesystem::create_directories(proc.path() + "/self");
  Discovery d(proc.path());
  auto jobs = d.Scan();
  ASSERT_EQ(jobs.size(), 1u);
  EXPECT_EQ(jobs["a"].rank_of_pid, (std::map<int, int>{{100, 0}, {101, 1}}));
  // pid 101 exits and the pid is reused by a process of another job (a new start time).
  WriteProc(proc.path(), 101, 60, Env({"RANK=0", "TORCHELASTIC_RUN_ID=b"}));
  jobs = d.Scan();
  ASSERT_EQ(jobs.size(), 2u);
  EXPECT_EQ(jobs["b"].rank_of_pid, (std::map<int, int>{{101, 0}}));
  std::filesystem::remove_all(proc.path() + "/100");
  jobs = d.Scan();
  EXPECT_EQ(jobs.count("a"), 0u);
}

// A rank that exited and waits to be reaped by its launcher (a zombie) is not a process of the job any more:
// listing it would start a flight-recorder chunk for a process with nothing left to record.
TEST(AgentDiscovery, LeavesOutProcessesThatHaveEnded) {
  testing::TempDir proc;
  WriteProc(proc.path(), 100, 5, Env({"RANK=0", "TORCHELASTIC_RUN_ID=a"}));
  WriteProc(proc.path(), 101, 6, Env({"RANK=1", "TORCHELASTIC_RUN_ID=a"}), 'Z');
  WriteProc(proc.path(), 102, 7, Env({"RANK=2", "TORCHELASTIC_RUN_ID=a"}), 'X');
  Discovery d(proc.path());
  EXPECT_EQ(d.Scan()["a"].rank_of_pid, (std::map<int, int>{{100, 0}}));
}

TEST(AgentDiscovery, SameNetworkNamespaceOnlyKeepsThisNodesRanks) {
  testing::TempDir proc;
  WriteProc(proc.path(), 100, 5, Env({"RANK=0", "TORCHELASTIC_RUN_ID=a"}));
  WriteProc(proc.path(), 101, 6, Env({"RANK=1", "TORCHELASTIC_RUN_ID=a"}));
  for (int pid : {100, 101}) {  // two files: two inodes, as two namespaces would have
    std::filesystem::create_directories(proc.path() + "/" + std::to_string(pid) + "/ns");
    std::ofstream(proc.path() + "/" + std::to_string(pid) + "/ns/net") << pid;
  }
  const uint64_t mine = NetworkNamespaceOf(proc.path(), "101");
  ASSERT_NE(mine, 0u);
  EXPECT_NE(NetworkNamespaceOf(proc.path(), "100"), mine);
  EXPECT_EQ(NetworkNamespaceOf(proc.path(), "999"), 0u);
  Discovery d(proc.path());
  EXPECT_EQ(d.Scan()["a"].rank_of_pid.size(), 2u);
  d.OnlyNetworkNamespace(mine);
  auto jobs = d.Scan();
  EXPECT_EQ(jobs["a"].rank_of_pid, (std::map<int, int>{{101, 1}}));
}

TEST(AgentStatus, PrometheusTextEscapesLabelsAndDeclaresFamilies) {
  EXPECT_EQ(PromLabel("a\"b\\c\nd"), "a\\\"b\\\\c\\nd");
  AgentSnapshot s;
  s.rounds = 3;
  JobState job;
  job.job = "run\"1";
  job.rank_of_pid = {{10, 0}, {11, 1}};
  diagnosis::DiagnosisResult r;
  r.step_time_median_ms = 120;
  diagnosis::Straggler st;
  st.rank = RankNumber(1);
  st.late_ms_per_step = 40;
  r.stragglers.push_back(st);
  job.last = r;
  diagnosis::Finding f;
  f.rank = RankNumber(1);
  f.cause = diagnosis::Cause::kSlowCompute;
  job.open.push_back({f, 1700000000.5, 2});
  s.jobs.push_back(job);
  const std::string m = MetricsText(s);
  EXPECT_NE(m.find("# TYPE strata_agent_rounds_total counter\nstrata_agent_rounds_total 3\n"), std::string::npos) << m;
  EXPECT_NE(m.find("strata_ranks{training_job=\"run\\\"1\"} 2\n"), std::string::npos) << m;
  EXPECT_NE(m.find("strata_step_seconds{training_job=\"run\\\"1\"} 0.120000\n"), std::string::npos) << m;
  EXPECT_NE(m.find("strata_straggler{training_job=\"run\\\"1\",rank=\"1\"} 1\n"), std::string::npos) << m;
  EXPECT_NE(m.find("strata_finding{training_job=\"run\\\"1\",rank=\"1\",cause=\"slow_compute\"} 1\n"),
            std::string::npos)
      << m;
  const auto j = StatusJson(s);
  ASSERT_EQ(j["jobs"].size(), 1u);
  EXPECT_EQ(j["jobs"][0]["ranks"], nlohmann::ordered_json({0, 1}));
  EXPECT_EQ(j["jobs"][0]["findings"][0]["detected_at"], 1700000000.5);
  EXPECT_EQ(j["jobs"][0]["findings"][0]["cause"], "slow_compute");
}

// The communication path of the last live round, per communicator and op (analysis/communication.h): the
// time in a call, its transfer, and the bus bandwidth in bytes per second only when the calls' bytes are known.
TEST(AgentStatus, CommunicationMetricsPerCommunicatorAndOp) {
  AgentSnapshot s;
  JobState job;
  job.job = "run";
  diagnosis::DiagnosisResult r;
  CommunicationOp known;
  known.group = "0";
  known.op = "all_reduce";
  known.calls = 10;
  known.time_ms = 25;
  known.split = true;
  known.transfer_ms = 10;
  known.busbw_gbps = 1.5;
  CommunicationOp unsplit = known;
  unsplit.op = "broadcast";
  unsplit.split = false;
  unsplit.busbw_gbps = -1;
  r.communication.ops = {known, unsplit};
  job.last = r;
  s.jobs.push_back(job);
  const std::string m = MetricsText(s);
  const std::string labels = "{training_job=\"run\",communicator=\"0\",op=\"all_reduce\"}";
  EXPECT_NE(m.find("# TYPE strata_collective_seconds gauge\n"), std::string::npos) << m;
  EXPECT_NE(m.find("strata_collective_seconds" + labels + " 0.025000\n"), std::string::npos) << m;
  EXPECT_NE(m.find("strata_collective_transfer_seconds" + labels + " 0.010000\n"), std::string::npos) << m;
  EXPECT_NE(m.find("strata_collective_busbw_bytes" + labels + " 1500000000\n"), std::string::npos) << m;
  EXPECT_NE(m.find("strata_collective_seconds{training_job=\"run\",communicator=\"0\",op=\"broadcast\"} 0.025"),
            std::string::npos)
      << m;
  EXPECT_EQ(m.find("strata_collective_transfer_seconds{training_job=\"run\",communicator=\"0\",op=\"broadcast\"}"),
            std::string::npos)
      << m;
  EXPECT_EQ(m.find("strata_collective_busbw_bytes{training_job=\"run\",communicator=\"0\",op=\"broadcast\"}"),
            std::string::npos)
      << m;
}

// The live window keeps a call still inside however old its entry, and nothing else that is old: an entry
// whose return the recorder missed (its thread has called the same function since) is dropped with its era,
// or it stays "inside" forever and takes the place of a later call (agent_nodes_hang, 2026-11-26).
TEST(AgentLiveWindow, KeepsCallsStillInsideAndDropsEntriesWhoseReturnWasMissed) {
  segments::SegmentData d;
  const uint32_t c10d = 6, algorithm = 24;
  d.call_enters = {{10, 1, c10d, 100, 0, 0},       // return missed (attached mid-call), called again at 300
                   {10, 1, c10d, 300, 0, 0},       // returned at 310
                   {11, 1, algorithm, 305, 0, 0},  // returned at 320
                   {11, 1, algorithm, 400, 0, 0},  // stuck: never returned, nothing later on its thread
                   {10, 1, c10d, 2000, 0, 0}};     // inside the window
  d.calls = {{10, 1, c10d, 300, 310}, {11, 1, algorithm, 305, 320}, {10, 1, c10d, 2000, 2010}};
  CutToWindow(&d, 1000);
  std::vector<uint64_t> kept;
  for (const auto& e : d.call_enters) kept.push_back(e.ts_ns);
  EXPECT_EQ(kept, (std::vector<uint64_t>{400, 2000}));
  ASSERT_EQ(d.calls.size(), 1u);
  EXPECT_EQ(d.calls[0].start_ns, 2000u);
}

// An agent restarted on a job whose earlier chunks are retained continues their numbering: writing into an
// old chunk would put its segment beside the new one in the live diagnosis. Names that are not chunk-<n>
// do not count. (The recorder here is /bin/true: only the chunk numbering is under test; the chunks started
// are the newest, read once attached: agent_chunk_carry_test.cc.)
TEST(AgentFlightRecorder, ChunksContinueTheNumberingOfARestartedAgent) {
  testing::TempDir dir;
  for (const char* name : {"chunk-000000", "chunk-000007", "chunk-x", "chunk-000099.old", "chunk-"})
    std::filesystem::create_directories(std::filesystem::path(dir.path()) / name);
  FlightRecorder flight(dir.path(), FlightOptions{"/bin/true"});
  flight.Update({4242}, 0.0);
  EXPECT_EQ(std::filesystem::path(flight.newest_chunk()).filename(), "chunk-000008");
  flight.Update({4242, 4243}, 1.0);  // the job's processes changed: a new chunk, numbered on
  EXPECT_EQ(std::filesystem::path(flight.newest_chunk()).filename(), "chunk-000009");
  flight.Stop();
}

// A due rotation waits while the job may be stalled (a new recorder would never see the entries of the
// collectives its ranks are stuck in) and happens once it is not; new processes start a chunk regardless.
// The recorder stand-in is a script that stays alive until stopped.
TEST(AgentFlightRecorder, HoldsTheRotationWhileTheJobMayBeStalled) {
  testing::TempDir dir;
  const std::string recorder = testing::WriteStandInRecorder(dir.path());
  FlightOptions o{recorder};
  o.rotate_s = 10;
  FlightRecorder flight((std::filesystem::path(dir.path()) / "job").string(), o);
  auto chunk = [&] { return std::filesystem::path(flight.newest_chunk()).filename().string(); };
  flight.Update({4242}, 0.0);
  EXPECT_EQ(chunk(), "chunk-000000");
  flight.Update({4242}, 11.0, /*hold_rotation=*/true);
  EXPECT_EQ(chunk(), "chunk-000000") << "rotated while the job may be stalled";
  flight.Update({4242, 4243}, 12.0, /*hold_rotation=*/true);
  EXPECT_EQ(chunk(), "chunk-000001") << "new processes start a chunk even when held";
  flight.Update({4242, 4243}, 23.0, /*hold_rotation=*/false);
  EXPECT_EQ(chunk(), "chunk-000002") << "a due rotation once the job is not held";
  flight.Stop();
}

// A recorder that exited by itself with status 0 saw its processes end: the same pids, still listed while
// they exit, must not start a chunk (an empty one would become the job's last). A recorder that failed is
// restarted; new processes start a chunk as always.
TEST(AgentFlightRecorder, NoNewChunkForProcessesWhoseRecorderSawThemEnd) {
  for (const char* recorder : {"/bin/true", "/bin/false"}) {
    testing::TempDir dir;
    FlightRecorder flight((std::filesystem::path(dir.path()) / "job").string(), FlightOptions{recorder});
    auto chunk = [&] { return std::filesystem::path(flight.newest_chunk()).filename().string(); };
    flight.Update({4242, 4243}, 0.0);
    for (int i = 0; i < 200 && !flight.current_finished(); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
      flight.Update({}, 0.1);  // reaps it; no process listed, so nothing starts
    }
    ASSERT_TRUE(flight.current_finished()) << recorder;
    flight.Update({4243}, 0.2);
    const bool clean = std::string(recorder) == "/bin/true";
    EXPECT_EQ(chunk(), clean ? "chunk-000000" : "chunk-000001") << recorder;
    flight.Update({4243, 4244}, 0.3);
    EXPECT_EQ(chunk(), clean ? "chunk-000001" : "chunk-000002") << "a new process starts a chunk (" << recorder << ")";
    flight.Stop();
  }
}

// What holds it: a rank inside a collective past thresholds::kRotationHoldInsideS as the recording shows it
// (up to its newest row, not up to now), or an open hang.
TEST(AgentFlightRecorder, MayBeStalledWhenARankIsLongInsideOrAHangIsOpen) {
  JobState s;
  s.inflight.resize(2);
  s.inflight[0].inside = true;
  s.inflight[0].since_unix = 100.0;
  s.reach_unix = 103.0;
  EXPECT_FALSE(MayBeStalled(s, 100.5));
  EXPECT_TRUE(MayBeStalled(s, 102.0));
  s.reach_unix = 100.6;  // the recording ends 0.6 s after the entry: its return may be unwritten yet
  EXPECT_FALSE(MayBeStalled(s, 102.0));
  s.reach_unix = 0;  // no row at all
  EXPECT_FALSE(MayBeStalled(s, 102.0));
  s.reach_unix = 103.0;
  s.inflight[0].inside = false;
  EXPECT_FALSE(MayBeStalled(s, 102.0));
  OpenFinding f;
  f.finding.cause = diagnosis::Cause::kHang;
  s.open.push_back(f);
  EXPECT_TRUE(MayBeStalled(s, 102.0));
}

}  // namespace
}  // namespace strata::agent
#endif  // STRATA_HAVE_RECORDER
