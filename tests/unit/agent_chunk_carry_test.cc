// The carry of open collective entries across the agent's flight-recorder chunks (agent/chunk_carry.h), on
// hand-made segments: an entry open at the end of one chunk with no sign in the next stays inside it (and the
// stall is named); one whose thread returns or enters a later collective in the next chunk, or whose process
// is gone, is not carried. Then the same through LiveDiagnosis rounds over two chunk directories, and the
// flight recorder's switch to a new chunk only once its recorder says it is attached.
#include <gtest/gtest.h>

#ifdef STRATA_HAVE_RECORDER

#include <fcntl.h>
#include <sys/stat.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "agent/chunk_carry.h"
#include "agent/flight_recorder.h"
#include "agent/live_diagnosis.h"
#include "analysis/diagnosis/stall.h"
#include "importers/recorded_calls.h"
#include "importers/recorded_threads.h"
#include "segments/segment_writer.h"
#include "test_util.h"

namespace strata::agent {
namespace {

constexpr uint64_t kMs = 1'000'000;
constexpr uint64_t kS = 1000 * kMs;

const RecordedProbe kC10d{"c10d::ProcessGroupGloo::allreduce(x)", "all_reduce", ProbeKind::kCollectiveEnqueue,
                          "libtorch_cpu.so"};
const RecordedProbe kGloo{"gloo::allreduce(gloo::AllreduceOptions const&)", "all_reduce", ProbeKind::kCollective,
                          "libtorch_cpu.so"};

// One chunk's segment of a 3-rank gloo job (rank r: pid 10 + r, its gloo worker thread pid + 100).
struct Chunk {
  RecordedSegment seg;
  explicit Chunk(std::vector<RecordedProbe> probes) {
    seg.probes = std::move(probes);
    for (int r = 0; r < 3; ++r) seg.processes[10 + r] = RecordedProcess{10 + r, 1, r, "python3"};
  }
  uint32_t Probe(const RecordedProbe& p) const {
    for (size_t i = 0; i < seg.probes.size(); ++i)
      if (seg.probes[i].symbol == p.symbol) return static_cast<uint32_t>(i);
    return UINT32_MAX;
  }
  // Rank r's c10d call at t (returns at once) and its gloo algorithm, which returns 5 ms on unless `stuck`.
  void Call(int r, uint64_t t, bool stuck) {
    const uint32_t pid = 10 + r;
    seg.data.call_enters.push_back({pid, pid, Probe(kC10d), t, 0xab, 0});
    seg.data.calls.push_back({pid, pid, Probe(kC10d), t, t + 10'000});
    seg.data.call_enters.push_back({pid + 100, pid, Probe(kGloo), t + 20'000, 0, 0});
    if (!stuck) seg.data.calls.push_back({pid + 100, pid, Probe(kGloo), t + 20'000, t + 5 * kMs});
  }
  RecordedRun Run() const {
    RecordedRun run;
    run.segments.push_back(seg);
    return run;
  }
};

// Chunk N: every rank completes collectives #0..#2 (100 ms apart from 1 s); ranks 0 and 2 then enter #3 and
// never leave it; rank 1 never enters it (it stopped).
Chunk ChunkBeforeTheHang() {
  Chunk c({kC10d, kGloo});
  for (int r = 0; r < 3; ++r)
    for (int k = 0; k < 4; ++k)
      if (k < 3 || r != 1) c.Call(r, kS + static_cast<uint64_t>(k) * 100 * kMs, k == 3);
  return c;
}
constexpr uint64_t kStuckAt = kS + 300 * kMs + 20'000;  // when ranks 0 and 2 entered #3's algorithm

std::vector<bool> Inside(const RecordedRun& run, int64_t now_ns) {
  std::vector<bool> out(3);
  for (const diagnosis::RankInflight& r :
       diagnosis::InflightByRank({DecodeRecordedCalls(run), DecodeRecordedThreads(run)}, now_ns))
    if (r.rank >= 0 && r.rank < 3) out[static_cast<size_t>(r.rank)] = r.inside;
  return out;
}

TEST(AgentChunkCarry, AnEntryOpenAtTheEndOfAChunkStaysInsideWhenTheNextShowsNothingAndTheStallIsNamed) {
  const std::vector<CarriedEntry> carried0 = CarryFrom(ChunkBeforeTheHang().Run(), {});
  ASSERT_EQ(carried0.size(), 2u) << "the gloo algorithms of ranks 0 and 2";
  // Chunk N+1 attached after they entered: it records the processes and none of their collectives. Its
  // probe table is in another order (ids are per segment).
  Chunk next({kGloo, kC10d});
  RecordedRun run = next.Run();
  const int64_t now = static_cast<int64_t>(kStuckAt + 20 * kS);
  EXPECT_EQ(Inside(run, now), (std::vector<bool>{false, false, false})) << "without the carry: no one inside";
  std::vector<CarriedEntry> carried = carried0;
  CarryInto(&carried, &run);
  EXPECT_EQ(carried.size(), 2u);
  EXPECT_EQ(Inside(run, now), (std::vector<bool>{true, false, true}));
  diagnosis::DiagnosisResult result;
  diagnosis::StallOptions o;
  o.now_unix_ns = now;
  diagnosis::ApplyStallAnalysis({DecodeRecordedCalls(run), DecodeRecordedThreads(run)}, &result, o);
  ASSERT_FALSE(result.findings.empty());
  EXPECT_EQ(result.findings[0].cause, diagnosis::Cause::kHang);
  ASSERT_TRUE(result.findings[0].rank);
  EXPECT_EQ(*result.findings[0].rank, RankNumber(1));
  const auto* stall = diagnosis::JobStall(result);
  ASSERT_NE(stall, nullptr);
  EXPECT_EQ(stall->waiting_ranks, (std::vector<int32_t>{0, 2}));
  EXPECT_EQ(stall->missing_ranks, (std::vector<int32_t>{1}));
  // A chunk after that one, still with no sign: carried again from the chunk it was carried into.
  EXPECT_EQ(CarryFrom(next.Run(), carried).size(), 2u);
}

TEST(AgentChunkCarry, NotCarriedOnceTheNextChunkShowsTheThreadLeave) {
  const std::vector<CarriedEntry> carried0 = CarryFrom(ChunkBeforeTheHang().Run(), {});
  ASSERT_EQ(carried0.size(), 2u);
  const int64_t now = static_cast<int64_t>(kStuckAt + 20 * kS);
  {  // Rank 0's worker thread enters a later collective (and rank 2's its next one, still inside).
    Chunk next({kC10d, kGloo});
    next.Call(0, kStuckAt + 2 * kS, false);
    next.Call(2, kStuckAt + 2 * kS, true);
    RecordedRun run = next.Run();
    std::vector<CarriedEntry> carried = carried0;
    CarryInto(&carried, &run);
    EXPECT_TRUE(carried.empty()) << "both threads entered a later collective";
    EXPECT_EQ(run.segments[0].data.call_enters.size(), 4u) << "nothing added";
  }
  {  // Rank 0's algorithm is seen returning (a call row of its thread ending after the entry).
    Chunk next({kC10d, kGloo});
    next.seg.data.calls.push_back({110, 10, next.Probe(kGloo), kStuckAt, kStuckAt + 3 * kS});
    RecordedRun run = next.Run();
    std::vector<CarriedEntry> carried = carried0;
    CarryInto(&carried, &run);
    ASSERT_EQ(carried.size(), 1u);
    EXPECT_EQ(carried[0].pid, 12u);
    EXPECT_EQ(Inside(run, now), (std::vector<bool>{false, false, true}));
  }
  {  // The next chunk recorded rank 0's entry itself (its probe's own timestamp, a few µs earlier): not twice.
    Chunk next({kC10d, kGloo});
    next.seg.data.call_enters.push_back({110, 10, next.Probe(kGloo), kStuckAt - 5'000, 0, 0});
    RecordedRun run = next.Run();
    std::vector<CarriedEntry> carried = carried0;
    CarryInto(&carried, &run);
    ASSERT_EQ(carried.size(), 1u);
    EXPECT_EQ(carried[0].pid, 12u);
  }
  {  // Left within chunk N itself: its thread returned before the chunk ended.
    Chunk before = ChunkBeforeTheHang();
    before.seg.data.calls.push_back({110, 10, before.Probe(kGloo), kStuckAt, kStuckAt + kS});
    before.seg.data.calls.push_back({112, 12, before.Probe(kGloo), kStuckAt, kStuckAt + kS});
    EXPECT_TRUE(CarryFrom(before.Run(), {}).empty());
  }
}

TEST(AgentChunkCarry, NotCarriedForAProcessThatExited) {
  {  // Rank 0 exited in chunk N: only rank 2's entry is carried.
    Chunk before = ChunkBeforeTheHang();
    before.seg.processes[10].exited_ns = kStuckAt + kS;
    const std::vector<CarriedEntry> carried = CarryFrom(before.Run(), {});
    ASSERT_EQ(carried.size(), 1u);
    EXPECT_EQ(carried[0].pid, 12u);
  }
  const std::vector<CarriedEntry> carried0 = CarryFrom(ChunkBeforeTheHang().Run(), {});
  const int64_t now = static_cast<int64_t>(kStuckAt + 20 * kS);
  {  // Rank 0's process is not in chunk N+1 at all (it had ended when that recorder started).
    Chunk next({kC10d, kGloo});
    next.seg.processes.erase(10);
    RecordedRun run = next.Run();
    std::vector<CarriedEntry> carried = carried0;
    CarryInto(&carried, &run);
    ASSERT_EQ(carried.size(), 1u);
    EXPECT_EQ(carried[0].pid, 12u);
  }
  {  // Rank 0 exits in chunk N+1 (killed by the peers' timeout): not inside live; the finished chunk's
     // diagnosis keeps the collective it died in. A rank that exited with 0 finished its collectives.
    Chunk next({kC10d, kGloo});
    next.seg.processes[10].exited_ns = kStuckAt + 25 * kS;
    next.seg.processes[10].exit_signal = 6;
    next.seg.processes[12].exited_ns = kStuckAt + 25 * kS;
    next.seg.processes[12].exit_code = 0;
    RecordedRun live = next.Run();
    std::vector<CarriedEntry> carried = carried0;
    CarryInto(&carried, &live);
    EXPECT_EQ(Inside(live, now), (std::vector<bool>{false, false, false}));
    EXPECT_EQ(carried.size(), 2u) << "kept for the finished chunk's diagnosis";
    RecordedRun finished = next.Run();
    CarryInto(&carried, &finished, /*finished=*/true);
    ASSERT_EQ(finished.segments[0].data.call_enters.size(), 1u);
    EXPECT_EQ(finished.segments[0].data.call_enters[0].tgid, 10u);
  }
  {  // A chunk whose recorder has not said yet which processes it records judges nothing.
    RecordedRun run;
    run.segments.emplace_back();
    std::vector<CarriedEntry> carried = carried0;
    CarryInto(&carried, &run);
    EXPECT_EQ(carried.size(), 2u);
  }
}

// --- Through the live diagnosis: two chunk directories, as the flight recorder writes them ---

nlohmann::json ProbeMeta(size_t id, const RecordedProbe& p) {
  return {{"type", "probe"},
          {"id", id},
          {"symbol", p.symbol},
          {"op", p.op},
          {"kind", p.kind == ProbeKind::kCollective ? "collective" : "collective_enqueue"},
          {"library", p.library}};
}

// Writes `c` as the segment of a chunk directory (Unix time = monotonic time: the header's offset is 0), with
// each rank's main thread off CPU from the attach to `rows_until` (rows of the chunk's own).
void WriteChunk(const std::string& dir, const Chunk& c, uint64_t attached_ns, uint64_t rows_until) {
  std::filesystem::create_directories(dir);
  segments::SegmentWriter w;
  segments::FileHeader header;
  header.created_unix_ns = 1;
  ASSERT_TRUE(w.Open(dir + "/record-test-1.sseg", header).ok());
  for (size_t i = 0; i < c.seg.probes.size(); ++i) w.AppendMeta(ProbeMeta(i, c.seg.probes[i]));
  for (const auto& [pid, p] : c.seg.processes)
    w.AppendMeta({{"type", "process"}, {"pid", pid}, {"ppid", 1}, {"rank", *p.rank}, {"comm", p.comm}});
  w.AppendMeta({{"type", "attached"}, {"ts_ns", attached_ns}, {"unix_ns", attached_ns}});
  for (const auto& r : c.seg.data.call_enters) w.Append(r);
  for (const auto& r : c.seg.data.calls) w.Append(r);
  for (int r = 0; r < 3; ++r)
    w.Append(OffCpuRow{static_cast<uint32_t>(10 + r), static_cast<uint32_t>(10 + r), attached_ns, rows_until, 0, 1});
  ASSERT_TRUE(w.Close().ok());
}

TEST(AgentChunkCarry, TheLiveWindowOfANewChunkKeepsWhatThePreviousChunkLeftOpen) {
  testing::TempDir dir;
  const std::string chunk0 = dir.file("chunk-000000"), chunk1 = dir.file("chunk-000001");
  WriteChunk(chunk0, ChunkBeforeTheHang(), kS / 2, kStuckAt + 2 * kS);
  // Chunk 1 attached 1 s after ranks 0 and 2 were stuck.
  WriteChunk(chunk1, Chunk({kGloo, kC10d}), kStuckAt + kS, kStuckAt + 19 * kS);
  LiveDiagnosis live(15);
  JobState state;
  std::vector<online::RankStepSummary> summaries;
  auto inside = [&] {
    std::vector<bool> out(3);
    for (const diagnosis::RankInflight& r : state.inflight)
      if (r.rank >= 0 && r.rank < 3) out[static_cast<size_t>(r.rank)] = r.inside;
    return out;
  };
  uint64_t now = kStuckAt + 2 * kS;
  live.Round(chunk0, now, static_cast<double>(now) / 1e9, &state, &summaries);
  ASSERT_EQ(state.error, "");
  EXPECT_EQ(inside(), (std::vector<bool>{true, false, true}));
  now = kStuckAt + 20 * kS;
  live.Round(chunk1, now, static_cast<double>(now) / 1e9, &state, &summaries);
  ASSERT_EQ(state.error, "");
  EXPECT_EQ(inside(), (std::vector<bool>{true, false, true})) << "the new chunk's window lost the open entries";
  bool hang = false;
  for (const OpenFinding& f : state.open)
    hang |= f.finding.cause == diagnosis::Cause::kHang && f.finding.rank == RankNumber(1);
  EXPECT_TRUE(hang) << "rank 1's hang named from the new chunk";
}

// A step rhythm (two all_reduces per 100 ms step) written as a live recorder does: `Steps` appends steps
// [from, to) of every rank to a segment still open. Step k starts at kRhythmStart + k * 100 ms.
constexpr uint64_t kRhythmStart = kS;
constexpr int64_t kRealtimeOffsetNs = 1'700'000'000LL * 1'000'000'000LL;
uint64_t StepStart(int k) { return kRhythmStart + static_cast<uint64_t>(k) * 100 * kMs; }

struct LiveSegment {
  segments::SegmentWriter w;
  LiveSegment(const std::string& dir, uint64_t attached_ns) {
    std::filesystem::create_directories(dir);
    segments::FileHeader header;
    header.created_unix_ns = 1;
    header.realtime_minus_monotonic_ns = kRealtimeOffsetNs;
    EXPECT_TRUE(w.Open(dir + "/record-test-1.sseg", header).ok());
    w.AppendMeta(ProbeMeta(0, kGloo));
    for (int r = 0; r < 3; ++r)
      w.AppendMeta({{"type", "process"}, {"pid", 10 + r}, {"ppid", 1}, {"rank", r}, {"comm", "python3"}});
    w.AppendMeta({{"type", "attached"}, {"ts_ns", attached_ns}, {"unix_ns", attached_ns}});
  }
  void Steps(int from, int to) {
    for (int k = from; k < to; ++k)
      for (uint32_t r = 0; r < 3; ++r) {
        const uint32_t pid = 10 + r, worker = pid + 100;
        const uint64_t t0 = StepStart(k);
        w.Append(OffCpuRow{pid, pid, t0 + 30 * kMs, t0 + 100 * kMs, 0, 1});
        w.Append(CallRow{worker, pid, 0, t0 + 30 * kMs, t0 + 41 * kMs});
        w.Append(CallRow{worker, pid, 0, t0 + 43 * kMs, t0 + 44 * kMs});
      }
    EXPECT_TRUE(w.Flush().ok());
  }
};

// CI's run of 227701d (agent_nodes): a node's flight recorder switched chunks mid-job (a deep window) and
// serve then judged 12 of its steps without that node's ranks and realigned them: the steps between the old
// chunk's last round and the new recorder's attaching were read by no round, so the node's step numbers fell
// behind its peers'. The old chunk's last read is summarized before the new chunk's: every step is emitted
// once, numbered in order, none lost, whatever the chunk it was read from.
TEST(AgentChunkCarry, NoStepIsLostWhenTheLiveWindowMovesToANewChunk) {
  testing::TempDir dir;
  const std::string chunk0 = dir.file("chunk-000000"), chunk1 = dir.file("chunk-000001");
  LiveDiagnosis live(15);
  JobState state;
  std::vector<online::RankStepSummary> summaries;
  LiveSegment old_chunk(chunk0, kRhythmStart - 100 * kMs);
  old_chunk.Steps(0, 20);
  live.Round(chunk0, StepStart(20), static_cast<double>(StepStart(20)) / 1e9, &state, &summaries);
  ASSERT_EQ(state.error, "");
  // The old recorder writes on until past the new one's attaching at step 25, then stops.
  old_chunk.Steps(20, 30);
  ASSERT_TRUE(old_chunk.w.Close().ok());
  {
    LiveSegment new_chunk(chunk1, StepStart(25) + 50 * kMs);
    new_chunk.Steps(26, 60);
    ASSERT_TRUE(new_chunk.w.Close().ok());
  }
  live.Round(chunk1, StepStart(60), static_cast<double>(StepStart(60)) / 1e9, &state, &summaries);
  ASSERT_EQ(state.error, "");
  std::vector<const online::RankStepSummary*> rank0;
  for (const auto& s : summaries)
    if (s.rank == 0) rank0.push_back(&s);
  ASSERT_GE(rank0.size(), 50u) << "steps 1..58 of 60 are complete";
  const double first_start = rank0[0]->start_unix;
  for (size_t i = 0; i < rank0.size(); ++i) {
    ASSERT_EQ(rank0[i]->step, rank0[0]->step + static_cast<int64_t>(i)) << "emitted once each, in order";
    // Step number n starts n steps of 100 ms after the first: none lost between the chunks.
    EXPECT_NEAR(rank0[i]->start_unix - first_start, 0.1 * static_cast<double>(i), 0.01)
        << "step " << rank0[i]->step << " is not the job's step " << i << " after the first";
  }
}

// The flight recorder reads a new chunk only once its recorder has written its `attached` record (and the
// previous recorder has written since): until then the previous chunk stays the one read. The recorder
// stand-in copies a prepared segment into its chunk when told to (a file appears), then stays alive.
TEST(AgentChunkCarry, TheFlightRecorderSwitchesToANewChunkOnlyOnceItsRecorderIsAttached) {
  testing::TempDir dir;
  const std::string prepared = dir.file("prepared");
  WriteChunk(prepared, Chunk({kC10d, kGloo}), 1, kS);  // `attached` at Unix 1 ns: before any write of chunk 0
  const std::string recorder = dir.file("recorder.sh"), go = dir.file("go");
  // argv: record -q --no-nccl-plugin -o CHUNK ...: $5 is the chunk.
  std::ofstream(recorder) << "#!/bin/sh\nmkdir -p \"$5\"\ntouch \"$5/record-x-1.sseg\"\n"
                          << "while [ ! -e " << go << " ]; do sleep 0.02; done\n"
                          << "cp " << prepared << "/record-test-1.sseg \"$5/record-x-1.sseg\"\nexec sleep 60\n";
  std::filesystem::permissions(recorder, std::filesystem::perms::owner_all);
  FlightRecorder flight(dir.file("job"), FlightOptions{recorder});
  auto name = [](const std::string& path) { return std::filesystem::path(path).filename().string(); };
  flight.Update({4242}, 0.0);
  EXPECT_EQ(name(flight.current_chunk()), "chunk-000000") << "the first chunk is read at once";
  flight.Update({4242, 4243}, 1.0);  // new processes: a new chunk, pending
  EXPECT_EQ(name(flight.newest_chunk()), "chunk-000001");
  EXPECT_EQ(name(flight.current_chunk()), "chunk-000000") << "switched before the new recorder attached";
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  flight.Update({4242, 4243}, 2.0);
  EXPECT_EQ(name(flight.current_chunk()), "chunk-000000") << "switched before the new recorder attached";
  std::ofstream(go).put('\n');
  for (int i = 0; i < 200 && name(flight.current_chunk()) != "chunk-000001"; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    flight.Update({4242, 4243}, 2.0 + 0.02 * i);  // the stand-ins hold chunk 0's file: written long after 1 ns
  }
  EXPECT_EQ(name(flight.current_chunk()), "chunk-000001") << "the attached chunk became the one read";
  flight.Stop();
}

// Sets the modification time of `path` to `unix_ns`.
void SetWriteTime(const std::string& path, int64_t unix_ns) {
  const timespec t{static_cast<time_t>(unix_ns / 1'000'000'000), static_cast<long>(unix_ns % 1'000'000'000)};
  const timespec times[2] = {t, t};
  ASSERT_EQ(::utimensat(AT_FDCWD, path.c_str(), times, 0), 0) << path;
}

// The switch waits until the previous recorder has written a handover past the new one's attaching (so the
// step under way at the attach ends in the previous chunk, with the next begun: CI's run of 227701d lost it
// when the switch followed the first write past the attach), or until the handover and 3 s more have passed
// since the attach was seen (a stalled writer). The handover is 2.5 of the job's steps, within [1, 30] s; 0 while no
// step is known.
TEST(AgentChunkCarry, TheSwitchWaitsForTheHandoverPastTheNewRecordersAttaching) {
  EXPECT_DOUBLE_EQ(HandoverSeconds(0), 0) << "no step known yet: the switch waits only for a write past the attach";
  EXPECT_DOUBLE_EQ(HandoverSeconds(0.06), 1);
  EXPECT_DOUBLE_EQ(HandoverSeconds(2), 5);
  EXPECT_DOUBLE_EQ(HandoverSeconds(100), 30);
  testing::TempDir dir;
  const int64_t attach_ns = 1'700'000'000LL * 1'000'000'000LL;
  const std::string prepared = dir.file("prepared");
  WriteChunk(prepared, Chunk({kC10d, kGloo}), static_cast<uint64_t>(attach_ns), static_cast<uint64_t>(attach_ns));
  const std::string recorder = dir.file("recorder.sh");
  // argv: record -q --no-nccl-plugin -o CHUNK ...: $5 is the chunk. Every stand-in writes its segment at once.
  std::ofstream(recorder) << "#!/bin/sh\nmkdir -p \"$5\"\ncp " << prepared
                          << "/record-test-1.sseg \"$5/record-x-1.sseg.tmp\"\n"
                          << "mv \"$5/record-x-1.sseg.tmp\" \"$5/record-x-1.sseg\"\nexec sleep 60\n";
  std::filesystem::permissions(recorder, std::filesystem::perms::owner_all);
  auto name = [](const std::string& path) { return std::filesystem::path(path).filename().string(); };
  for (const bool stalled_writer : {false, true}) {
    FlightRecorder flight(dir.file(stalled_writer ? "job-b" : "job-a"), FlightOptions{recorder});
    flight.set_handover_s(HandoverSeconds(2));  // 5 s
    flight.Update({4242}, 0.0);
    flight.Update({4242, 4243}, 1.0);  // new processes: a new chunk, pending
    const std::string old_file = flight.current_chunk() + "/record-x-1.sseg";
    const std::string new_file = flight.newest_chunk() + "/record-x-1.sseg";
    for (int i = 0; i < 250 && !(std::filesystem::exists(old_file) && std::filesystem::exists(new_file)); ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    ASSERT_TRUE(std::filesystem::exists(new_file));
    SetWriteTime(old_file, attach_ns + 2'000'000'000);  // written 2 s past the attach
    flight.Update({4242, 4243}, 2.0);                   // the new recorder's attach is seen
    flight.Update({4242, 4243}, 3.0);
    EXPECT_EQ(name(flight.current_chunk()), "chunk-000000") << "switched 2 s past the attach (handover 5 s)";
    if (stalled_writer) {
      flight.Update({4242, 4243}, 2.0 + 7.9);
      EXPECT_EQ(name(flight.current_chunk()), "chunk-000000");
      flight.Update({4242, 4243}, 2.0 + 8.0);
      EXPECT_EQ(name(flight.current_chunk()), "chunk-000001") << "3 s past the handover since the attach was seen";
    } else {
      SetWriteTime(old_file, attach_ns + 5'100'000'000);
      flight.Update({4242, 4243}, 3.1);
      EXPECT_EQ(name(flight.current_chunk()), "chunk-000001") << "written past the handover";
    }
    flight.Stop();
  }
}

}  // namespace
}  // namespace strata::agent
#endif  // STRATA_HAVE_RECORDER
