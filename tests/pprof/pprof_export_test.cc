// The pprof export (reports/pprof_export.h) on the hand-made recording of recording_fixture.h, decoded back
// with the classes protoc generated from src/reports/pprof_profile.proto: sample types and period, sample
// counts per rank, labels, the merged native + Python stacks with file:line, the one-rank selection, the
// peers' median of a straggler, and the errors for a recording without samples.
#include "reports/pprof_export.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "importers/segment_index.h"
#include "pprof_profile.pb.h"
#include "recording_fixture.h"

namespace strata {
namespace {

constexpr int64_t kPeriodNs = 10'000'000;  // 100 Hz

RecordedRun FixtureRun(double sample_hz = 100) {
  segments::SegmentData data = pprof_fixture::PprofFixtureRecording();
  if (sample_hz != 100) data.meta[0]["sample_hz"] = sample_hz;
  RecordedRun run;
  run.segments.push_back(IndexSegment(std::move(data)));
  return run;
}

std::string Gunzip(const std::string& gz) {
  z_stream z{};
  EXPECT_EQ(inflateInit2(&z, 15 + 16), Z_OK);
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(gz.data()));
  z.avail_in = static_cast<uInt>(gz.size());
  std::string out;
  char buf[1 << 14];
  int rc = Z_OK;
  while (rc == Z_OK) {
    z.next_out = reinterpret_cast<Bytef*>(buf);
    z.avail_out = sizeof buf;
    rc = inflate(&z, Z_NO_FLUSH);
    out.append(buf, sizeof buf - z.avail_out);
  }
  inflateEnd(&z);
  EXPECT_EQ(rc, Z_STREAM_END) << "not one whole gzip stream";
  return out;
}

pprof::Profile Decode(const Expected<std::string>& gz) {
  EXPECT_TRUE(gz.ok()) << gz.error();
  pprof::Profile p;
  if (gz.ok()) {
    EXPECT_TRUE(p.ParseFromString(Gunzip(gz.value())));
  }
  return p;
}

// A decoded profile read by names rather than string indices.
struct View {
  const pprof::Profile& p;
  const std::string& S(int64_t i) const { return p.string_table(static_cast<int>(i)); }
  std::string Label(const pprof::Sample& s, const std::string& key) const {
    for (const auto& l : s.label())
      if (S(l.key()) == key) return S(l.str());
    return "";
  }
  const pprof::Function& FunctionOfLocation(uint64_t id) const {
    for (const auto& loc : p.location())
      if (loc.id() == id)
        for (const auto& f : p.function())
          if (f.id() == loc.line(0).function_id()) return f;
    ADD_FAILURE() << "no location " << id;
    return p.function(0);
  }
  std::string Leaf(const pprof::Sample& s) const { return S(FunctionOfLocation(s.location_id(0)).name()); }
  std::vector<std::string> Names(const pprof::Sample& s) const {
    std::vector<std::string> out;
    for (uint64_t id : s.location_id()) out.push_back(S(FunctionOfLocation(id).name()));
    return out;
  }
  // Sum of value `index` of the samples whose label `key` is `value` (every sample when key is "").
  int64_t Sum(int index, const std::string& key = "", const std::string& value = "") const {
    int64_t sum = 0;
    for (const auto& s : p.sample())
      if (key.empty() || Label(s, key) == value) sum += s.value(index);
    return sum;
  }
  int64_t SumOfLeaf(int index, const std::string& leaf) const {
    int64_t sum = 0;
    for (const auto& s : p.sample())
      if (Leaf(s) == leaf) sum += s.value(index);
    return sum;
  }
};

TEST(PprofExport, AllRanksWithTypesPeriodAndRankLabels) {
  const pprof::Profile p = Decode(PprofProfile(FixtureRun(), {}));
  const View v{p};
  ASSERT_EQ(p.string_table(0), "");
  ASSERT_EQ(p.sample_type_size(), 2);
  EXPECT_EQ(v.S(p.sample_type(0).type()), "samples");
  EXPECT_EQ(v.S(p.sample_type(0).unit()), "count");
  EXPECT_EQ(v.S(p.sample_type(1).type()), "cpu");
  EXPECT_EQ(v.S(p.sample_type(1).unit()), "nanoseconds");
  EXPECT_EQ(v.S(p.period_type().type()), "cpu");
  EXPECT_EQ(p.period(), kPeriodNs);
  // Rank 0: 10 + 5 + 4 + 1 (no user stack); rank 1: 30 + 5 + 4; rank 2: 20 + 5 + 4; the launcher left out.
  EXPECT_EQ(v.Sum(0), 88);
  EXPECT_EQ(v.Sum(1), 88 * kPeriodNs);
  EXPECT_EQ(v.Sum(0, "rank", "0"), 20);
  EXPECT_EQ(v.Sum(0, "rank", "1"), 39);
  EXPECT_EQ(v.Sum(0, "rank", "2"), 29);
  EXPECT_EQ(v.Sum(0, "pid", "99"), 0);
  EXPECT_EQ(v.SumOfLeaf(0, "compute_kernel"), 60);
  EXPECT_EQ(v.SumOfLeaf(0, "[no user stack]"), 1);
  for (const auto& s : p.sample()) {
    EXPECT_EQ(v.Label(s, "job"), "run");  // the folder of the segment
    EXPECT_EQ(v.Label(s, "host"), "node-a");
    const int rank = std::stoi(v.Label(s, "rank"));
    EXPECT_EQ(v.Label(s, "pid"), std::to_string(100 + 10 * rank));
    const bool worker = v.Leaf(s) == "read_socket" || v.Leaf(s) == "[no user stack]";
    EXPECT_EQ(v.Label(s, "tid"), std::to_string(100 + 10 * rank + (worker ? 1 : 0))) << v.Leaf(s);
  }
}

TEST(PprofExport, NativeAndPythonFramesMergedWithFileAndLine) {
  const pprof::Profile p = Decode(PprofProfile(FixtureRun(), {}));
  const View v{p};
  bool seen_compute = false, seen_memcpy = false;
  for (const auto& s : p.sample()) {
    const std::vector<std::string> names = v.Names(s);
    if (names[0] == "compute_kernel") {
      seen_compute = true;
      // The interpreter frame gives way to the Python frames; main stays at the root.
      EXPECT_EQ(names, (std::vector<std::string>{"compute_kernel", "Net.forward", "train_step", "main"}));
    }
    if (names[0] == "memcpy") {
      seen_memcpy = true;  // no Python frames sampled: the interpreter frame stays
      EXPECT_EQ(names, (std::vector<std::string>{"memcpy", "_PyEval_EvalFrameDefault", "main"}));
    }
  }
  EXPECT_TRUE(seen_compute && seen_memcpy);
  std::map<std::string, std::pair<std::string, int64_t>> file_line;  // function -> file, line of its location
  for (const auto& loc : p.location())
    for (const auto& f : p.function())
      if (f.id() == loc.line(0).function_id()) file_line[v.S(f.name())] = {v.S(f.filename()), loc.line(0).line()};
  EXPECT_EQ(file_line["compute_kernel"], std::make_pair(std::string("work.cc"), int64_t{42}));
  // Python frames: the line each executes at its location, the function's first line as its start line.
  EXPECT_EQ(file_line["Net.forward"], std::make_pair(std::string("train.py"), int64_t{44}));
  EXPECT_EQ(file_line["train_step"], std::make_pair(std::string("train.py"), int64_t{12}));
  std::map<std::string, int64_t> start_line;
  for (const auto& f : p.function()) start_line[v.S(f.name())] = f.start_line();
  EXPECT_EQ(start_line["Net.forward"], 42);
  EXPECT_EQ(start_line["train_step"], 10);
  EXPECT_EQ(start_line["compute_kernel"], 0);
  EXPECT_EQ(file_line["memcpy"].first, "");
  for (const auto& loc : p.location()) {  // native frames name their module, Python frames have none
    const std::string fn = v.S(v.FunctionOfLocation(loc.id()).name());
    const bool python = fn == "Net.forward" || fn == "train_step";
    EXPECT_EQ(loc.mapping_id() == 0, python || fn == "[no user stack]") << fn;
  }
}

TEST(PprofExport, ARecordingWithOnlyFirstLinesKeepsThem) {
  // Recordings made before the recorder read the executing line say each Python frame's first line alone.
  segments::SegmentData data = pprof_fixture::PprofFixtureRecording();
  for (auto& m : data.meta)
    if (m["type"] == "py_stack")
      for (auto& f : m["frames"]) {
        f["line"] = f["first_line"];
        f.erase("first_line");
      }
  RecordedRun run;
  run.segments.push_back(IndexSegment(std::move(data)));
  const pprof::Profile p = Decode(PprofProfile(run, {}));
  const View v{p};
  for (const auto& f : p.function()) {
    if (v.S(f.name()) == "Net.forward") {
      EXPECT_EQ(f.start_line(), 42);
    }
  }
  for (const auto& loc : p.location()) {
    if (v.S(v.FunctionOfLocation(loc.id()).name()) == "Net.forward") {
      EXPECT_EQ(loc.line(0).line(), 42);
    }
  }
}

TEST(PprofExport, PythonFunctionsOfOneNameAndFileAreToldApartByTheirFirstLine) {
  // Two lambdas of one file share their name; their first lines make them two functions.
  segments::SegmentData data = pprof_fixture::PprofFixtureRecording();
  for (auto& m : data.meta)
    if (m["type"] == "py_stack")
      for (auto& f : m["frames"]) f["fn"] = "<lambda>";
  RecordedRun run;
  run.segments.push_back(IndexSegment(std::move(data)));
  const pprof::Profile p = Decode(PprofProfile(run, {}));
  const View v{p};
  std::multiset<int64_t> lambdas;
  for (const auto& f : p.function())
    if (v.S(f.name()) == "<lambda>") lambdas.insert(f.start_line());
  EXPECT_EQ(lambdas, (std::multiset<int64_t>{10, 42}));
}

TEST(PprofExport, AStackIdWithoutItsRecordIsNamedSo) {
  RecordedRun run = FixtureRun();
  run.segments[0].data.samples.push_back({2000 * pprof_fixture::kFixtureMs, 100, 100, 0, 99, -1});
  const pprof::Profile p = Decode(PprofProfile(run, {}));
  const View v{p};
  EXPECT_EQ(v.SumOfLeaf(0, "[user stack not recorded]"), 1);
  EXPECT_EQ(v.SumOfLeaf(0, "[no user stack]"), 1);
  EXPECT_EQ(v.Sum(0), 89);
}

TEST(PprofExport, OneRank) {
  PprofOptions options;
  options.rank = 1;
  options.job = "my-job";
  const pprof::Profile p = Decode(PprofProfile(FixtureRun(), options));
  const View v{p};
  EXPECT_EQ(v.Sum(0), 39);
  EXPECT_EQ(v.Sum(0, "rank", "1"), 39);
  EXPECT_EQ(v.Sum(0, "job", "my-job"), 39);
  EXPECT_EQ(v.SumOfLeaf(0, "compute_kernel"), 30);
}

TEST(PprofExport, PeersMedianOfTheStraggler) {
  const pprof::Profile p = Decode(PprofPeersMedian(FixtureRun(), 1));
  const View v{p};
  // Ranks 0 and 2: compute_kernel 10 and 20 -> 15; memcpy 5 and 5; read_socket 4 and 4; the sample without a
  // user stack 1 and 0 -> 0.5, rounded to 1.
  EXPECT_EQ(v.SumOfLeaf(0, "compute_kernel"), 15);
  EXPECT_EQ(v.SumOfLeaf(1, "compute_kernel"), 15 * kPeriodNs);
  EXPECT_EQ(v.SumOfLeaf(0, "memcpy"), 5);
  EXPECT_EQ(v.SumOfLeaf(0, "read_socket"), 4);
  EXPECT_EQ(v.SumOfLeaf(0, "[no user stack]"), 1);
  for (const auto& s : p.sample()) {
    EXPECT_EQ(v.Label(s, "peers"), "median of ranks 0, 2");
    EXPECT_EQ(v.Label(s, "rank"), "");
  }
  // Against its own profile, rank 1 shows 30 - 15 more samples in compute_kernel.
  PprofOptions one;
  one.rank = 1;
  const pprof::Profile straggler = Decode(PprofProfile(FixtureRun(), one));
  EXPECT_EQ(View{straggler}.SumOfLeaf(0, "compute_kernel") - v.SumOfLeaf(0, "compute_kernel"), 15);
}

TEST(PprofExport, UnknownRateGivesSamplesOnly) {
  const pprof::Profile p = Decode(PprofProfile(FixtureRun(0), {}));
  const View v{p};
  ASSERT_EQ(p.sample_type_size(), 1);
  EXPECT_EQ(v.S(p.sample_type(0).type()), "samples");
  EXPECT_EQ(v.Sum(0), 88);
  for (const auto& s : p.sample()) EXPECT_EQ(s.value_size(), 1);
  ASSERT_EQ(p.comment_size(), 1);
  EXPECT_NE(v.S(p.comment(0)).find("sampling rate"), std::string::npos);
}

TEST(PprofExport, ErrorsNameTheRecording) {
  RecordedRun run = FixtureRun();
  PprofOptions seven;
  seven.rank = 7;
  const auto no_rank = PprofProfile(run, seven);
  ASSERT_FALSE(no_rank.ok());
  EXPECT_NE(no_rank.error().find("rank 7 has no CPU stack samples"), std::string::npos) << no_rank.error();
  EXPECT_EQ(RanksWithSamples(run), (std::set<int32_t>{0, 1, 2}));
  run.segments[0].data.samples.clear();
  const auto none = PprofProfile(run, {});
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.error().find("run/record-node-a.sseg"), std::string::npos) << none.error();
  EXPECT_NE(none.error().find("no CPU stack samples"), std::string::npos) << none.error();
  EXPECT_FALSE(PprofPeersMedian(run, 1).ok());
}

TEST(PprofExport, StragglerWithoutPeersIsAnError) {
  RecordedRun run = FixtureRun();
  auto& rows = run.segments[0].data.samples;
  std::erase_if(rows, [&](const SampleRow& s) { return run.segments[0].RankOf(s.tgid) != 1; });
  const auto only = PprofPeersMedian(run, 1);
  ASSERT_FALSE(only.ok());
  EXPECT_NE(only.error().find("no peers"), std::string::npos) << only.error();
}

}  // namespace
}  // namespace strata
