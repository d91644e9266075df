// JobLoader: directory expansion, rank decisions (distributedInfo > file name; --rank-map overrides),
// duplicate and unknown ranks, parallel loading, skip_unreadable.
#include "importers/job_loader.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "segments/segment_writer.h"
#include "test_util.h"

namespace strata {
namespace {

using testing::TempDir;
using testing::WriteFile;

std::string KinetoDoc(int events, int seed, const std::string& members = "") {
  std::string out = "{" + members + (members.empty() ? "" : ", ") + "\"traceEvents\": [";
  for (int i = 0; i < events; ++i) {
    out += (i ? "," : "") + std::string(R"({"ph": "X", "cat": "cpu_op", "name": "op)") +
           std::to_string((i * 7 + seed) % 13) + R"(", "pid": )" + std::to_string(seed) + R"(, "tid": 1, "ts": )" +
           std::to_string(seed * 1000 + i) + R"(, "dur": 1})";
  }
  return out + "]}";
}

std::string DistInfo(int rank) { return R"("distributedInfo": {"rank": )" + std::to_string(rank) + "}"; }

std::vector<std::string> Paths(const std::vector<InputFile>& files) {
  std::vector<std::string> out;
  for (const InputFile& f : files) out.push_back(f.path);
  return out;
}

LoadOptions Threads(unsigned n) {
  LoadOptions o;
  o.threads = n;
  return o;
}

TEST(ExpandInputs, DirectoriesAreExpandedSortedAndFiltered) {
  TempDir dir;
  std::filesystem::create_directories(dir.file("sub"));
  std::filesystem::create_directories(dir.file(".hidden"));
  WriteFile(dir.file("rank-1.json"), "[]");
  WriteFile(dir.file("rank-0.json.gz"), "[]");
  WriteFile(dir.file("sub/table.csv"), "rank\n");
  WriteFile(dir.file("README.md"), "not a trace");
  WriteFile(dir.file(".hidden/rank-9.json"), "[]");
  WriteFile(dir.file(".rank-8.json"), "[]");
  auto files = ExpandInputs({dir.path()});
  ASSERT_TRUE(files.ok()) << files.error();
  EXPECT_EQ(Paths(files.value()),
            (std::vector<std::string>{dir.file("rank-0.json.gz"), dir.file("rank-1.json"), dir.file("sub/table.csv")}));
  for (const InputFile& f : files.value()) EXPECT_TRUE(f.from_directory) << f.path;
  // A file given by name is taken whatever its name.
  auto one = ExpandInputs({dir.file("README.md")});
  ASSERT_TRUE(one.ok());
  EXPECT_EQ(Paths(one.value()), (std::vector<std::string>{dir.file("README.md")}));
  EXPECT_FALSE(one.value()[0].from_directory);
}

TEST(ExpandInputs, Errors) {
  TempDir dir;
  auto missing = ExpandInputs({dir.file("nope")});
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().find(dir.file("nope")), std::string::npos) << missing.error();
  std::filesystem::create_directories(dir.file("empty"));
  auto empty = ExpandInputs({dir.file("empty")});
  ASSERT_FALSE(empty.ok());
  EXPECT_NE(empty.error().find("no trace files"), std::string::npos) << empty.error();
}

TEST(LoadJob, DirectoryOfRanksFromFileNames) {
  TempDir dir;
  WriteFile(dir.file("worker1.json"), KinetoDoc(5, 1));
  WriteFile(dir.file("worker0.json"), KinetoDoc(3, 2));
  testing::WriteGzip(dir.file("worker2.json.gz"), KinetoDoc(4, 3));
  auto job = LoadJob({dir.path()}, Threads(1));
  ASSERT_TRUE(job.ok()) << job.error();
  const TraceStore& s = job.value().store;
  ASSERT_EQ(s.ranks.size(), 3u);
  for (int r = 0; r < 3; ++r) {
    EXPECT_EQ(s.ranks[r].rank, r);
    EXPECT_EQ(s.ranks[r].rank_source, "file name");
  }
  EXPECT_EQ(s.slices.size(), 12u);
  // Stores are merged in rank order and each rank points at its own input.
  EXPECT_EQ(s.inputs[s.ranks[0].input].path, dir.file("worker0.json"));
  EXPECT_EQ(s.inputs[s.ranks[2].input].path, dir.file("worker2.json.gz"));
  EXPECT_EQ(s.ranks[1].events, 5u);
  EXPECT_EQ(s.track(s.slices.track[0]).rank, 0u);
  EXPECT_EQ(s.track(s.slices.track.back()).rank, 2u);
  EXPECT_GT(job.value().content_bytes, 0u);
}

// Progress goes to the caller's callback (the loader prints nothing itself); the last line counts every file.
TEST(LoadJob, ProgressGoesToTheCallback) {
  TempDir dir;
  for (int r = 0; r < 3; ++r) WriteFile(dir.file("worker" + std::to_string(r) + ".json"), KinetoDoc(3, r));
  LoadOptions options = Threads(2);
  std::vector<std::string> lines;
  options.on_progress = [&](const std::string& line) { lines.push_back(line); };
  auto job = LoadJob({dir.path()}, options);
  ASSERT_TRUE(job.ok()) << job.error();
  ASSERT_GE(lines.size(), 2u);
  EXPECT_EQ(lines[lines.size() - 2].rfind("read 3/3 files (", 0), 0u) << lines[lines.size() - 2];
  EXPECT_EQ(lines.back(), "loaded 3 trace files: 3 ranks");
}

// A truth.json beside the traces is read but is no trace: the last line counts the traces and ranks alone and
// names the file left out (it said "loaded 3/3 files" for 2 ranks, issue 51).
TEST(LoadJob, ProgressCountsTracesApartFromOtherFiles) {
  TempDir dir;
  for (int r = 0; r < 2; ++r) WriteFile(dir.file("worker" + std::to_string(r) + ".json"), KinetoDoc(3, r));
  WriteFile(dir.file("truth.json"), R"({"fault": "none"})");
  LoadOptions options = Threads(1);
  std::vector<std::string> lines;
  options.on_progress = [&](const std::string& line) { lines.push_back(line); };
  auto job = LoadJob({dir.path()}, options);
  ASSERT_TRUE(job.ok()) << job.error();
  ASSERT_FALSE(lines.empty());
  EXPECT_EQ(lines.back(), "loaded 2 trace files: 2 ranks; 1 other file not a trace, left out: truth.json");
}

// Two folders whose files claim the same ranks are likely two runs (a before and an after): the error points to
// `strata diff` with both folders (it said only "rank 1 is claimed by two inputs", issue 51).
TEST(LoadJob, TwoRunsPointToDiff) {
  TempDir dir;
  std::filesystem::create_directories(dir.file("base"));
  std::filesystem::create_directories(dir.file("test"));
  WriteFile(dir.file("base/run.json"), KinetoDoc(2, 1, DistInfo(1)));
  WriteFile(dir.file("test/run.json"), KinetoDoc(2, 1, DistInfo(1)));
  auto job = LoadJob({dir.file("base"), dir.file("test")}, Threads(1));
  ASSERT_FALSE(job.ok());
  EXPECT_NE(job.error().find("rank 1 is claimed by two inputs"), std::string::npos) << job.error();
  EXPECT_NE(job.error().find("`strata diff " + dir.file("base") + " " + dir.file("test") + "`"), std::string::npos)
      << job.error();
  // Files of one folder claiming one rank are one run named wrongly: --rank-map, no diff.
  WriteFile(dir.file("base/other.json"), KinetoDoc(2, 1, DistInfo(1)));
  auto one = LoadJob({dir.file("base")}, Threads(1));
  ASSERT_FALSE(one.ok());
  EXPECT_EQ(one.error().find("strata diff"), std::string::npos) << one.error();
  EXPECT_NE(one.error().find("--rank-map"), std::string::npos) << one.error();
}

TEST(LoadJob, DistributedInfoBeatsFileName) {
  TempDir dir;
  WriteFile(dir.file("rank-5.json"), KinetoDoc(2, 1, DistInfo(1)));
  WriteFile(dir.file("rank-1.json"), KinetoDoc(2, 2, DistInfo(0)));
  auto job = LoadJob({dir.path()}, Threads(1));
  ASSERT_TRUE(job.ok()) << job.error();
  const TraceStore& s = job.value().store;
  ASSERT_EQ(s.ranks.size(), 2u);
  EXPECT_EQ(s.ranks[0].rank, 0);
  EXPECT_EQ(s.ranks[0].rank_source, "distributedInfo");
  EXPECT_EQ(s.inputs[s.ranks[0].input].path, dir.file("rank-1.json"));
  EXPECT_EQ(s.ranks[1].rank, 1);
  EXPECT_EQ(s.inputs[s.ranks[1].input].path, dir.file("rank-5.json"));
}

TEST(LoadJob, RankMapOverrides) {
  TempDir dir;
  WriteFile(dir.file("a.json"), KinetoDoc(2, 1, DistInfo(0)));
  WriteFile(dir.file("rank-0.json"), KinetoDoc(2, 2));
  LoadOptions options = Threads(1);
  options.rank_map = {{"a.json", 3}, {dir.file("rank-0.json"), 4}};
  auto job = LoadJob({dir.file("a.json"), dir.file("rank-0.json")}, options);
  ASSERT_TRUE(job.ok()) << job.error();
  const TraceStore& s = job.value().store;
  ASSERT_EQ(s.ranks.size(), 2u);
  EXPECT_EQ(s.ranks[0].rank, 3);
  EXPECT_EQ(s.ranks[0].rank_source, "rank map");
  EXPECT_EQ(s.inputs[s.ranks[0].input].path, dir.file("a.json"));
  EXPECT_EQ(s.ranks[1].rank, 4);
}

TEST(LoadJob, SameRankTwiceIsAnErrorNamingBothFiles) {
  TempDir dir;
  WriteFile(dir.file("x.json"), KinetoDoc(1, 1, DistInfo(2)));
  WriteFile(dir.file("rank-2.json"), KinetoDoc(1, 2));
  auto job = LoadJob({dir.path()}, Threads(1));
  ASSERT_FALSE(job.ok());
  EXPECT_NE(job.error().find("rank 2"), std::string::npos) << job.error();
  EXPECT_NE(job.error().find(dir.file("x.json")), std::string::npos) << job.error();
  EXPECT_NE(job.error().find(dir.file("rank-2.json")), std::string::npos) << job.error();
}

TEST(LoadJob, UnknownRankAmongSeveralSuggestsRankMap) {
  TempDir dir;
  WriteFile(dir.file("rank-0.json"), KinetoDoc(1, 1));
  WriteFile(dir.file("trace.json"), KinetoDoc(1, 2));
  auto job = LoadJob({dir.path()}, Threads(1));
  ASSERT_FALSE(job.ok());
  EXPECT_NE(job.error().find(dir.file("trace.json") + ": cannot tell which rank"), std::string::npos) << job.error();
  EXPECT_NE(job.error().find("--rank-map trace.json=RANK"), std::string::npos) << job.error();
  // With a map it loads.
  LoadOptions options = Threads(1);
  options.rank_map = {{"trace.json", 1}};
  auto mapped = LoadJob({dir.path()}, options);
  ASSERT_TRUE(mapped.ok()) << mapped.error();
  EXPECT_EQ(mapped.value().store.ranks[1].rank, 1);
}

TEST(LoadJob, OnlyFileGetsRankZero) {
  TempDir dir;
  WriteFile(dir.file("trace.json"), KinetoDoc(3, 1));
  auto job = LoadJob({dir.file("trace.json")}, Threads(1));
  ASSERT_TRUE(job.ok()) << job.error();
  ASSERT_EQ(job.value().store.ranks.size(), 1u);
  EXPECT_EQ(job.value().store.ranks[0].rank, 0);
  EXPECT_EQ(job.value().store.ranks[0].rank_source, "only file");
}

// An op table holds every rank of its job on a clock of its own: beside a Kineto trace it is an error naming
// both (issue 26: they cannot be mixed), not a job whose ranks come from two clocks.
TEST(LoadJob, OpTableBesideKinetoIsAnErrorNamingBoth) {
  TempDir dir;
  WriteFile(dir.file("ops.csv"), "rank,step,optype,start_ts,duration\n3,1,fwd,1,1\n2,1,fwd,1,1\n");
  WriteFile(dir.file("rank-0.json"), KinetoDoc(2, 1));
  auto mixed = LoadJob({dir.path()}, Threads(2));
  ASSERT_FALSE(mixed.ok());
  EXPECT_NE(mixed.error().find("ops.csv is an op table and"), std::string::npos) << mixed.error();
  EXPECT_NE(mixed.error().find("rank-0.json a profiler trace"), std::string::npos) << mixed.error();
}

TEST(LoadJob, OpTableWithManyRanks) {
  TempDir dir;
  WriteFile(dir.file("ops.csv"), "rank,step,optype,start_ts,duration\n3,1,fwd,1,1\n2,1,fwd,1,1\n");
  auto job = LoadJob({dir.path()}, Threads(2));
  ASSERT_TRUE(job.ok()) << job.error();
  const TraceStore& s = job.value().store;
  ASSERT_EQ(s.ranks.size(), 2u);
  EXPECT_EQ(s.ranks[0].rank, 2);
  EXPECT_EQ(s.ranks[1].rank, 3);
  EXPECT_EQ(s.ranks[0].input, s.ranks[1].input);
  // A rank map cannot set the rank of a multi-rank file.
  LoadOptions options = Threads(1);
  options.rank_map = {{"ops.csv", 5}};
  auto bad = LoadJob({dir.path()}, options);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().find("holds 2 ranks"), std::string::npos) << bad.error();
}

// The same file named twice (as itself, or inside a folder also given) is an error naming it: read twice, its
// ranks would be claimed twice.
TEST(LoadJob, TheSameFileTwiceIsAnError) {
  TempDir dir;
  WriteFile(dir.file("rank-0.json"), KinetoDoc(2, 1));
  WriteFile(dir.file("rank-1.json"), KinetoDoc(2, 2));
  auto twice = LoadJob({dir.file("rank-0.json"), dir.file("rank-0.json")}, Threads(1));
  ASSERT_FALSE(twice.ok());
  EXPECT_NE(twice.error().find("the same file is given twice"), std::string::npos) << twice.error();
  auto in_folder = LoadJob({dir.path(), dir.file("rank-1.json")}, Threads(1));
  ASSERT_FALSE(in_folder.ok());
  EXPECT_NE(in_folder.error().find("rank-1.json: the same file is given twice"), std::string::npos)
      << in_folder.error();
}

TEST(LoadJob, ParallelLoadGivesTheSameStore) {
  TempDir dir;
  for (int r = 0; r < 6; ++r)
    WriteFile(dir.file("rank-" + std::to_string(r) + ".json"), KinetoDoc(200 + r * 37, r + 1));
  auto serial = LoadJob({dir.path()}, Threads(1));
  auto parallel = LoadJob({dir.path()}, Threads(2));
  ASSERT_TRUE(serial.ok()) << serial.error();
  ASSERT_TRUE(parallel.ok()) << parallel.error();
  const TraceStore& a = serial.value().store;
  const TraceStore& b = parallel.value().store;
  ASSERT_EQ(a.slices.size(), b.slices.size());
  EXPECT_EQ(a.slices.ts_ns, b.slices.ts_ns);
  EXPECT_EQ(a.slices.dur_ns, b.slices.dur_ns);
  EXPECT_EQ(a.slices.name, b.slices.name);
  EXPECT_EQ(a.slices.category, b.slices.category);
  EXPECT_EQ(a.slices.track, b.slices.track);
  EXPECT_EQ(a.slices.flags, b.slices.flags);
  EXPECT_EQ(a.strings.size(), b.strings.size());
  for (uint32_t id = 0; id < a.strings.size(); ++id)
    ASSERT_EQ(a.strings.view(StringId(id)), b.strings.view(StringId(id)));
  ASSERT_EQ(a.ranks.size(), b.ranks.size());
  for (size_t r = 0; r < a.ranks.size(); ++r) {
    EXPECT_EQ(a.ranks[r].rank, b.ranks[r].rank);
    EXPECT_EQ(a.inputs[a.ranks[r].input].path, b.inputs[b.ranks[r].input].path);
  }
  EXPECT_EQ(serial.value().content_bytes, parallel.value().content_bytes);
}

TEST(LoadJob, UnreadableFiles) {
  TempDir dir;
  WriteFile(dir.file("rank-0.json"), KinetoDoc(2, 1));
  WriteFile(dir.file("rank-1.json"), R"({"traceEvents": [{"ph": "X")");
  WriteFile(dir.file("rank-2.json"), "\x01\x02garbage");
  // Named on the command line, so none of them is passed over as "not a trace".
  const std::vector<std::string> all = {dir.file("rank-0.json"), dir.file("rank-1.json"), dir.file("rank-2.json")};
  auto strict = LoadJob(all, Threads(2));
  ASSERT_FALSE(strict.ok());
  EXPECT_NE(strict.error().find(dir.file("rank-1.json") + ": invalid JSON at byte"), std::string::npos)
      << strict.error();
  EXPECT_NE(strict.error().find(dir.file("rank-2.json") + ": unrecognised format"), std::string::npos)
      << strict.error();

  LoadOptions options = Threads(2);
  options.skip_unreadable = true;
  auto lenient = LoadJob(all, options);
  ASSERT_TRUE(lenient.ok()) << lenient.error();
  ASSERT_EQ(lenient.value().unreadable.size(), 2u);
  EXPECT_EQ(lenient.value().unreadable[0].path, dir.file("rank-1.json"));
  EXPECT_EQ(lenient.value().unreadable[0].error.rfind(dir.file("rank-1.json") + ":", 0), 0u)
      << lenient.value().unreadable[0].error;
  EXPECT_EQ(lenient.value().unreadable[1].path, dir.file("rank-2.json"));
  EXPECT_EQ(lenient.value().unreadable[1].error.rfind(dir.file("rank-2.json") + ":", 0), 0u)
      << lenient.value().unreadable[1].error;
  ASSERT_EQ(lenient.value().store.ranks.size(), 1u);
  EXPECT_EQ(lenient.value().store.ranks[0].rank, 0);

  // Nothing readable at all.
  auto none = LoadJob({dir.file("rank-1.json"), dir.file("rank-2.json")}, options);
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.error().find("none of the input files"), std::string::npos) << none.error();
}

TEST(LoadJob, NonTraceJsonInADirectoryIsIgnored) {
  TempDir dir;
  WriteFile(dir.file("rank-0.json"), KinetoDoc(2, 1));
  WriteFile(dir.file("truth.json"), R"({"fault": "none", "rank": null})");
  auto job = LoadJob({dir.path()}, Threads(1));
  ASSERT_TRUE(job.ok()) << job.error();
  EXPECT_EQ(job.value().ignored, (std::vector<std::string>{dir.file("truth.json")}));
  ASSERT_EQ(job.value().store.ranks.size(), 1u);
  // Named explicitly, the same file is an error naming it.
  auto named = LoadJob({dir.file("rank-0.json"), dir.file("truth.json")}, Threads(1));
  ASSERT_FALSE(named.ok());
  EXPECT_NE(named.error().find(dir.file("truth.json")), std::string::npos) << named.error();
  EXPECT_NE(named.error().find("traceEvents"), std::string::npos) << named.error();
}

TEST(LoadJob, RealHtaTraceFilterPair) {
  const std::string dir = testing::SharedDir() + "/datasets/hta/trace_filter";
  if (!testing::Exists(dir)) GTEST_SKIP() << "dataset absent: " << dir;
  auto job = LoadJob({dir}, Threads(2));
  ASSERT_TRUE(job.ok()) << job.error();
  const TraceStore& s = job.value().store;
  ASSERT_EQ(s.ranks.size(), 2u);
  EXPECT_EQ(s.ranks[0].rank, 0);
  EXPECT_EQ(s.ranks[1].rank, 1);
  EXPECT_EQ(s.ranks[0].rank_source, "distributedInfo");
  EXPECT_EQ(s.ranks[0].world_size, 128);
  EXPECT_EQ(s.ranks[0].backend, "nccl");
  EXPECT_GT(s.slices.size(), 5000u);
}

}  // namespace
}  // namespace strata

namespace strata {
namespace {

/// A recording that saw processes pid -> rank (as `strata record` writes their meta records).
void WriteRecording(const std::string& path, const std::vector<std::pair<int, int>>& pid_rank) {
  segments::SegmentWriter writer;
  segments::FileHeader header;
  header.created_unix_ns = 1'700'000'000'000'000'000;
  ASSERT_TRUE(writer.Open(path, header).ok());
  for (const auto& [pid, rank] : pid_rank)
    writer.AppendMeta({{"type", "process"}, {"pid", pid}, {"ppid", 1}, {"rank", rank}, {"comm", "python3"}});
  ASSERT_TRUE(writer.Close().ok());
}

TEST(LoadJob, TensorboardNamesTakeTheirRankFromTheRecordingOfThePid) {
  testing::TempDir dir;
  // tensorboard_trace_handler's HOST_PID.TIMESTAMP.pt.trace.json: no rank in the name or the trace.
  WriteFile(dir.file("node1_4242.1700000000000.pt.trace.json"), KinetoDoc(3, 1));
  WriteFile(dir.file("node1_4343.1700000000001.pt.trace.json"), KinetoDoc(3, 2));
  auto without = LoadJob({dir.path()}, LoadOptions{});
  ASSERT_FALSE(without.ok());
  EXPECT_NE(without.error().find("process 4242 is in no recording given"), std::string::npos) << without.error();
  WriteRecording(dir.file("record-node1-99.sseg"), {{4242, 1}, {4343, 0}, {4444, 2}});
  auto job = LoadJob({dir.path()}, LoadOptions{});
  ASSERT_TRUE(job.ok()) << job.error();
  const TraceStore& s = job.value().store;
  ASSERT_EQ(s.ranks.size(), 2u);
  EXPECT_EQ(s.ranks[0].rank, 0);
  EXPECT_NE(s.inputs[s.ranks[0].input].path.find("node1_4343"), std::string::npos);
  EXPECT_EQ(s.ranks[1].rank, 1);
  EXPECT_EQ(s.ranks[1].rank_source, "recording (pid in file name)");
}

// A folder holding a recording beside a file that is not a trace (`strata record -o DIR` and the job's own
// truth.json or config): the recording alone is the job, as when only it is given (it was "none of the input
// files could be read").
TEST(LoadJob, ARecordingBesideAFileThatIsNoTraceIsTheJob) {
  testing::TempDir alone, beside;
  WriteRecording(alone.file("record-h-1.sseg"), {{7, 1}, {8, 0}});
  WriteRecording(beside.file("record-h-1.sseg"), {{7, 1}, {8, 0}});
  WriteFile(beside.file("truth.json"), R"({"fault": "none", "rank": null})");
  auto a = LoadJob({alone.path()}, LoadOptions{});
  auto b = LoadJob({beside.path()}, LoadOptions{});
  ASSERT_TRUE(a.ok()) << a.error();
  ASSERT_TRUE(b.ok()) << b.error();
  EXPECT_EQ(b.value().store.ranks.size(), a.value().store.ranks.size());
  EXPECT_EQ(b.value().recorded.segments.size(), 1u);
  EXPECT_EQ(b.value().ignored.size(), 1u);  // truth.json, listed as not a trace
}

TEST(LoadJob, TracePidsTakeTheirRankFromTheRecording) {
  testing::TempDir dir;
  WriteFile(dir.file("a.json"), KinetoDoc(3, 7));  // its events' pid is 7
  WriteFile(dir.file("b.json"), KinetoDoc(3, 8));
  WriteRecording(dir.file("record-h-1.sseg"), {{7, 1}, {8, 0}});
  auto job = LoadJob({dir.path()}, LoadOptions{});
  ASSERT_TRUE(job.ok()) << job.error();
  const TraceStore& s = job.value().store;
  ASSERT_EQ(s.ranks.size(), 2u);
  EXPECT_NE(s.inputs[s.ranks[0].input].path.find("b.json"), std::string::npos);
  EXPECT_EQ(s.ranks[1].rank_source, "recording (trace pid)");
}

// An op table read in the wrong time unit (issue 26): its steps are of implausible length, and the loader's
// notes carry a warning naming --time-unit-ns and the unit that gives plausible steps; the data is unchanged.
TEST(LoadJob, OpTableInTheWrongTimeUnitIsWarned) {
  TempDir dir;
  // Times in milliseconds, read as seconds (the default): steps of 1500 "s".
  WriteFile(dir.file("ops.csv"),
            "rank,step,optype,start_ts,duration\n0,1,fwd,0,700\n0,1,bwd,700,800\n1,1,fwd,0,750\n1,1,bwd,750,750\n"
            "0,2,fwd,1500,700\n0,2,bwd,2200,800\n1,2,fwd,1500,750\n1,2,bwd,2250,750\n");
  auto job = LoadJob({dir.path()}, Threads(1));
  ASSERT_TRUE(job.ok()) << job.error();
  ASSERT_EQ(job.value().notes.size(), 1u);
  const std::string& note = job.value().notes[0];
  EXPECT_NE(note.find("ops.csv: implausible time unit: the op table's steps last 1500 s (median)"), std::string::npos)
      << note;
  EXPECT_NE(note.find("--time-unit-ns 1e9"), std::string::npos) << note;
  EXPECT_NE(note.find("pass --time-unit-ns 1e6 if they are in milliseconds (steps of 1.5 s), or --time-unit-ns 1e3"),
            std::string::npos)
      << note;
  EXPECT_EQ(job.value().store.slices.dur_ns[0], int64_t{700} * 1'000'000'000);  // read as given

  // Read in milliseconds, the same table has plausible steps: no warning.
  LoadOptions ms = Threads(1);
  ms.import.op_table.time_unit_ns = 1e6;
  auto right = LoadJob({dir.path()}, ms);
  ASSERT_TRUE(right.ok()) << right.error();
  EXPECT_TRUE(right.value().notes.empty());
}

}  // namespace
}  // namespace strata
