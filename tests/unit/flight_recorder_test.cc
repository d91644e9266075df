// PyTorch Flight Recorder dumps (issue 48 item 2): the decoder (importers/flight_recorder_decoder) and the
// findings (analysis/diagnosis/flight_recorder_findings) through the job loader and Diagnose, on dumps that
// tests/flight_recorder/make_dumps.py writes with Python's pickle.dumps(..., protocol=2) (and the JSON form)
// from the documented fields. Every case asserts the rank, the process group, the sequence number and the
// cause; an answer that disagrees with what the dumps hold fails.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <variant>

#include "analysis/diagnosis/diagnose.h"
#include "analysis/diagnosis/flight_recorder_findings.h"
#include "importers/flight_recorder_decoder.h"
#include "importers/job_loader.h"
#include "test_paths.h"
#include "test_util.h"

namespace strata {
namespace {

using diagnosis::Cause;
using diagnosis::DiagnosisResult;
using diagnosis::Finding;
using diagnosis::Observer;
using diagnosis::RankStateKind;
using diagnosis::StallEvidence;

/// Writes the dumps of `kase` into `dir` (tests/flight_recorder/make_dumps.py).
void MakeDumps(const std::string& kase, const std::string& dir, const std::string& version = "") {
  const std::string cmd = "/usr/bin/python3 " + std::string(::strata::test_paths::kSourceDir) +
                          "/tests/flight_recorder/make_dumps.py " + kase + " " + dir +
                          (version.empty() ? "" : " --version " + version);
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
}

/// The dumps of `kase`, loaded from their directory and diagnosed.
DiagnosisResult DiagnoseCase(const std::string& kase, const std::string& version = "") {
  testing::TempDir dir;
  MakeDumps(kase, dir.path(), version);
  auto job = LoadJob({dir.path()}, LoadOptions{});
  EXPECT_TRUE(job.ok()) << job.error();
  if (!job.ok()) return {};
  EXPECT_TRUE(RequireEvents(job.value(), true).ok());
  return diagnosis::Diagnose(job.value().store, {});
}

const StallEvidence& EvidenceOf(const Finding& f) {
  static const StallEvidence kNone;
  const auto* e = std::get_if<StallEvidence>(&f.evidence.kind);
  EXPECT_NE(e, nullptr) << f.summary;
  return e ? *e : kNone;
}

/// The result's findings of `cause`.
std::vector<const Finding*> FindingsOf(const DiagnosisResult& r, Cause cause) {
  std::vector<const Finding*> out;
  for (const Finding& f : r.findings)
    if (f.cause == cause) out.push_back(&f);
  return out;
}

/// A `hang` naming `rank` alone, at `communicator` #`seq`, with `waiting` waiting.
void ExpectHang(const DiagnosisResult& r, int32_t rank, const std::string& communicator, int64_t seq,
                const std::vector<int32_t>& waiting) {
  const auto hangs = FindingsOf(r, Cause::kHang);
  ASSERT_EQ(hangs.size(), 1u) << (r.findings.empty() ? std::string(diagnosis::VerdictName(r.status))
                                                     : r.findings[0].summary);
  const Finding& f = *hangs[0];
  ASSERT_TRUE(f.rank.has_value()) << f.summary;
  EXPECT_EQ(*f.rank, RankNumber(rank)) << f.summary;
  const StallEvidence& e = EvidenceOf(f);
  EXPECT_EQ(e.communicator, communicator) << f.summary;
  EXPECT_EQ(e.seq, seq) << f.summary;
  EXPECT_EQ(e.waiting_ranks, waiting) << f.summary;
  EXPECT_EQ(e.missing_ranks, std::vector<int32_t>{rank}) << f.summary;
  EXPECT_EQ(r.status, diagnosis::Verdict::kFindings);
  EXPECT_EQ(f.evidence.from, diagnosis::EvidenceSource::kFlightRecorderDumps);
}

TEST(FlightRecorderFindings, RankThatNeverEnqueuedIsNamedWithItsLastFrame) {
  const DiagnosisResult r = DiagnoseCase("hang");
  ExpectHang(r, 1, "0", 6, {0, 2, 3});
  const StallEvidence& e = EvidenceOf(*FindingsOf(r, Cause::kHang)[0]);
  ASSERT_EQ(e.missing.size(), 1u);
  EXPECT_EQ(e.op, "nccl:all_reduce");
  EXPECT_EQ(e.missing[0].frame, "Python train_step (train.py:42)");
  EXPECT_EQ(e.missing[0].last_completed_seq, 5);
  EXPECT_EQ(e.missing[0].state.kind, RankStateKind::kNeverEnqueued) << e.missing[0].state;
  EXPECT_EQ(e.missing[0].state.detail, "6");
  EXPECT_DOUBLE_EQ(e.threshold_s, 600.0);
  EXPECT_DOUBLE_EQ(e.stalled_for_s, 600.0) << "written on the timeout: waited it at least";
  EXPECT_EQ(r.ranks, 4);
  EXPECT_TRUE(FindingsOf(r, Cause::kCollectiveMismatch).empty());
}

TEST(FlightRecorderFindings, RankWithoutADumpIsInferredFromItsPeers) {
  const DiagnosisResult r = DiagnoseCase("missing_dump");
  ExpectHang(r, 1, "0", 6, {0, 2, 3});
  const Finding& f = *FindingsOf(r, Cause::kHang)[0];
  EXPECT_NE(f.summary.find("wrote no dump"), std::string::npos) << f.summary;
  EXPECT_EQ(EvidenceOf(f).missing[0].observed_by, Observer::kPeersDumps);
}

TEST(FlightRecorderFindings, SeveralMembersWithoutADumpAreEachOneCandidate) {
  testing::TempDir dir;
  MakeDumps("hang", dir.path());
  for (const char* name : {"nccl_trace_rank_1", "nccl_trace_rank_2", "nccl_trace_rank_3"})
    std::filesystem::remove(dir.file(name));
  auto job = LoadJob({dir.path()}, LoadOptions{});
  ASSERT_TRUE(job.ok()) << job.error();
  const DiagnosisResult r = diagnosis::Diagnose(job.value().store, {});
  const auto hangs = FindingsOf(r, Cause::kHang);
  ASSERT_EQ(hangs.size(), 3u);
  for (const Finding* f : hangs) {
    EXPECT_DOUBLE_EQ(f->confidence, 0.33) << f->summary;
    EXPECT_NE(f->summary.find("one of 3 members without a dump"), std::string::npos) << f->summary;
    EXPECT_EQ(EvidenceOf(*f).seq, 6);
  }
  EXPECT_EQ(*hangs[0]->rank, RankNumber(1));
}

/// A `collective_mismatch` at `communicator` #`seq` whose odd rank is `rank`, its side `odd`, the others `usual`.
void ExpectMismatch(const DiagnosisResult& r, int32_t rank, const std::string& communicator, int64_t seq,
                    const std::string& odd_text, const std::string& usual_text) {
  const auto mismatches = FindingsOf(r, Cause::kCollectiveMismatch);
  ASSERT_EQ(mismatches.size(), 1u) << r.status;
  const Finding& f = *mismatches[0];
  EXPECT_EQ(&f, &r.findings.front()) << "a mismatch comes first";
  ASSERT_TRUE(f.rank.has_value()) << f.summary;
  EXPECT_EQ(*f.rank, RankNumber(rank));
  const StallEvidence& e = EvidenceOf(f);
  EXPECT_EQ(e.communicator, communicator);
  EXPECT_EQ(e.seq, seq);
  ASSERT_EQ(e.calls.size(), 2u) << f.summary;
  for (const StallEvidence::Call& c : e.calls) {
    const bool odd = c.ranks == std::vector<int32_t>{rank};
    const std::string text = c.op + " " + c.sizes + " " + c.dtypes;
    EXPECT_NE(text.find(odd ? odd_text : usual_text), std::string::npos) << text;
  }
}

TEST(FlightRecorderFindings, SizeMismatchNamesBothSides) {
  ExpectMismatch(DiagnoseCase("size_mismatch"), 2, "0", 4, "[[512]]", "[[1024]]");
}

TEST(FlightRecorderFindings, DtypeMismatchNamesBothSides) {
  const DiagnosisResult r = DiagnoseCase("dtype_mismatch");
  ExpectMismatch(r, 3, "0", 3, "BFloat16", "Float");
  EXPECT_NE(r.findings.front().summary.find("rank(s) 3 called nccl:all_reduce"), std::string::npos)
      << r.findings.front().summary;
}

TEST(FlightRecorderFindings, P2pPeerThatNeverEnqueuedIsNamed) {
  const DiagnosisResult r = DiagnoseCase("p2p_hang");
  ExpectHang(r, 1, "0 p2p", 3, {0});
  EXPECT_EQ(EvidenceOf(*FindingsOf(r, Cause::kHang)[0]).op, "nccl:send 0->1");
}

TEST(FlightRecorderFindings, P2pNamesInGroupRanksMapToGlobalRanks) {
  const DiagnosisResult r = DiagnoseCase("p2p_subgroup");
  ExpectHang(r, 3, "1 p2p", 2, {2});
}

TEST(FlightRecorderFindings, P2pSizeMismatchNamesBothEnds) {
  const DiagnosisResult r = DiagnoseCase("p2p_size_mismatch");
  const auto mismatches = FindingsOf(r, Cause::kCollectiveMismatch);
  ASSERT_EQ(mismatches.size(), 1u) << (r.findings.empty() ? std::string(diagnosis::VerdictName(r.status))
                                                          : r.findings[0].summary);
  const StallEvidence& e = EvidenceOf(*mismatches[0]);
  EXPECT_EQ(e.communicator, "0 p2p");
  EXPECT_EQ(e.seq, 1);
  ASSERT_EQ(e.calls.size(), 2u);
  for (const StallEvidence::Call& c : e.calls)
    EXPECT_EQ(c.sizes, c.ranks == std::vector<int32_t>{0} ? "[[1024]]" : "[[512]]") << c.op;
  EXPECT_EQ(mismatches[0]->ranks, RankNumbers({0, 1}));
}

TEST(FlightRecorderFindings, P2pPairsThatCompletedAreNoFinding) {
  const DiagnosisResult r = DiagnoseCase("p2p_ok");
  EXPECT_TRUE(r.findings.empty()) << r.findings[0].summary;
  EXPECT_EQ(r.status, diagnosis::Verdict::kInconclusive);
}

TEST(FlightRecorderFindings, CoalescedGroupIsOneNumber) {
  const DiagnosisResult r = DiagnoseCase("coalesced");
  ExpectHang(r, 1, "0", 4, {0, 2});
  const StallEvidence& e = EvidenceOf(*FindingsOf(r, Cause::kHang)[0]);
  EXPECT_EQ(e.op, "nccl:coalesced [nccl:all_reduce, nccl:all_reduce]");
  EXPECT_EQ(e.missing[0].last_completed_seq, 3) << "a group's ops stay scheduled; its closing entry completed";
}

TEST(FlightRecorderFindings, MismatchInsideACoalescedGroup) {
  ExpectMismatch(DiagnoseCase("coalesced_mismatch"), 2, "0", 3, "[[1024]]; [[256]]", "[[1024]]; [[1024]]");
}

TEST(FlightRecorderFindings, WrappedRingsAreJudgedWithPgStatus) {
  const DiagnosisResult r = DiagnoseCase("ring_wrapped");
  ExpectHang(r, 1, "0", 13, {0, 2});
}

TEST(FlightRecorderFindings, WrappedRingsWithNothingCompletedAreInconclusive) {
  const DiagnosisResult r = DiagnoseCase("ring_unknown");
  EXPECT_TRUE(r.findings.empty()) << r.findings[0].summary;
  EXPECT_EQ(r.status, diagnosis::Verdict::kInconclusive);
  bool said = false;
  for (const std::string& reason : r.status_reasons) said |= reason.find("wrapped") != std::string::npos;
  EXPECT_TRUE(said);
}

TEST(FlightRecorderFindings, RankWaitingInAnotherGroupIsNotTheCulprit) {
  const DiagnosisResult r = DiagnoseCase("wavefront");
  ExpectHang(r, 3, "1", 4, {2});
  const StallEvidence& e = EvidenceOf(*FindingsOf(r, Cause::kHang)[0]);
  EXPECT_EQ(e.op, "nccl:all_gather");
  ASSERT_EQ(e.wavefront.size(), 1u);
  EXPECT_EQ(e.wavefront[0].rfind("rank 2, missing from nccl:all_reduce (pg 0 (default_pg) #6), waits in", 0), 0u)
      << e.wavefront[0];
}

TEST(FlightRecorderFindings, TorchcommsDialectNumbersEachGroupByOrder) {
  const DiagnosisResult r = DiagnoseCase("torchcomms");
  ExpectHang(r, 1, "1", 5, {0});
  EXPECT_EQ(EvidenceOf(*FindingsOf(r, Cause::kHang)[0]).op, "nccl:all_gather");
}

// Found by fuzz_flight_recorder: a P2P name whose peer is no member of the group named that rank as stopped.
TEST(FlightRecorderFindings, P2pPeerOutsideTheGroupIsNotJudged) {
  FlightRecorderDump d;
  d.rank = 0;
  d.version = "2.10";
  d.pg_config["0"] = FrGroup{"0", "default_pg", {0, 1}};
  FrEntry e;
  e.record_id = 0;
  e.pg_id = 0;
  e.pg_name = "0";
  e.p2p_seq_id = 1;
  e.is_p2p = true;
  e.profiling_name = "nccl:send 0->9";
  e.state = FrState::kStarted;
  d.entries.push_back(e);
  FlightRecorderDumps dumps;
  dumps.dumps.push_back(d);
  dumps.dumps.push_back(d);
  dumps.dumps[1].rank = 1;
  for (const Finding& f : diagnosis::JudgeFlightRecorder(dumps).findings)
    EXPECT_FALSE(f.rank == RankNumber(9)) << f.summary;
}

TEST(FlightRecorderFindings, ComparedWithARecordingsHangs) {
  Finding recorded;
  recorded.cause = Cause::kHang;
  recorded.rank = RankNumber(1);
  diagnosis::FlightRecorderJudgement dumps;
  dumps.findings.push_back(recorded);
  EXPECT_EQ(diagnosis::CompareWithRecording({recorded}, dumps),
            "the recording and the Flight Recorder dumps agree: rank(s) 1 stopped");
  dumps.findings[0].rank = RankNumber(2);
  EXPECT_EQ(diagnosis::CompareWithRecording({recorded}, dumps),
            "the recording and the Flight Recorder dumps differ: the recording names rank(s) 1 as stopped, the "
            "dumps rank(s) 2");
  EXPECT_EQ(diagnosis::CompareWithRecording({}, {}), std::nullopt);
}

TEST(FlightRecorderFindings, JsonFormSniffedByContent) {
  const DiagnosisResult r = DiagnoseCase("hang_json");
  ExpectHang(r, 1, "0", 6, {0, 2, 3});
  ASSERT_EQ(r.inputs.size(), 4u);
  EXPECT_EQ(r.inputs[1].rank, 1);
  EXPECT_EQ(r.inputs[1].format, InputFormat::kFlightRecorder);
}

class FlightRecorderVersions : public ::testing::TestWithParam<const char*> {};

TEST_P(FlightRecorderVersions, EachVersionNamesTheRankThatNeverEnqueued) {
  const DiagnosisResult r = DiagnoseCase("hang", GetParam());
  ExpectHang(r, 1, "0", 6, {0, 2, 3});
}

INSTANTIATE_TEST_SUITE_P(All, FlightRecorderVersions,
                         ::testing::Values("2.3", "2.4", "2.5", "2.6", "2.7", "2.8", "2.9", "2.10"));

// --- the decoder ----------------------------------------------------------------------------------------

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

TEST(FlightRecorderDecoder, ReadsEveryDocumentedField) {
  testing::TempDir dir;
  MakeDumps("hang", dir.path());
  auto dump = DecodeFlightRecorderDump(ReadAll(dir.file("nccl_trace_rank_0")), dir.file("nccl_trace_rank_0"));
  ASSERT_TRUE(dump.ok()) << dump.error();
  const FlightRecorderDump& d = dump.value();
  EXPECT_EQ(d.rank, 0);
  EXPECT_EQ(d.rank_source, "file name");
  EXPECT_EQ(d.version, "2.10");
  EXPECT_EQ(d.version_minor, 10);
  EXPECT_EQ(d.dialect, FrDialect::kTorch);
  EXPECT_EQ(d.comm_lib_version, "2.21.5");
  EXPECT_EQ(d.unknown_keys, 0u);
  ASSERT_EQ(d.pg_config.count("0"), 1u);
  EXPECT_EQ(d.pg_config.at("0").desc, "default_pg");
  EXPECT_EQ(d.pg_config.at("0").ranks, (std::vector<int32_t>{0, 1, 2, 3}));
  ASSERT_EQ(d.pg_status.count("0"), 1u);
  EXPECT_EQ(d.pg_status.at("0").last_enqueued, 6);
  EXPECT_EQ(d.pg_status.at("0").last_started, 6);
  EXPECT_EQ(d.pg_status.at("0").last_completed, 5);
  ASSERT_EQ(d.entries.size(), 6u);
  const FrEntry& last = d.entries.back();
  EXPECT_EQ(last.record_id, 5);
  EXPECT_EQ(last.pg_id, 0);
  EXPECT_EQ(last.pg_name, "0");
  EXPECT_EQ(last.pg_desc, "default_pg");
  EXPECT_EQ(last.collective_seq_id, 6);
  EXPECT_EQ(last.op_id, 6);
  EXPECT_EQ(last.profiling_name, "nccl:all_reduce");
  EXPECT_EQ(last.state, FrState::kStarted);
  EXPECT_TRUE(last.time_discovered_started_ns.has_value());
  EXPECT_FALSE(last.time_discovered_completed_ns.has_value());
  EXPECT_EQ(last.input_sizes, (std::vector<std::vector<int64_t>>{{1024}}));
  EXPECT_EQ(last.input_dtypes, std::vector<std::string>{"Float"});
  EXPECT_EQ(last.timeout_ms, 600000);
  EXPECT_FALSE(last.is_p2p);
  ASSERT_EQ(last.frames.size(), 3u);
  EXPECT_EQ(last.frames[1].name, "train_step");
  EXPECT_EQ(last.frames[1].line, 42);
  EXPECT_EQ(d.entries.front().duration_ms, 0.4);
}

TEST(FlightRecorderDecoder, OlderVersionsLackOptionalFields) {
  testing::TempDir dir;
  MakeDumps("hang", dir.path(), "2.3");
  auto dump = DecodeFlightRecorderDump(ReadAll(dir.file("nccl_trace_rank_2")), dir.file("nccl_trace_rank_2"));
  ASSERT_TRUE(dump.ok()) << dump.error();
  EXPECT_EQ(dump.value().rank, 2);
  EXPECT_EQ(dump.value().version_minor, 3);
  EXPECT_FALSE(dump.value().entries[0].timeout_ms.has_value());
  EXPECT_TRUE(dump.value().entries[0].input_dtypes.empty());
}

TEST(FlightRecorderDecoder, TorchcommsDialectIsRecognised) {
  testing::TempDir dir;
  MakeDumps("torchcomms", dir.path());
  auto dump = DecodeFlightRecorderDump(ReadAll(dir.file("nccl_trace_rank_0")), dir.file("nccl_trace_rank_0"));
  ASSERT_TRUE(dump.ok()) << dump.error();
  EXPECT_EQ(dump.value().dialect, FrDialect::kTorchcomms);
  EXPECT_EQ(dump.value().pg_config.at("1").ranks, (std::vector<int32_t>{0, 1}));
}

TEST(FlightRecorderDecoder, RankFromFileNameAndOwnKey) {
  EXPECT_EQ(RankFromDumpFileName("/tmp/nccl_trace_rank_12"), 12);
  EXPECT_EQ(RankFromDumpFileName("/tmp/fr/trace_3.json"), 3);
  EXPECT_EQ(RankFromDumpFileName("/tmp/fr/trace"), std::nullopt);
  auto dump = DecodeFlightRecorderDump(R"({"version": "2.4", "rank": 7, "entries": []})", "/x/dump_3");
  ASSERT_TRUE(dump.ok()) << dump.error();
  EXPECT_EQ(dump.value().rank, 7);
  EXPECT_EQ(dump.value().rank_source, "dump");
}

TEST(FlightRecorderDecoder, UnknownKeysAreCounted) {
  auto dump = DecodeFlightRecorderDump(
      R"({"version": "2.11", "future": 1, "entries": [{"profiling_name": "nccl:all_reduce", "collective_seq_id": 1,
          "state": "completed", "new_field": [1]}]})",
      "nccl_trace_rank_0");
  ASSERT_TRUE(dump.ok()) << dump.error();
  EXPECT_EQ(dump.value().unknown_keys, 2u);
}

/// Decoding `text` fails with an error naming the file and containing `what`.
void ExpectError(std::string_view text, const std::string& what) {
  auto dump = DecodeFlightRecorderDump(text, "/d/nccl_trace_rank_0");
  ASSERT_FALSE(dump.ok()) << text;
  EXPECT_EQ(dump.error().rfind("/d/nccl_trace_rank_0: ", 0), 0u) << dump.error();
  EXPECT_NE(dump.error().find(what), std::string::npos) << dump.error();
}

TEST(FlightRecorderDecoder, BadInputIsAnErrorNamingTheFileAndThePlace) {
  ExpectError(R"({"entries": []})", "not a Flight Recorder dump (a dict without a version key)");
  ExpectError(R"({"version": "3.0"})", "reads versions 2.x");
  ExpectError(R"({"version": 2.4})", "version: expected a str, found float");
  ExpectError(R"([1, 2])", "not a Flight Recorder dump (a list without a version key)");
  ExpectError(R"({"version": "2.4", "entries": [{"profiling_name": "nccl:all_reduce", "collective_seq_id": "x"}]})",
              "entries[0].collective_seq_id: expected an int, found str");
  ExpectError(R"({"version": "2.4", "entries": [{"profiling_name": "a", "collective_seq_id": 1, "state": "odd"}]})",
              "entries[0].state: unknown state \"odd\"");
  ExpectError(R"({"version": "2.4", "entries": [{"collective_seq_id": 1}]})", "entries[0]: no profiling_name");
  ExpectError(R"({"version": "2.4", "pg_config": {"0": {"ranks": "[0, x]"}}})", "pg_config.0.ranks");
  ExpectError("{\"version\": \"2.4\", ", "not valid JSON");
  ExpectError("\x80\x02\x63os\nsystem\n.", "GLOBAL");
  EXPECT_EQ(DecodeFlightRecorderDump("\x80\x02\x63os\nsystem\n.", "x").status().kind(), ErrorKind::kNotATrace);
  EXPECT_EQ(DecodeFlightRecorderDump(std::string_view("\x80\x02}q\x00.", 6), "x").status().kind(),
            ErrorKind::kNotATrace)
      << "an empty dict";
  EXPECT_EQ(DecodeFlightRecorderDump(std::string_view("\x80\x02}q\x00", 5), "x").status().kind(), ErrorKind::kBadInput)
      << "truncated";
  EXPECT_EQ(DecodeFlightRecorderDump(R"({"version": "2.4", "entries": 3})", "x").status().kind(), ErrorKind::kBadInput);
}

TEST(FlightRecorderDecoder, GzipDumpsWithoutSuffixAreFoundInADirectory) {
  testing::TempDir made, dir;
  MakeDumps("hang", made.path());
  for (int r = 0; r < 4; ++r) {
    const std::string name = "nccl_trace_rank_" + std::to_string(r);
    testing::WriteGzip(dir.file(name), ReadAll(made.file(name)));
  }
  auto job = LoadJob({dir.path()}, LoadOptions{});
  ASSERT_TRUE(job.ok()) << job.error();
  const DiagnosisResult r = diagnosis::Diagnose(job.value().store, {});
  ExpectHang(r, 1, "0", 6, {0, 2, 3});
}

TEST(FlightRecorderDecoder, ObjectPicklesInADirectoryArePassedOver) {
  testing::TempDir dir;
  MakeDumps("hang", dir.path());
  std::ofstream(dir.file("old_checkpoint.pt"), std::ios::binary) << "\x80\x02\x63torch\nload\n.";
  auto job = LoadJob({dir.path()}, LoadOptions{});
  ASSERT_TRUE(job.ok()) << job.error();
  EXPECT_EQ(job.value().ignored, std::vector<std::string>{dir.file("old_checkpoint.pt")});
  EXPECT_EQ(job.value().store.flight_recorder.dumps.size(), 4u);
}

TEST(FlightRecorderDecoder, FuzzSeedsDecode) {
  const std::filesystem::path dir =
      std::filesystem::path(::strata::test_paths::kSourceDir) / "tests/fuzz/corpus/flight_recorder";
  size_t seeds = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    auto dump = DecodeFlightRecorderDump(ReadAll(entry.path().string()), entry.path().string());
    EXPECT_TRUE(dump.ok()) << dump.error();
    ++seeds;
  }
  EXPECT_GE(seeds, 5u) << "seed corpus missing";
}

}  // namespace
}  // namespace strata
