// Nsight Systems SQLite exports (importers/nsys_importer.h, docs/nsys.md):
//  - the shared exports of ../shared/datasets/nsys (skipped when absent): each rank's GPU time by kind (compute
//    and communication kernels, memcpy, memset) in strata's store and in its HTA breakdown equals the same sum
//    computed by SQL straight from the file;
//  - a 4-rank job written here as four .sqlite files in nsys's table layout, rank 2's compute kernels 30 %
//    longer: the diagnosis names rank 2;
//  - NCCL's NVTX payloads: calls (and the kernels they launch) matched across ranks by communicator and sequence
//    number where matching by order pairs the wrong calls; by order without them;
//  - a file of several ranks beside other files: its ranks and theirs, a rank claimed twice an error naming both;
//  - bad inputs: a missing table (named with the file), an SQLite file that is no nsys export, a truncated
//    export: each a clear error, never a crash.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <utility>
#include <vector>

#include "analysis/diagnosis/diagnose.h"
#include "analysis/gpu_breakdown.h"
#include "analysis/job_summary.h"
#include "importers/job_loader.h"
#include "importers/nsys_names.h"
#include "importers/nsys_nccl_payload.h"
#include "importers/rank_inference.h"
#include "importers/sniff.h"
#include "model/job_model.h"
#include "model/kernel_type.h"
#include "test_util.h"

namespace strata {
namespace {

using testing::TempDir;

// --- SQL straight from a file ------------------------------------------------------------------------------

class Db {
 public:
  explicit Db(const std::string& path, bool write = false) {
    const int flags = write ? SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE : SQLITE_OPEN_READONLY;
    EXPECT_EQ(sqlite3_open_v2(path.c_str(), &db_, flags, nullptr), SQLITE_OK) << path;
  }
  ~Db() { sqlite3_close(db_); }
  Db(const Db&) = delete;
  Db& operator=(const Db&) = delete;

  void Exec(const std::string& sql) {
    char* error = nullptr;
    EXPECT_EQ(sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &error), SQLITE_OK) << (error ? error : "") << sql;
    sqlite3_free(error);
  }
  // Every row of `sql` as int64 columns.
  std::vector<std::vector<int64_t>> Rows(const std::string& sql) {
    std::vector<std::vector<int64_t>> rows;
    sqlite3_stmt* stmt = nullptr;
    EXPECT_EQ(sqlite3_prepare_v2(db_, sql.c_str(), -1, &stmt, nullptr), SQLITE_OK) << sql;
    while (stmt && sqlite3_step(stmt) == SQLITE_ROW) {
      std::vector<int64_t> row;
      for (int c = 0; c < sqlite3_column_count(stmt); ++c) row.push_back(sqlite3_column_int64(stmt, c));
      rows.push_back(std::move(row));
    }
    sqlite3_finalize(stmt);
    return rows;
  }
  int64_t Int(const std::string& sql) {
    auto rows = Rows(sql);
    return rows.empty() || rows[0].empty() ? 0 : rows[0][0];
  }

 private:
  sqlite3* db_ = nullptr;
};

std::string NsysDir() { return testing::SharedDir() + "/datasets/nsys"; }

// GPU time of one rank in ns, by kind.
struct GpuTime {
  int64_t compute = 0, communication = 0, memcpy = 0, memset = 0;
  int64_t kernels = 0;  // rows
};

// The kinds by SQL: a kernel is communication when its name (demangled, as strata names it) starts with "nccl"
// or holds "ncclKernel" (HTA's rule), compute otherwise; memcpy and memset from their own tables.
GpuTime SqlGpuTime(Db& db, int64_t global_pid, int64_t device) {
  const std::string where = fmt::format("globalPid = {} AND deviceId = {}", global_pid, device);
  const std::string comm = "(s.value GLOB 'nccl*' OR s.value GLOB '*ncclKernel*')";
  const std::string kernels =
      fmt::format("FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s ON s.id = k.demangledName WHERE {}", where);
  GpuTime t;
  t.communication = db.Int(fmt::format("SELECT TOTAL(end - start) {} AND {}", kernels, comm));
  t.compute = db.Int(fmt::format("SELECT TOTAL(end - start) {} AND NOT {}", kernels, comm));
  t.kernels = db.Int(fmt::format("SELECT COUNT(*) {}", kernels));
  t.memcpy = db.Int(fmt::format("SELECT TOTAL(end - start) FROM CUPTI_ACTIVITY_KIND_MEMCPY WHERE {}", where));
  if (db.Int("SELECT COUNT(*) FROM sqlite_master WHERE name = 'CUPTI_ACTIVITY_KIND_MEMSET'"))
    t.memset = db.Int(fmt::format("SELECT TOTAL(end - start) FROM CUPTI_ACTIVITY_KIND_MEMSET WHERE {}", where));
  return t;
}

// The same from strata's store: the GPU slices of rank index `r` by category and HTA's kernel type.
GpuTime StoreGpuTime(const TraceStore& store, uint32_t r) {
  GpuTime t;
  const SliceTable& s = store.slices;
  for (size_t i = 0; i < s.size(); ++i) {
    const Track& track = store.tracks[s.track[i].value];
    if (track.rank != r || track.kind != TrackKind::kGpuStream) continue;
    const std::string_view cat = store.strings.view(s.category[i]);
    if (cat == "gpu_memcpy") {
      t.memcpy += s.dur_ns[i];
    } else if (cat == "gpu_memset") {
      t.memset += s.dur_ns[i];
    } else if (cat == "kernel") {
      ++t.kernels;
      (IsCommunicationKernel(store.strings.view(s.name[i])) ? t.communication : t.compute) += s.dur_ns[i];
    }
  }
  return t;
}

// (globalPid, device) of every rank a file holds, in (pid, device) order: the order strata numbers them.
std::vector<std::pair<int64_t, int64_t>> SqlRanks(Db& db) {
  std::vector<std::pair<int64_t, int64_t>> ranks;
  for (const auto& row : db.Rows(
           "SELECT globalPid, deviceId FROM (SELECT globalPid, deviceId FROM CUPTI_ACTIVITY_KIND_KERNEL UNION SELECT "
           "globalPid, deviceId FROM CUPTI_ACTIVITY_KIND_MEMCPY) ORDER BY (globalPid >> 24) & 16777215, deviceId"))
    ranks.emplace_back(row[0], row[1]);
  return ranks;
}

class NsysShared : public ::testing::TestWithParam<const char*> {};

TEST_P(NsysShared, GpuTimeByKindEqualsSqlOverTheFile) {
  const std::string path = NsysDir() + "/" + GetParam();
  if (!testing::Exists(path)) GTEST_SKIP() << path << " absent";
  auto job = LoadJob({path}, LoadOptions{});
  ASSERT_TRUE(job.ok()) << job.error();
  const TraceStore& store = job.value().store;
  Db db(path);
  const auto ranks = SqlRanks(db);
  ASSERT_EQ(store.ranks.size(), ranks.size());
  ASSERT_EQ(store.inputs.size(), 1u);
  EXPECT_EQ(store.inputs[0].format, InputFormat::kNsysSqlite);
  const auto rows = SlicesByRank(store);
  for (uint32_t r = 0; r < ranks.size(); ++r) {
    SCOPED_TRACE(fmt::format("rank {} (globalPid {}, device {})", r, ranks[r].first, ranks[r].second));
    EXPECT_EQ(store.ranks[r].rank, static_cast<int32_t>(r));
    const GpuTime sql = SqlGpuTime(db, ranks[r].first, ranks[r].second);
    const GpuTime got = StoreGpuTime(store, r);
    EXPECT_GT(sql.kernels, 0);
    EXPECT_EQ(got.kernels, sql.kernels);
    EXPECT_EQ(got.compute, sql.compute);
    EXPECT_EQ(got.communication, sql.communication);
    EXPECT_EQ(got.memcpy, sql.memcpy);
    EXPECT_EQ(got.memset, sql.memset);
    // The HTA breakdown `strata summary` prints: kernel time by type in µs (no step rule: no ProfilerStep).
    const auto breakdown = ComputeGpuBreakdown(store, rows[r], store.inputs[0], BreakdownOptions{});
    ASSERT_TRUE(breakdown.has_value());
    const auto& by_type = breakdown->type_time_us;
    EXPECT_NEAR(by_type[static_cast<size_t>(KernelType::kComputation)], sql.compute / 1e3, 1e-6 * sql.compute);
    EXPECT_NEAR(by_type[static_cast<size_t>(KernelType::kCommunication)], sql.communication / 1e3,
                1e-6 * sql.communication + 1e-9);
    EXPECT_NEAR(by_type[static_cast<size_t>(KernelType::kMemory)], (sql.memcpy + sql.memset) / 1e3,
                1e-6 * (sql.memcpy + sql.memset) + 1e-9);
    std::printf("%s rank %u: compute %.3f ms, communication %.3f ms, memcpy %.3f ms, memset %.3f ms (strata = SQL)\n",
                GetParam(), r, got.compute / 1e6, got.communication / 1e6, got.memcpy / 1e6, got.memset / 1e6);
  }
}

INSTANTIATE_TEST_SUITE_P(Exports, NsysShared,
                         ::testing::Values("mfu_2gpu_before.sqlite", "mfu_2gpu_after.sqlite", "mock.sqlite"));

TEST(NsysShared, RuntimeCallsAndNvtxRangesLandOnTheRanksThreads) {
  const std::string path = NsysDir() + "/mfu_2gpu_before.sqlite";
  if (!testing::Exists(path)) GTEST_SKIP() << path << " absent";
  auto job = LoadJob({path}, LoadOptions{});
  ASSERT_TRUE(job.ok()) << job.error();
  const TraceStore& store = job.value().store;
  Db db(path);
  // Runtime calls and NVTX ranges of the two python processes; the rest (launchers, shells) are skipped.
  const int64_t runtime = db.Int(
      "SELECT COUNT(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME WHERE (globalTid & ~16777215) IN (SELECT globalPid FROM "
      "CUPTI_ACTIVITY_KIND_KERNEL)");
  const int64_t nvtx = db.Int(
      "SELECT COUNT(*) FROM NVTX_EVENTS WHERE eventType IN (59, 60) AND end IS NOT NULL AND (globalTid & ~16777215) "
      "IN (SELECT globalPid FROM CUPTI_ACTIVITY_KIND_KERNEL)");
  uint64_t cpu_runtime = 0, cpu_nvtx = 0, nccl_calls = 0;
  for (size_t i = 0; i < store.slices.size(); ++i) {
    const std::string_view cat = store.strings.view(store.slices.category[i]);
    const bool cpu = store.tracks[store.slices.track[i].value].kind == TrackKind::kCpuThread;
    cpu_runtime += cpu && cat == "cuda_runtime";
    cpu_nvtx += cpu && (cat == "cpu_op" || cat == "user_annotation");
    nccl_calls += store.strings.view(store.slices.name[i]) == "nccl:send";
  }
  EXPECT_EQ(static_cast<int64_t>(cpu_runtime), runtime);
  EXPECT_EQ(static_cast<int64_t>(cpu_nvtx), nvtx);
  EXPECT_EQ(
      static_cast<int64_t>(nccl_calls),
      db.Int("SELECT COUNT(*) FROM NVTX_EVENTS WHERE COALESCE(text, (SELECT value FROM StringIds WHERE id = textId)) "
             "= 'ncclSend'"));
  // Every row read is stored or counted: the rows of processes without a GPU are counted by reason.
  const int64_t other = db.Int("SELECT COUNT(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME") - runtime;
  EXPECT_EQ(static_cast<int64_t>(store.inputs[0].skipped.Count(SkipId::kNsysProcessWithoutGpu)),
            other + db.Int("SELECT COUNT(*) FROM NVTX_EVENTS WHERE (globalTid & ~16777215) NOT IN (SELECT globalPid "
                           "FROM CUPTI_ACTIVITY_KIND_KERNEL)"));
  EXPECT_EQ(store.ranks[0].rank_source, "process and GPU order");
  // Its schema (3.25) is one strata reads: no caveat.
  EXPECT_EQ(testing::SkippedCount(store, "nsys_schema_untested_3_25_0"), 0u);
}

// --- a job written here in nsys's table layout ------------------------------------------------------------------

// The tables and columns of nsys's export (schema 3.x) that a 4-rank job needs; nsys writes more of both.
constexpr const char* kNsysSchema = R"(
CREATE TABLE StringIds (id INTEGER NOT NULL PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE META_DATA_EXPORT (name TEXT NOT NULL, value TEXT);
CREATE TABLE TARGET_INFO_SESSION_START_TIME (utcEpochNs INTEGER, utcTime TEXT, localTime TEXT, systemClockNs INTEGER);
CREATE TABLE PROCESSES (globalPid INTEGER, pid INTEGER, name TEXT);
CREATE TABLE ThreadNames (nameId INTEGER NOT NULL, priority INTEGER, globalTid INTEGER);
CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER NOT NULL,
  contextId INTEGER NOT NULL, streamId INTEGER NOT NULL, correlationId INTEGER, globalPid INTEGER,
  demangledName INTEGER NOT NULL, shortName INTEGER NOT NULL);
CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER NOT NULL, end INTEGER NOT NULL, eventClass INTEGER NOT NULL,
  globalTid INTEGER, correlationId INTEGER, nameId INTEGER NOT NULL, returnValue INTEGER NOT NULL, callchainId INTEGER);
CREATE TABLE NVTX_EVENTS (start INTEGER NOT NULL, end INTEGER, eventType INTEGER NOT NULL, rangeId INTEGER,
  category INTEGER, color INTEGER, text TEXT, globalTid INTEGER, endGlobalTid INTEGER, textId INTEGER, domainId INTEGER);
INSERT INTO StringIds VALUES (1, 'void gemm_kernel<float>(float*)'), (2, 'gemm_kernel'),
  (3, 'ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)'),
  (4, 'ncclDevKernel_AllReduce_Sum_f32_RING_LL'), (5, 'cudaLaunchKernel_v7000'), (6, 'cudaStreamSynchronize_v3020'),
  (7, 'python3'), (8, 'ncclAllReduce');
INSERT INTO META_DATA_EXPORT VALUES ('EXPORT_SCHEMA_VERSION', '3.25.0');
INSERT INTO TARGET_INFO_SESSION_START_TIME VALUES (1700000000000000000, '', '', 0);
)";

constexpr int64_t kMs = 1'000'000, kUs = 1'000;

// One rank's process: globalPid with hwId 0, vmId 1, its pid; its main thread's tid is the pid.
int64_t GlobalPid(int64_t pid) { return (int64_t{1} << 48) | (pid << 24); }

// Writes the rows of rank `rank` of a data-parallel job (process 1000 + rank, GPU 0) into an export whose tables
// exist: per step, four compute kernels of `compute_ns` each and an all-reduce kernel that ends `transfer` after the
// slowest rank's compute (`slowest_ns` per kernel), all launched by cudaLaunchKernel, a ProfilerStep#N NVTX range
// over the step and NCCL's ncclAllReduce range.
void WriteRankRows(Db& db, int rank, int steps, int64_t compute_ns, int64_t slowest_ns) {
  const int64_t pid = 1000 + rank, gpid = GlobalPid(pid), gtid = gpid | pid;
  db.Exec(fmt::format("INSERT INTO PROCESSES VALUES ({}, {}, 'python3'); INSERT INTO ThreadNames VALUES (7, 0, {});",
                      gpid, pid, gtid));
  std::string sql = "BEGIN;";
  int64_t start = 1'000 * kMs, correlation = 0;
  auto launch = [&](int64_t at, int64_t kernel_start, int64_t kernel_end, int name) {
    ++correlation;
    sql += fmt::format("INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES ({}, {}, 1, {}, {}, 5, 0, NULL);", at,
                       at + 10 * kUs, gtid, correlation);
    sql += fmt::format("INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES ({}, {}, 0, 1, 7, {}, {}, {}, {});", kernel_start,
                       kernel_end, correlation, gpid, name, name + 1);
  };
  for (int step = 0; step < steps; ++step) {
    const int64_t gpu = start + 100 * kUs;
    for (int i = 0; i < 4; ++i) launch(start + 20 * kUs * i, gpu + i * compute_ns, gpu + (i + 1) * compute_ns, 1);
    const int64_t end = gpu + 4 * slowest_ns + 2 * kMs;
    sql += fmt::format("INSERT INTO NVTX_EVENTS VALUES ({}, {}, 59, NULL, NULL, NULL, NULL, {}, NULL, 8, 1);",
                       start + 85 * kUs, start + 90 * kUs, gtid);
    launch(start + 90 * kUs, gpu + 4 * compute_ns, end, 3);
    sql += fmt::format("INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES ({}, {}, 1, {}, NULL, 6, 0, NULL);",
                       start + 200 * kUs, end + 20 * kUs, gtid);
    const int64_t next = end + 1 * kMs;
    sql += fmt::format(
        "INSERT INTO NVTX_EVENTS VALUES ({}, {}, 59, NULL, NULL, NULL, 'ProfilerStep#{}', {}, NULL, NULL, 0);", start,
        next - 1, step, gtid);
    start = next;
  }
  db.Exec(sql + "COMMIT;");
}

// An export of rank `rank` alone (WriteRankRows).
void WriteRankExport(const std::string& path, int rank, int steps, int64_t compute_ns, int64_t slowest_ns) {
  Db db(path, /*write=*/true);
  db.Exec(kNsysSchema);
  WriteRankRows(db, rank, steps, compute_ns, slowest_ns);
}

// Four rank_N.sqlite files in `dir`; rank `slow`'s compute kernels are `factor` times as long.
void WriteJob(const std::string& dir, int slow, double factor) {
  const int64_t compute = 5 * kMs, slowest = static_cast<int64_t>(compute * factor);
  for (int r = 0; r < 4; ++r)
    WriteRankExport(fmt::format("{}/rank_{}.sqlite", dir, r), r, 8, r == slow ? slowest : compute, slowest);
}

TEST(NsysConstructed, DiagnosisNamesTheRankWhoseComputeIsSlower) {
  TempDir dir;
  WriteJob(dir.path(), 2, 1.3);
  auto job = LoadJob({dir.path()}, LoadOptions{});
  ASSERT_TRUE(job.ok()) << job.error();
  const TraceStore& store = job.value().store;
  ASSERT_EQ(store.ranks.size(), 4u);
  for (int r = 0; r < 4; ++r) {
    EXPECT_EQ(store.ranks[r].rank, r);
    EXPECT_EQ(store.ranks[r].rank_source, "file name");
  }
  const diagnosis::DiagnosisResult result = diagnosis::Diagnose(store);
  ASSERT_FALSE(result.stragglers.empty());
  EXPECT_EQ(result.stragglers[0].rank, RankNumber(2));
  ASSERT_FALSE(result.findings.empty());
  EXPECT_EQ(result.findings[0].rank, RankNumber(2));
  EXPECT_EQ(result.findings[0].cause, diagnosis::Cause::kSlowCompute);
}

TEST(NsysConstructed, SessionStartsPutTheFilesOnOneClock) {
  TempDir dir;
  WriteRankExport(dir.file("rank_0.sqlite"), 0, 2, 5 * kMs, 5 * kMs);
  WriteRankExport(dir.file("rank_1.sqlite"), 1, 2, 5 * kMs, 5 * kMs);
  {
    // Rank 1's session began 5 s later: its rows, the same ns from its start, are 5 s later on the job's clock.
    Db db(dir.file("rank_1.sqlite"), true);
    db.Exec("UPDATE TARGET_INFO_SESSION_START_TIME SET utcEpochNs = utcEpochNs + 5000000000");
  }
  auto job = LoadJob({dir.path()}, LoadOptions{});
  ASSERT_TRUE(job.ok()) << job.error();
  const TraceStore& store = job.value().store;
  std::vector<int64_t> first(2, INT64_MAX);
  for (size_t i = 0; i < store.slices.size(); ++i) {
    const uint32_t r = store.tracks[store.slices.track[i].value].rank;
    first[r] = std::min(first[r], store.slices.ts_ns[i]);
  }
  EXPECT_EQ(first[1] - first[0], 5'000'000'000);
  EXPECT_EQ(store.ranks[0].base_time_ns, 1'700'000'000'000'000'000);
  EXPECT_EQ(store.ranks[1].base_time_ns, 1'700'000'000'000'000'000);
}

TEST(NsysConstructed, EvenJobHasNoStraggler) {
  TempDir dir;
  WriteJob(dir.path(), -1, 1.0);
  auto job = LoadJob({dir.path()}, LoadOptions{});
  ASSERT_TRUE(job.ok()) << job.error();
  const diagnosis::DiagnosisResult result = diagnosis::Diagnose(job.value().store);
  EXPECT_TRUE(result.stragglers.empty());
}

// --- bad inputs ---------------------------------------------------------------------------------------------------

TEST(NsysErrors, MissingKernelTableIsNamedWithTheFile) {
  TempDir dir;
  const std::string path = dir.file("rank_0.sqlite");
  {
    Db db(path, true);
    db.Exec(kNsysSchema);
    db.Exec("DROP TABLE CUPTI_ACTIVITY_KIND_KERNEL");
  }
  auto job = LoadJob({path}, LoadOptions{});
  ASSERT_FALSE(job.ok());
  EXPECT_NE(job.error().find(path), std::string::npos) << job.error();
  EXPECT_NE(job.error().find("CUPTI_ACTIVITY_KIND_KERNEL"), std::string::npos) << job.error();
}

TEST(NsysErrors, MissingColumnIsNamedWithItsTable) {
  TempDir dir;
  const std::string path = dir.file("rank_0.sqlite");
  {
    Db db(path, true);
    db.Exec(kNsysSchema);
    db.Exec(
        "DROP TABLE CUPTI_ACTIVITY_KIND_KERNEL; CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER, end INTEGER)");
  }
  auto job = LoadJob({path}, LoadOptions{});
  ASSERT_FALSE(job.ok());
  EXPECT_NE(job.error().find("CUPTI_ACTIVITY_KIND_KERNEL has no column deviceId"), std::string::npos) << job.error();
}

TEST(NsysErrors, SqliteFileThatIsNoNsysExportIsRefused) {
  TempDir dir;
  const std::string path = dir.file("other.sqlite");
  {
    Db db(path, true);
    db.Exec("CREATE TABLE t (x INTEGER); INSERT INTO t VALUES (1);");
  }
  auto job = LoadJob({path}, LoadOptions{});
  ASSERT_FALSE(job.ok());
  EXPECT_NE(job.error().find("not an Nsight Systems export"), std::string::npos) << job.error();
  EXPECT_NE(job.error().find(path), std::string::npos) << job.error();
  // Found in a folder beside traces, it is left out as a file that is no trace.
  WriteRankExport(dir.file("rank_0.sqlite"), 0, 3, 5 * kMs, 5 * kMs);
  auto folder = LoadJob({dir.path()}, LoadOptions{});
  ASSERT_TRUE(folder.ok()) << folder.error();
  EXPECT_EQ(folder.value().ignored, std::vector<std::string>{path});
}

TEST(NsysErrors, TruncatedExportIsAClearErrorNotACrash) {
  TempDir dir;
  const std::string whole = dir.file("whole.sqlite");
  WriteRankExport(whole, 0, 40, 5 * kMs, 5 * kMs);
  std::ifstream in(whole, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_GT(bytes.size(), 8192u);
  // Cut at several places: inside the header page, after the schema, half way.
  for (size_t keep : {size_t{100}, size_t{4096}, bytes.size() / 2, bytes.size() - 1000}) {
    SCOPED_TRACE(keep);
    const std::string path = dir.file(fmt::format("cut_{}.sqlite", keep));
    std::ofstream(path, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(keep));
    auto job = LoadJob({path}, LoadOptions{});
    if (job.ok()) {
      // SQLite read every page it needed: then no row may have been lost silently.
      ADD_FAILURE() << "a cut export loaded";
      continue;
    }
    EXPECT_NE(job.error().find(path), std::string::npos) << job.error();
  }
}

// A file cut at a page boundary whose header is patched to the pages left: the header check cannot see it, and
// SQLite finds the b-tree pointing past the end as it reads.
TEST(NsysErrors, CutExportWithConsistentHeaderIsAClearError) {
  TempDir dir;
  const std::string whole = dir.file("whole.sqlite");
  WriteRankExport(whole, 0, 40, 5 * kMs, 5 * kMs);
  std::ifstream in(whole, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const size_t page = (static_cast<unsigned char>(bytes[16]) << 8) | static_cast<unsigned char>(bytes[17]);
  const size_t pages = bytes.size() / page;
  ASSERT_GT(pages, 4u);
  for (size_t keep : {size_t{2}, pages / 2, pages - 1}) {
    SCOPED_TRACE(keep);
    std::string cut = bytes.substr(0, keep * page);
    for (int i = 0; i < 4; ++i) cut[28 + i] = static_cast<char>((keep >> (8 * (3 - i))) & 0xFF);
    const std::string path = dir.file(fmt::format("cut_{}.sqlite", keep));
    std::ofstream(path, std::ios::binary).write(cut.data(), static_cast<std::streamsize>(cut.size()));
    auto job = LoadJob({path}, LoadOptions{});
    ASSERT_FALSE(job.ok());
    EXPECT_NE(job.error().find(path), std::string::npos) << job.error();
    std::printf("cut to %zu of %zu pages: %s\n", keep, pages, job.error().c_str());
  }
}

// Bytes changed at random past the header (a damaged disk or copy): every load returns, with the rows SQLite
// could read or an error naming the file; none crashes or hangs. Deterministic (fixed seed).
TEST(NsysErrors, DamagedBytesNeverCrash) {
  TempDir dir;
  const std::string whole = dir.file("whole.sqlite");
  WriteRankExport(whole, 0, 20, 5 * kMs, 5 * kMs);
  std::ifstream in(whole, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  uint64_t state = 0x9E3779B97F4A7C15ULL;
  auto next = [&]() { return state = state * 6364136223846793005ULL + 1442695040888963407ULL, state >> 33; };
  int errors = 0, loaded = 0;
  for (int trial = 0; trial < 60; ++trial) {
    std::string damaged = bytes;
    for (int k = 0; k < 1 + trial % 8; ++k) damaged[100 + next() % (damaged.size() - 100)] = static_cast<char>(next());
    const std::string path = dir.file(fmt::format("damaged_{}.sqlite", trial));
    std::ofstream(path, std::ios::binary).write(damaged.data(), static_cast<std::streamsize>(damaged.size()));
    auto job = LoadJob({path}, LoadOptions{});
    if (job.ok()) {
      ++loaded;
    } else {
      ++errors;
      EXPECT_NE(job.error().find(path), std::string::npos) << job.error();
    }
  }
  std::printf("60 damaged copies: %d loaded, %d refused with an error naming the file\n", loaded, errors);
}

TEST(NsysSniff, SqliteHeaderIsSniffedAsSqlite) {
  EXPECT_EQ(SniffFormat(std::string_view("SQLite format 3\0\x10\0", 18)), SniffedFormat::kSqlite);
  EXPECT_EQ(SniffFormat("SQLite format 2"), SniffedFormat::kUnknown);
}

TEST(NsysErrors, CompressedSqliteIsRefused) {
  TempDir dir;
  const std::string plain = dir.file("plain.sqlite");
  WriteRankExport(plain, 0, 2, 5 * kMs, 5 * kMs);
  std::ifstream in(plain, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string gz = dir.file("rank_0.sqlite.gz");
  testing::WriteGzip(gz, bytes);
  auto job = LoadJob({gz}, LoadOptions{});
  ASSERT_FALSE(job.ok());
  EXPECT_NE(job.error().find("decompress it first"), std::string::npos) << job.error();
}

// A file of two processes (ranks 0 and 1 in pid order) beside a file of rank 2: a job of three ranks, each from
// its file; beside a file of rank 1 instead, rank 1 is claimed by both: the error names the two files.
TEST(NsysRanks, FileOfSeveralRanksBesideOthersAddsItsRanks) {
  TempDir dir;
  const std::string node = dir.file("node.sqlite");
  {
    Db db(node, true);
    db.Exec(kNsysSchema);
    for (int r : {0, 1}) WriteRankRows(db, r, 2, 5 * kMs, 5 * kMs);
  }
  WriteRankExport(dir.file("rank_2.sqlite"), 2, 2, 5 * kMs, 5 * kMs);
  auto job = LoadJob({node, dir.file("rank_2.sqlite")}, LoadOptions{});
  ASSERT_TRUE(job.ok()) << job.error();
  const TraceStore& store = job.value().store;
  ASSERT_EQ(store.ranks.size(), 3u);
  EXPECT_EQ(store.RankNumbers(), (std::vector<int32_t>{0, 1, 2}));
  EXPECT_EQ(store.ranks[0].rank_source, "process and GPU order");
  EXPECT_EQ(store.ranks[1].rank_source, "process and GPU order");
  EXPECT_EQ(store.ranks[2].rank_source, "file name");
  EXPECT_EQ(store.inputs[store.ranks[2].input].path, dir.file("rank_2.sqlite"));
  // Each rank's process is pid 1000 + rank: the ranks hold their own rows.
  for (const Track& t : store.tracks)
    if (t.kind == TrackKind::kCpuThread) {
      EXPECT_EQ(t.pid, 1000 + store.ranks[t.rank].rank);
    }

  WriteRankExport(dir.file("rank_1.sqlite"), 1, 2, 5 * kMs, 5 * kMs);
  auto clash = LoadJob({node, dir.file("rank_1.sqlite")}, LoadOptions{});
  ASSERT_FALSE(clash.ok());
  EXPECT_NE(clash.error().find("rank 1 is claimed by two inputs"), std::string::npos) << clash.error();
  EXPECT_NE(clash.error().find(node), std::string::npos) << clash.error();
  EXPECT_NE(clash.error().find(dir.file("rank_1.sqlite")), std::string::npos) << clash.error();
}

TEST(NsysRanks, TrailingNumberOfTheNameIsTheRankOfAnExport) {
  EXPECT_EQ(RankFromTrailingNumber("/x/report_3.sqlite"), 3);
  EXPECT_EQ(RankFromTrailingNumber("prof-12.nsys.sqlite"), 12);
  EXPECT_EQ(RankFromTrailingNumber("7.sqlite"), 7);
  EXPECT_EQ(RankFromTrailingNumber("report.sqlite"), std::nullopt);
  EXPECT_EQ(RankFromTrailingNumber("mfu_2gpu_before.sqlite"), std::nullopt);
  TempDir dir;
  for (int r : {1, 0}) WriteRankExport(dir.file(fmt::format("report_{}.sqlite", r)), r, 2, 5 * kMs, 5 * kMs);
  auto job = LoadJob({dir.path()}, LoadOptions{});
  ASSERT_TRUE(job.ok()) << job.error();
  ASSERT_EQ(job.value().store.ranks.size(), 2u);
  for (int r = 0; r < 2; ++r) {
    EXPECT_EQ(job.value().store.ranks[r].rank, r);
    EXPECT_EQ(job.value().store.ranks[r].rank_source, "file name (its last number)");
  }
  // Each file's process is pid 1000 + rank: the file named 1 holds pid 1001.
  for (const Track& t : job.value().store.tracks)
    if (t.kind == TrackKind::kCpuThread) {
      EXPECT_EQ(t.pid, 1000 + static_cast<int64_t>(t.rank));
    }
}

// One process driving two GPUs: two ranks; its CUDA API calls go to the rank of the GPU their correlation id
// launched work on, its NVTX ranges (no correlation) to its first GPU's rank; rows of a process with no GPU work
// (a launcher) are counted, not stored.
TEST(NsysRanks, OneProcessOnTwoGpusIsTwoRanksAndItsCallsFollowTheirKernels) {
  TempDir dir;
  const std::string path = dir.file("node.sqlite");
  {
    Db db(path, true);
    db.Exec(kNsysSchema);
    const int64_t gpid = GlobalPid(500), gtid = gpid | 500, launcher = GlobalPid(7) | 7;
    std::string sql;
    for (int i = 0; i < 6; ++i) {
      const int device = i % 2, corr = i + 1;
      const int64_t t = 1'000'000 + i * 100'000;
      sql += fmt::format("INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES ({}, {}, 1, {}, {}, 5, 0, NULL);", t,
                         t + 1'000, gtid, corr);
      sql += fmt::format("INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES ({}, {}, {}, 1, 7, {}, {}, 1, 2);", t + 5'000,
                         t + 50'000, device, corr, gpid);
    }
    sql += fmt::format(
        "INSERT INTO NVTX_EVENTS VALUES (900000, 2000000, 59, NULL, NULL, NULL, 'forward', {}, NULL, "
        "NULL, 0);",
        gtid);
    sql += fmt::format(
        "INSERT INTO NVTX_EVENTS VALUES (900000, 2000000, 59, NULL, NULL, NULL, 'launch', {}, NULL, "
        "NULL, 0);",
        launcher);
    sql += fmt::format(
        "INSERT INTO NVTX_EVENTS VALUES (950000, NULL, 59, NULL, NULL, NULL, 'open', {}, NULL, NULL, 0);", gtid);
    sql += fmt::format(
        "INSERT INTO NVTX_EVENTS VALUES (950000, 950000, 34, NULL, NULL, NULL, 'mark', {}, NULL, NULL, 0);", gtid);
    db.Exec(sql);
  }
  auto job = LoadJob({path}, LoadOptions{});
  ASSERT_TRUE(job.ok()) << job.error();
  const TraceStore& store = job.value().store;
  ASSERT_EQ(store.ranks.size(), 2u);
  std::vector<int> runtime(2, 0), kernels(2, 0), nvtx(2, 0);
  for (size_t i = 0; i < store.slices.size(); ++i) {
    const Track& t = store.tracks[store.slices.track[i].value];
    const std::string_view cat = store.strings.view(store.slices.category[i]);
    if (cat == "cuda_runtime") ++runtime[t.rank];
    if (cat == "kernel") ++kernels[t.rank];
    if (cat == "user_annotation") ++nvtx[t.rank];
    if (cat == "kernel") {
      EXPECT_EQ(t.pid, static_cast<int64_t>(t.rank));  // a GPU track's pid is its device
    }
  }
  EXPECT_EQ(kernels, (std::vector<int>{3, 3}));
  EXPECT_EQ(runtime, (std::vector<int>{3, 3}));
  EXPECT_EQ(nvtx, (std::vector<int>{1, 0}));
  EXPECT_EQ(store.inputs[0].skipped.Count(SkipId::kNsysProcessWithoutGpu), 1u);
  EXPECT_EQ(store.inputs[0].skipped.Count(SkipId::kNvtxRangeWithoutEnd), 1u);
  EXPECT_EQ(store.inputs[0].skipped.Count(SkipId::kNvtxNotARange), 1u);
  EXPECT_EQ(store.inputs[0].events, 13u);
}

TEST(NsysSchema, UntestedVersionIsSaidNotRefused) {
  TempDir dir;
  const std::string path = dir.file("rank_0.sqlite");
  WriteRankExport(path, 0, 2, 5 * kMs, 5 * kMs);
  {
    Db db(path, true);
    db.Exec("UPDATE META_DATA_EXPORT SET value = '4.1.0' WHERE name = 'EXPORT_SCHEMA_VERSION'");
  }
  auto job = LoadJob({path}, LoadOptions{});
  ASSERT_TRUE(job.ok()) << job.error();
  EXPECT_EQ(testing::SkippedCount(job.value().store, "nsys_schema_untested_4_1_0"), 1u);
  // And the diagnosis says it among the reasons of its status (a caveat: it blocks no verdict).
  const diagnosis::DiagnosisResult result = diagnosis::Diagnose(job.value().store);
  bool said = false;
  for (const std::string& reason : result.status_reasons)
    said |= reason.find("nsys_schema_untested_4_1_0") != std::string::npos;
  EXPECT_TRUE(said);
}

// --- NCCL's NVTX payloads -------------------------------------------------------------------------------------

// NCCL's payload of call `seq` on communicator 0xabc, as nsys writes it in jsonText: 2^20 float32 elements.
std::string NcclPayloadJson(int64_t seq, bool with_seq = true) {
  return fmt::format(R"({{"commHash": "0xabc", {}"func": "AllReduce", "count": 1048576, "datatype": "ncclFloat32"}})",
                     with_seq ? fmt::format(R"("seqNumber": {}, )", seq) : std::string());
}

// Rank `rank` of a job whose collectives are NCCL calls seen from the CPU only (no NCCL kernels): per step a
// ProfilerStep#N range, a compute kernel, and two ncclAllReduce ranges carrying NCCL's payload (sequence numbers
// 2N and 2N+1). Rank `late`'s trace begins one collective late: it lacks call 0. Rank 0 writes its payloads in
// jsonText, the others as registered strings (jsonTextId); `with_seq` false leaves sequence numbers out;
// `nccl_kernels` has each call launch its all-reduce kernel from inside its range.
void WritePayloadRank(const std::string& path, int rank, int late, bool with_seq = true, bool nccl_kernels = false) {
  Db db(path, /*write=*/true);
  db.Exec(kNsysSchema);
  db.Exec("ALTER TABLE NVTX_EVENTS ADD COLUMN jsonText TEXT; ALTER TABLE NVTX_EVENTS ADD COLUMN jsonTextId INTEGER;");
  const int64_t pid = 1000 + rank, gpid = GlobalPid(pid), gtid = gpid | pid;
  std::string sql = "BEGIN;";
  for (int step = 0; step < 4; ++step) {
    const int64_t start = (100 + 20 * step) * kMs;
    sql += fmt::format(
        "INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid, domainId) VALUES ({}, {}, 59, "
        "'ProfilerStep#{}', {}, 0);",
        start, start + 19 * kMs, step, gtid);
    sql += fmt::format("INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES ({}, {}, 1, {}, {}, 5, 0, NULL);", start,
                       start + 10 * kUs, gtid, step + 1);
    sql += fmt::format("INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES ({}, {}, 0, 1, 7, {}, {}, 1, 2);", start + kMs,
                       start + 6 * kMs, step + 1, gpid);
    for (int k = 0; k < 2; ++k) {
      const int64_t seq = 2 * step + k, at = start + (2 + 8 * k) * kMs;
      if (rank == late && seq == 0) continue;
      const std::string json = NcclPayloadJson(seq, with_seq);
      if (rank == 0) {
        sql += fmt::format(
            "INSERT INTO NVTX_EVENTS (start, end, eventType, globalTid, textId, domainId, jsonText) VALUES ({}, {}, "
            "59, "
            "{}, 8, 1, '{}');",
            at, at + 100 * kUs, gtid, json);
      } else {
        sql += fmt::format("INSERT INTO StringIds VALUES ({}, '{}');", 100 + seq, json);
        sql += fmt::format(
            "INSERT INTO NVTX_EVENTS (start, end, eventType, globalTid, textId, domainId, jsonTextId) VALUES ({}, {}, "
            "59, {}, 8, 1, {});",
            at, at + 100 * kUs, gtid, 100 + seq);
      }
      if (!nccl_kernels) continue;
      sql += fmt::format("INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES ({}, {}, 1, {}, {}, 5, 0, NULL);",
                         at + 10 * kUs, at + 20 * kUs, gtid, 1000 + seq);
      sql += fmt::format("INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES ({}, {}, 0, 1, 9, {}, {}, 3, 4);", at + kMs,
                         at + 2 * kMs, 1000 + seq, gpid);
    }
  }
  db.Exec(sql + "COMMIT;");
}

// The sequence number the payload gave the call's slice (-1 when it has none).
int64_t SeqOf(const TraceStore& store, SliceId slice) {
  const uint32_t args = store.slices.args[slice.value];
  if (!(store.slices.flags[slice.value] & kSliceCollectiveArgs) || args >= store.collective_args.size()) return -1;
  return store.collective_args[args].seq;
}

// Rank 1's trace begins one collective late: by order its first call (sequence number 1) would be paired with
// rank 0's first (0), and every later pair would be one apart. Matched by (communicator, sequence number), every
// instance holds one call: each complete one has both ranks' calls of the same number; call 0 is rank 0's alone.
TEST(NsysPayload, SequenceNumbersMatchCallsAcrossRanksNotTheirOrder) {
  TempDir dir;
  for (int r : {0, 1}) WritePayloadRank(dir.file(fmt::format("rank_{}.sqlite", r)), r, /*late=*/1);
  auto job = LoadJob({dir.path()}, LoadOptions{});
  ASSERT_TRUE(job.ok()) << job.error();
  const TraceStore& store = job.value().store;
  const model::JobModel model = model::BuildJobModel(store, SlicesByRank(store));
  const model::CollectiveModel& c = model.collectives;
  ASSERT_EQ(c.source, model::CollectiveSource::kCpuOps);
  EXPECT_EQ(c.matching, model::CollectiveMatching::kSequenceNumber);
  ASSERT_EQ(c.calls[0].size(), 8u);
  ASSERT_EQ(c.calls[1].size(), 7u);
  size_t complete = 0;
  for (const model::MatchedCollective& m : c.matched) {
    SCOPED_TRACE(m.seq);
    for (size_t r = 0; r < 2; ++r)
      if (m.call[r] >= 0) {
        EXPECT_EQ(SeqOf(store, c.calls[r][m.call[r]].slice), m.seq);
      }
    if (m.complete()) ++complete;
    EXPECT_EQ(m.complete(), m.seq != 0);
    EXPECT_EQ(store.strings.view(m.group), "nccl comm 0xabc");
  }
  EXPECT_EQ(complete, 7u);
  EXPECT_EQ(c.matched.size(), 8u);
  // The payload's size and op: 2^20 float32 elements of an all-reduce.
  const SliceId first = c.calls[1][0].slice;
  EXPECT_EQ(store.strings.view(store.slices.name[first.value]), "nccl:all_reduce");
  const CollectiveArgs& args = store.collective_args[store.slices.args[first.value]];
  EXPECT_EQ(args.in_nelems, 1048576);
  EXPECT_EQ(store.strings.view(args.dtype), "float32");
}

// The same with NCCL kernels, the collectives then: each kernel takes the payload of the call that launched it
// (its launch lies in the call's range), and kernels are matched by sequence number.
TEST(NsysPayload, KernelsTakeThePayloadOfTheCallThatLaunchedThem) {
  TempDir dir;
  for (int r : {0, 1})
    WritePayloadRank(dir.file(fmt::format("rank_{}.sqlite", r)), r, /*late=*/1, true, /*nccl_kernels=*/true);
  auto job = LoadJob({dir.path()}, LoadOptions{});
  ASSERT_TRUE(job.ok()) << job.error();
  const TraceStore& store = job.value().store;
  const model::JobModel model = model::BuildJobModel(store, SlicesByRank(store));
  const model::CollectiveModel& c = model.collectives;
  ASSERT_EQ(c.source, model::CollectiveSource::kGpuKernels);
  EXPECT_EQ(c.matching, model::CollectiveMatching::kSequenceNumber);
  ASSERT_EQ(c.calls[1].size(), 7u);
  EXPECT_EQ(SeqOf(store, c.calls[1][0].slice), 1);
  size_t complete = 0;
  for (const model::MatchedCollective& m : c.matched) {
    for (size_t r = 0; r < 2; ++r)
      if (m.call[r] >= 0) {
        EXPECT_EQ(SeqOf(store, c.calls[r][m.call[r]].slice), m.seq);
      }
    complete += m.complete();
  }
  EXPECT_EQ(complete, 7u);
}

// Without sequence numbers on every call, calls are matched by order as before (and the model says so).
TEST(NsysPayload, WithoutSequenceNumbersCallsAreMatchedByOrder) {
  TempDir dir;
  WritePayloadRank(dir.file("rank_0.sqlite"), 0, -1);
  WritePayloadRank(dir.file("rank_1.sqlite"), 1, -1, /*with_seq=*/false);
  auto job = LoadJob({dir.path()}, LoadOptions{});
  ASSERT_TRUE(job.ok()) << job.error();
  const TraceStore& store = job.value().store;
  const model::JobModel model = model::BuildJobModel(store, SlicesByRank(store));
  EXPECT_EQ(model.collectives.matching, model::CollectiveMatching::kOrder);
  ASSERT_EQ(model.collectives.matched.size(), 8u);
  for (const model::MatchedCollective& m : model.collectives.matched) {
    EXPECT_TRUE(m.complete());
    EXPECT_EQ(m.seq, -1);
  }
}

TEST(NsysPayload, ParsesNcclsKeysAndIgnoresWhatIsNotAPayload) {
  auto p = nsys::ParseNcclPayload(NcclPayloadJson(7));
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->comm, 0xabcu);
  EXPECT_EQ(p->seq, 7);
  EXPECT_EQ(p->op, "AllReduce");
  EXPECT_EQ(p->count, 1048576);
  EXPECT_EQ(p->dtype, "float32");
  // NCCL's NVTX schema labels: the communicator as a number, the size in bytes.
  p = nsys::ParseNcclPayload(R"({"NCCL communicator ID": 18446744073709551615, "Message size [bytes]": 4096})");
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->comm, UINT64_MAX);
  EXPECT_EQ(p->bytes, 4096);
  EXPECT_EQ(p->seq, -1);
  EXPECT_EQ(nsys::CommunicatorGroupName(0xabc), "nccl comm 0xabc");
  // A key of the wrong type is absent; text that is no JSON object, or has none of the keys, is no payload.
  for (const char* bad : {"", "[1, 2]", "{\"commHash\": ", "{\"other\": 1}", "null", "{\"commHash\": \"0x\"}",
                          R"({"commHash": "zz", "seqNumber": -3, "count": "many", "bytes": 1.5})"})
    EXPECT_FALSE(nsys::ParseNcclPayload(bad).has_value()) << bad;
  // The data type by NCCL's enum value (its payloads' integer field): 9 is bfloat16; out of range is absent.
  EXPECT_EQ(nsys::ParseNcclPayload(R"({"seqNumber": 1, "datatype": 9})")->dtype, "bfloat16");
  EXPECT_EQ(nsys::ParseNcclPayload(R"({"seqNumber": 1, "datatype": 99})")->dtype, "");
}

// --- names -----------------------------------------------------------------------------------------------------

TEST(NsysNames, AsKinetoNamesThem) {
  EXPECT_EQ(nsys::MemcpyName(1, 0, 2), "Memcpy HtoD (Pageable -> Device)");
  EXPECT_EQ(nsys::MemcpyName(8, 2, 2), "Memcpy DtoD (Device -> Device)");
  EXPECT_EQ(nsys::MemcpyName(99, -1, 2), "Memcpy Unknown (Unknown -> Device)");
  EXPECT_EQ(nsys::MemsetName(2), "Memset (Device)");
  EXPECT_EQ(nsys::RuntimeName("cudaLaunchKernel_v7000"), "cudaLaunchKernel");
  EXPECT_EQ(nsys::RuntimeName("cuLaunchKernelEx"), "cuLaunchKernelEx");
  EXPECT_EQ(nsys::RuntimeName("cudaGetFuncBySymbol_v11000"), "cudaGetFuncBySymbol");
  EXPECT_EQ(nsys::RuntimeName("my_v"), "my_v");
  EXPECT_EQ(nsys::NvtxRangeName("ncclAllReduce").name, "nccl:all_reduce");
  EXPECT_EQ(nsys::NvtxRangeName("ncclAllReduce").category, "cpu_op");
  EXPECT_EQ(nsys::NvtxRangeName("ncclGroupEnd").name, "ncclGroupEnd");
  EXPECT_EQ(nsys::NvtxRangeName("aten::add, op_id = 12").name, "aten::add");
  EXPECT_EQ(nsys::NvtxRangeName("aten::mm, seq = 3, op_id = 4, sizes = [[2, 2]]").name, "aten::mm");
  EXPECT_EQ(nsys::NvtxRangeName("forward, pass").name, "forward, pass");
  EXPECT_EQ(nsys::NvtxRangeName("ProfilerStep#7").name, "ProfilerStep#7");
  EXPECT_EQ(nsys::NvtxRangeName("step 3").name, "ProfilerStep#3");
  EXPECT_EQ(nsys::NvtxRangeName("train_step_12").name, "ProfilerStep#12");
  EXPECT_EQ(nsys::NvtxRangeName("Iteration: 4").name, "ProfilerStep#4");
  EXPECT_EQ(nsys::NvtxRangeName("step").name, "step");
  EXPECT_EQ(nsys::NvtxRangeName("stepper 3").name, "stepper 3");
  EXPECT_EQ(nsys::NvtxRangeName("step 3").category, "user_annotation");
}

}  // namespace
}  // namespace strata
