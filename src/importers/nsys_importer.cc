// Mapping an Nsight Systems export's rows into the store (see nsys_importer.h, docs/nsys.md).
#include "importers/nsys_importer.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

#include "importers/nsys_names.h"
#include "importers/nsys_nccl_launches.h"
#include "importers/nsys_nccl_payload.h"
#include "importers/nsys_sqlite_reader.h"
#include "importers/span_checks.h"

namespace strata {
namespace {

using nsys::NsysSqliteReader;
using nsys::SqlRow;

constexpr std::string_view kKernels = "CUPTI_ACTIVITY_KIND_KERNEL";
constexpr std::string_view kMemcpys = "CUPTI_ACTIVITY_KIND_MEMCPY";
constexpr std::string_view kMemsets = "CUPTI_ACTIVITY_KIND_MEMSET";
constexpr std::string_view kRuntime = "CUPTI_ACTIVITY_KIND_RUNTIME";
constexpr std::string_view kNvtx = "NVTX_EVENTS";
constexpr std::string_view kStrings = "StringIds";
// The schema major version the importer was written and tested against (nsys 2023-2026 write 3.x).
constexpr std::string_view kTestedSchemaMajor = "3";
// NVTX_EVENTS eventType ids of ranges (ENUM_NSYS_EVENT_TYPE): push/pop and start/end, NVTX and NVTXt.
constexpr std::array<int64_t, 4> kNvtxRangeTypes = {59, 60, 70, 71};
// How nsys_names.h names NCCL's API calls: "nccl:all_reduce".
constexpr std::string_view kNcclCallPrefix = "nccl:";

// nsys's serialized global ids: the process id in bits 24..47, the thread id in bits 0..23; a globalPid is its
// globalTid with the thread bits cleared.
int64_t PidOf(int64_t global_id) { return (global_id >> 24) & 0xFFFFFF; }
int64_t TidOf(int64_t global_tid) { return global_tid & 0xFFFFFF; }
int64_t ProcessOf(int64_t global_tid) { return global_tid & ~int64_t{0xFFFFFF}; }

// Whether the SQLite file is an Nsight Systems export at all: its string table and one of its event tables.
bool IsNsysExport(const NsysSqliteReader& db) {
  return db.HasTable(kStrings) && (db.HasTable(kKernels) || db.HasTable(kNvtx) || db.HasTable(kRuntime) ||
                                   db.HasTable("META_DATA_EXPORT") || db.HasTable("TARGET_INFO_SESSION_START_TIME"));
}

// NsysStoreBuilder: reads one export's tables in a fixed order (clock, strings, ranks, GPU rows, CPU rows, track
// names) into a store of its own. Invariants: ranks are known before any row is stored, GPU rows before the CPU
// calls that launched them (so a call finds its kernel's rank); every row a query returns is stored or counted
// once in the input's skipped reasons; nothing is stored from a query that failed (Build returns its error and
// the store is dropped).
class NsysStoreBuilder {
 public:
  explicit NsysStoreBuilder(std::unique_ptr<NsysSqliteReader> db) : db_(std::move(db)) {
    store_.inputs.emplace_back();
    store_.inputs[0].path = db_->path();
    store_.inputs[0].format = InputFormat::kNsysSqlite;
  }

  Status Build() {
    if (Status st = RequireSchema(); !st.ok()) return st;
    NoteSchemaVersion();
    // In this order: names and ranks before rows; GPU rows before the CPU calls that launched them.
    for (auto step : {&NsysStoreBuilder::ReadClock, &NsysStoreBuilder::ReadStrings, &NsysStoreBuilder::FindRanks,
                      &NsysStoreBuilder::FindPayloads, &NsysStoreBuilder::ReadKernels, &NsysStoreBuilder::ReadMemcpys,
                      &NsysStoreBuilder::ReadMemsets, &NsysStoreBuilder::ReadRuntime, &NsysStoreBuilder::ReadNvtx,
                      &NsysStoreBuilder::NameTracks})
      if (Status st = (this->*step)(); !st.ok()) return st;
    Finish();
    return Status::Ok();
  }
  TraceStore Take() { return std::move(store_); }

 private:
  InputInfo& input() { return store_.inputs[0]; }
  void Skip(SkipId reason) { input().skipped.Add(reason); }

  // The tables and columns every later query reads; an error names the first one missing.
  Status RequireSchema() {
    for (std::string_view table : {kStrings, kKernels})
      if (!db_->HasTable(table))
        return Status::Unsupported(fmt::format(
            "{}: an Nsight Systems export without the table {}: strata needs its CUDA kernels (record with `nsys "
            "profile --trace=cuda,nvtx ...`, then `nsys export --type sqlite`)",
            db_->path(), table));
    for (std::string_view column : {"start", "end", "deviceId", "streamId", "globalPid", "shortName"})
      if (!db_->HasColumn(kKernels, column))
        return Status::Unsupported(
            fmt::format("{}: table {} has no column {}: not a layout of nsys's export strata reads", db_->path(),
                        kKernels, column));
    return Status::Ok();
  }

  // An export of a schema other than 3.x is read all the same, and said (a skip reason of the input).
  void NoteSchemaVersion() {
    std::string version;
    if (db_->HasTable("META_DATA_EXPORT"))
      (void)db_->ForEachRow("SELECT value FROM META_DATA_EXPORT WHERE name = 'EXPORT_SCHEMA_VERSION'",
                            "its schema version", [&](const SqlRow& row) { version = std::string(row.Text(0)); });
    if (version.substr(0, version.find('.')) == kTestedSchemaMajor) return;
    std::string detail = version.empty() ? "unknown" : version;
    std::replace(detail.begin(), detail.end(), '.', '_');
    input().skipped.Add(SkipId::kNsysSchemaUntested, 1, detail);
  }

  // The session's start in UTC ns (rows' times count from it): each rank's base_time_ns, by which the loader puts
  // the files of one job on one clock.
  Status ReadClock() {
    if (!db_->HasColumn("TARGET_INFO_SESSION_START_TIME", "utcEpochNs")) return Status::Ok();
    return db_->ForEachRow("SELECT utcEpochNs FROM TARGET_INFO_SESSION_START_TIME LIMIT 1", "the session's start",
                           [&](const SqlRow& row) { session_start_ns_ = row.IsNull(0) ? 0 : row.Int(0); });
  }

  Status ReadStrings() {
    return db_->ForEachRow("SELECT id, value FROM StringIds", "its strings (StringIds)",
                           [&](const SqlRow& row) { raw_strings_.emplace(row.Int(0), std::string(row.Text(1))); });
  }

  // The interned name of nsys string `id`, or nullopt when StringIds has no such id.
  std::optional<StringId> Name(int64_t id) {
    if (auto it = names_.find(id); it != names_.end()) return it->second;
    auto raw = raw_strings_.find(id);
    if (raw == raw_strings_.end()) return std::nullopt;
    return names_.emplace(id, store_.strings.intern(raw->second)).first->second;
  }

  std::string DeviceTables() const {
    std::string sql = fmt::format("SELECT DISTINCT globalPid, deviceId FROM {}", kKernels);
    for (std::string_view table : {kMemcpys, kMemsets})
      if (db_->HasTable(table)) sql += fmt::format(" UNION SELECT globalPid, deviceId FROM {}", table);
    return sql;
  }

  // One rank per (process, GPU) with GPU work, in (pid, device) order.
  Status FindRanks() {
    std::vector<std::pair<int64_t, int64_t>> found;  // (globalPid, device)
    Status st = db_->ForEachRow(DeviceTables(), "its processes and GPUs",
                                [&](const SqlRow& row) { found.emplace_back(row.Int(0), row.Int(1)); });
    if (!st.ok()) return st;
    std::sort(found.begin(), found.end(), [](const auto& a, const auto& b) {
      return std::make_pair(PidOf(a.first), a.second) < std::make_pair(PidOf(b.first), b.second);
    });
    std::map<int64_t, std::string> gpu_names = GpuNames();
    for (const auto& [process, device] : found) {
      rank_of_.emplace(std::make_pair(process, device), static_cast<uint32_t>(store_.ranks.size()));
      ranks_of_process_[process].push_back(static_cast<uint32_t>(store_.ranks.size()));
      RankInfo rank;
      rank.base_time_ns = session_start_ns_;
      auto name = gpu_names.find(device);
      rank.devices.push_back(name != gpu_names.end() ? name->second : fmt::format("GPU {}", device));
      store_.ranks.push_back(std::move(rank));
    }
    return Status::Ok();
  }

  // GPU names by device id (TARGET_INFO_GPU, when the export has it).
  std::map<int64_t, std::string> GpuNames() {
    std::map<int64_t, std::string> names;
    if (db_->HasColumn("TARGET_INFO_GPU", "name") && db_->HasColumn("TARGET_INFO_GPU", "id"))
      (void)db_->ForEachRow("SELECT id, name FROM TARGET_INFO_GPU", "its GPUs",
                            [&](const SqlRow& row) { names.emplace(row.Int(0), std::string(row.Text(1))); });
    return names;
  }

  // The row's start on the shared clock and its duration, or false after counting why it is unusable.
  bool Span(const SqlRow& row, int start_column, int64_t* ts, int64_t* dur) {
    if (row.IsNull(start_column) || row.IsNull(start_column + 1)) {
      Skip(row.IsNull(start_column) ? SkipId::kMissingTimestamp : SkipId::kMissingDuration);
      return false;
    }
    const int64_t start = row.Int(start_column), end = row.Int(start_column + 1);
    if (end < start) {
      Skip(SkipId::kNegativeDuration);
      return false;
    }
    if (auto why = CheckPairDuration(start, end, dur)) {
      Skip(*why);
      return false;
    }
    *ts = start;
    return true;
  }

  TrackId GpuTrack(uint32_t rank, int64_t device, int64_t stream) {
    auto [it, inserted] = gpu_tracks_.try_emplace(std::make_pair(rank, stream), store_.next_track());
    if (inserted) {
      Track t;
      t.rank = rank;
      t.kind = TrackKind::kGpuStream;
      t.pid = device;
      t.tid = stream;
      t.stream = stream;
      t.name = store_.strings.intern(fmt::format("stream {}", stream));
      store_.tracks.push_back(t);
    }
    return it->second;
  }

  TrackId CpuTrack(uint32_t rank, int64_t global_tid) {
    auto [it, inserted] = cpu_tracks_.try_emplace(std::make_pair(rank, global_tid), store_.next_track());
    if (inserted) {
      Track t;
      t.rank = rank;
      t.kind = TrackKind::kCpuThread;
      t.pid = PidOf(global_tid);
      t.tid = TidOf(global_tid);
      store_.tracks.push_back(t);
      track_threads_.emplace_back(it->second, global_tid);
    }
    return it->second;
  }

  void AddSlice(uint32_t rank, TrackId track, int64_t ts, int64_t dur, StringId name, StringId cat, int64_t correlation,
                bool gpu, uint32_t collective_args = kNoArgs) {
    uint8_t flags = kSliceComplete | kSliceHasCategory;
    if (gpu && correlation >= 0) flags |= kSliceGpu;
    if (collective_args != kNoArgs) flags |= kSliceCollectiveArgs;
    store_.slices.append(ts, dur, name, cat, track, correlation, flags, collective_args);
    RankInfo& info = store_.ranks[rank];
    ++info.events;
    ++category_counts_[{rank, cat}];
  }

  // A GPU row: start, end, deviceId, streamId, correlationId, globalPid in columns 0..5; `name` already read.
  // Whether it was stored.
  bool AddGpuRow(const SqlRow& row, StringId name, StringId category) {
    int64_t ts = 0, dur = 0;
    if (!Span(row, 0, &ts, &dur)) return false;
    const int64_t device = row.Int(2), process = row.Int(5);
    const auto found = rank_of_.find({process, device});
    if (found == rank_of_.end()) {
      unlisted_gpu_rows_ = true;  // the file changed between two reads of it: an error after the query
      return false;
    }
    const uint32_t rank = found->second;
    const int64_t correlation = row.IsNull(4) ? kNoCorrelation : row.Int(4);
    AddSlice(rank, GpuTrack(rank, device, row.Int(3)), ts, dur, name, category, correlation, true);
    if (correlation >= 0 && ranks_of_process_[process].size() > 1)
      rank_of_launch_.emplace(std::make_pair(process, correlation), rank);
    return true;
  }

  // Runs a query of GPU rows; an error when a row's (process, GPU) was not among those FindRanks read.
  Status ForEachGpuRow(const std::string& sql, std::string_view what, const std::function<void(const SqlRow&)>& row) {
    if (Status st = db_->ForEachRow(sql, what, row); !st.ok()) return st;
    if (!unlisted_gpu_rows_) return Status::Ok();
    return Status::BadInput(fmt::format("{}: cannot read {}: a row's process and GPU differ from the first read of the "
                                        "table (the file is damaged or changed while read)",
                                        db_->path(), what),
                            ErrorPlace{db_->path()});
  }

  static constexpr std::string_view kGpuColumns = "start, end, deviceId, streamId, correlationId, globalPid";

  Status ReadKernels() {
    const bool demangled = db_->HasColumn(kKernels, "demangledName");
    const std::string sql =
        fmt::format("SELECT {}, {}, shortName FROM {}", kGpuColumns, demangled ? "demangledName" : "NULL", kKernels);
    return ForEachGpuRow(sql, "its kernels", [&](const SqlRow& row) {
      // Kineto names a kernel by its demangled name; the short name when the export has none.
      std::optional<StringId> name = row.IsNull(6) ? std::nullopt : Name(row.Int(6));
      if (!name || *name == StringPool::kEmpty) name = Name(row.Int(7));
      if (!name) return Skip(SkipId::kUnknownStringId);
      // With NCCL payloads in the file, every kernel may be one an NCCL call launched (nsys_nccl_launches.h).
      if (AddGpuRow(row, *name, Category("kernel")) && has_payloads_ && !row.IsNull(4))
        nccl_launches_.AddKernel(row.Int(5), row.Int(4), SliceId(static_cast<uint32_t>(store_.slices.size() - 1)));
    });
  }

  // Whether some NVTX row carries a payload (jsonText or jsonTextId): only then are kernels and their launches
  // kept for NcclLaunchLinks.
  Status FindPayloads() {
    const bool text = db_->HasColumn(kNvtx, "jsonText"), id = db_->HasColumn(kNvtx, "jsonTextId");
    if (!text && !id) return Status::Ok();
    const std::string sql = fmt::format("SELECT EXISTS (SELECT 1 FROM {} WHERE {} IS NOT NULL OR {} IS NOT NULL)",
                                        kNvtx, text ? "jsonText" : "NULL", id ? "jsonTextId" : "NULL");
    return db_->ForEachRow(sql, "its NVTX payloads", [&](const SqlRow& row) { has_payloads_ = row.Int(0) != 0; });
  }

  // A column of `table` when the export has it, else NULL (older schemas lack some).
  std::string ColumnOrNull(std::string_view table, std::string_view column) {
    return db_->HasColumn(table, column) ? std::string(column) : "NULL";
  }

  Status ReadMemcpys() {
    if (!db_->HasTable(kMemcpys)) return Status::Ok();
    const std::string sql =
        fmt::format("SELECT {}, {}, {}, {} FROM {}", kGpuColumns, ColumnOrNull(kMemcpys, "copyKind"),
                    ColumnOrNull(kMemcpys, "srcKind"), ColumnOrNull(kMemcpys, "dstKind"), kMemcpys);
    return ForEachGpuRow(sql, "its memory copies", [&](const SqlRow& row) {
      auto kind = [&](int column) { return row.IsNull(column) ? int64_t{-1} : row.Int(column); };
      const auto key = std::make_tuple(kind(6), kind(7), kind(8));
      auto [it, inserted] = memcpy_names_.try_emplace(key);
      if (inserted) it->second = store_.strings.intern(nsys::MemcpyName(kind(6), kind(7), kind(8)));
      AddGpuRow(row, it->second, Category("gpu_memcpy"));
    });
  }

  Status ReadMemsets() {
    if (!db_->HasTable(kMemsets)) return Status::Ok();
    const std::string sql =
        fmt::format("SELECT {}, {} FROM {}", kGpuColumns, ColumnOrNull(kMemsets, "memKind"), kMemsets);
    return ForEachGpuRow(sql, "its memsets", [&](const SqlRow& row) {
      AddGpuRow(row, store_.strings.intern(nsys::MemsetName(row.IsNull(6) ? -1 : row.Int(6))), Category("gpu_memset"));
    });
  }

  // The rank a CPU row of thread `global_tid` belongs to: its process's only rank, else the rank of the GPU
  // its call launched work on (correlation), else the process's first; nullopt for a process without GPU work.
  std::optional<uint32_t> CpuRank(int64_t global_tid, int64_t correlation) {
    const int64_t process = ProcessOf(global_tid);
    auto it = ranks_of_process_.find(process);
    if (it == ranks_of_process_.end() || it->second.empty()) return std::nullopt;
    if (it->second.size() > 1 && correlation >= 0)
      if (auto launched = rank_of_launch_.find({process, correlation}); launched != rank_of_launch_.end())
        return launched->second;
    return it->second.front();
  }

  Status ReadRuntime() {
    if (!db_->HasTable(kRuntime)) return Status::Ok();
    const std::string sql = fmt::format("SELECT start, end, globalTid, correlationId, nameId FROM {}", kRuntime);
    return db_->ForEachRow(sql, "its CUDA API calls", [&](const SqlRow& row) {
      const int64_t correlation = row.IsNull(3) ? kNoCorrelation : row.Int(3);
      const std::optional<uint32_t> rank = CpuRank(row.Int(2), correlation);
      if (!rank) return Skip(SkipId::kNsysProcessWithoutGpu);
      const std::optional<StringId> name = RuntimeCallName(row.Int(4));
      if (!name) return Skip(SkipId::kUnknownStringId);
      int64_t ts = 0, dur = 0;
      if (!Span(row, 0, &ts, &dur)) return;
      AddSlice(*rank, CpuTrack(*rank, row.Int(2)), ts, dur, *name, Category("cuda_runtime"), correlation, false);
      nccl_launches_.AddLaunch(row.Int(2), ProcessOf(row.Int(2)), ts, correlation);
    });
  }

  // A CUDA API function's name without its version suffix, interned once per nsys string id.
  std::optional<StringId> RuntimeCallName(int64_t id) {
    if (auto it = runtime_names_.find(id); it != runtime_names_.end()) return it->second;
    auto raw = raw_strings_.find(id);
    if (raw == raw_strings_.end()) return std::nullopt;
    return runtime_names_.emplace(id, store_.strings.intern(nsys::RuntimeName(raw->second))).first->second;
  }

  Status ReadNvtx() {
    if (!db_->HasTable(kNvtx)) return Status::Ok();
    // NCCL's payloads (jsonText, or jsonTextId -> StringIds) when the export has the columns (nsys 2024.2 and later).
    const std::string sql =
        fmt::format("SELECT start, end, eventType, text, {}, globalTid, {}, {} FROM {}", ColumnOrNull(kNvtx, "textId"),
                    ColumnOrNull(kNvtx, "jsonText"), ColumnOrNull(kNvtx, "jsonTextId"), kNvtx);
    Status st = db_->ForEachRow(sql, "its NVTX ranges", [&](const SqlRow& row) { AddNvtxRow(row); });
    nccl_launches_.Apply(&store_.slices);
    return st;
  }

  void AddNvtxRow(const SqlRow& row) {
    if (std::find(kNvtxRangeTypes.begin(), kNvtxRangeTypes.end(), row.Int(2)) == kNvtxRangeTypes.end())
      return Skip(SkipId::kNvtxNotARange);
    if (row.IsNull(1)) return Skip(SkipId::kNvtxRangeWithoutEnd);
    const std::optional<uint32_t> rank = CpuRank(row.Int(5), kNoCorrelation);
    if (!rank) return Skip(SkipId::kNsysProcessWithoutGpu);
    std::string_view text = row.Text(3);
    if (row.IsNull(3) && !row.IsNull(4)) {
      auto raw = raw_strings_.find(row.Int(4));
      if (raw == raw_strings_.end()) return Skip(SkipId::kUnknownStringId);
      text = raw->second;
    }
    int64_t ts = 0, dur = 0;
    if (!Span(row, 0, &ts, &dur)) return;
    // Registered strings (textId) repeat: worked out once each; a row's own text (emit_nvtx's carry an op id,
    // unique per op) every time.
    auto [name, category] = row.IsNull(3) ? NvtxNames(text) : NvtxIds(text);
    const uint32_t args = NcclCallArgs(row, &name);
    AddSlice(*rank, CpuTrack(*rank, row.Int(5)), ts, dur, name, category, kNoCorrelation, false, args);
    if (args != kNoArgs) nccl_launches_.AddCall(row.Int(5), ts, ts + dur, args);
  }

  // The CollectiveArgs of an NCCL call whose NVTX row carries NCCL's payload (jsonText in column 6, else the string
  // jsonTextId in column 7 names; nsys_nccl_payload.h): its communicator as its group, its sequence number, its
  // size; the payload's function, when it names an NCCL call, renames `name`. kNoArgs for any other row.
  uint32_t NcclCallArgs(const SqlRow& row, StringId* name) {
    if (row.IsNull(6) && row.IsNull(7)) return kNoArgs;
    if (!store_.strings.view(*name).starts_with(kNcclCallPrefix)) return kNoArgs;
    std::string_view json = row.Text(6);
    if (row.IsNull(6)) {
      auto raw = raw_strings_.find(row.Int(7));
      if (raw == raw_strings_.end()) return kNoArgs;
      json = raw->second;
    }
    const std::optional<nsys::NcclPayload> payload = nsys::ParseNcclPayload(json);
    if (!payload) return kNoArgs;
    CollectiveArgs args;
    if (payload->comm) args.group = store_.strings.intern(nsys::CommunicatorGroupName(*payload->comm));
    args.seq = payload->seq;
    if (const nsys::NvtxRange call = nsys::NvtxRangeName("nccl" + payload->op);
        !payload->op.empty() && call.name.starts_with(kNcclCallPrefix))
      *name = store_.strings.intern(call.name);
    if (payload->count >= 0 && !payload->dtype.empty()) {
      args.in_nelems = payload->count;
      args.dtype = store_.strings.intern(payload->dtype);
    } else if (payload->bytes >= 0) {
      args.in_nelems = payload->bytes;
      args.dtype = store_.strings.intern("uint8");
    }
    store_.collective_args.push_back(args);
    return static_cast<uint32_t>(store_.collective_args.size() - 1);
  }

  // An NVTX text's name and category (nsys_names.h), interned.
  std::pair<StringId, StringId> NvtxIds(std::string_view text) {
    const nsys::NvtxRange range = nsys::NvtxRangeName(text);
    return {store_.strings.intern(range.name), Category(range.category)};
  }
  // The same, worked out once per distinct text.
  std::pair<StringId, StringId> NvtxNames(std::string_view text) {
    if (auto it = nvtx_names_.find(text); it != nvtx_names_.end()) return it->second;
    return nvtx_names_.emplace(std::string(text), NvtxIds(text)).first->second;
  }

  StringId Category(std::string_view name) {
    for (const auto& [text, id] : categories_)
      if (text == name) return id;
    return categories_.emplace_back(name, store_.strings.intern(name)).second;
  }

  // CPU tracks named by their thread (ThreadNames), else by their process (PROCESSES).
  Status NameTracks() {
    std::unordered_map<int64_t, std::string> threads, processes;
    if (db_->HasColumn("ThreadNames", "nameId")) {
      Status st =
          db_->ForEachRow("SELECT globalTid, nameId FROM ThreadNames", "its thread names", [&](const SqlRow& row) {
            if (auto raw = raw_strings_.find(row.Int(1)); raw != raw_strings_.end()) threads[row.Int(0)] = raw->second;
          });
      if (!st.ok()) return st;
    }
    if (db_->HasColumn("PROCESSES", "name")) {
      Status st = db_->ForEachRow("SELECT globalPid, name FROM PROCESSES", "its processes",
                                  [&](const SqlRow& row) { processes[row.Int(0)] = std::string(row.Text(1)); });
      if (!st.ok()) return st;
    }
    for (const auto& [track, global_tid] : track_threads_) {
      if (auto t = threads.find(global_tid); t != threads.end() && !t->second.empty())
        store_.track(track).name = store_.strings.intern(t->second);
      else if (auto p = processes.find(ProcessOf(global_tid)); p != processes.end())
        store_.track(track).name = store_.strings.intern(p->second);
    }
    return Status::Ok();
  }

  void Finish() {
    for (const auto& [key, count] : category_counts_)
      store_.ranks[key.first].categories[std::string(store_.strings.view(key.second))] += count;
    for (const RankInfo& rank : store_.ranks) input().events += rank.events;
    store_.shrink_to_fit();
  }

  std::unique_ptr<NsysSqliteReader> db_;
  TraceStore store_;
  bool unlisted_gpu_rows_ = false;  // a GPU row of a (process, GPU) FindRanks did not see
  int64_t session_start_ns_ = 0;    // UTC ns of the rows' time 0; 0 unknown
  std::unordered_map<int64_t, std::string> raw_strings_;
  std::unordered_map<int64_t, StringId> names_, runtime_names_;
  bool has_payloads_ = false;            // some NVTX row has jsonText or jsonTextId (FindPayloads)
  nsys::NcclLaunchLinks nccl_launches_;  // kernels -> the NCCL calls that launched them
  std::map<std::tuple<int64_t, int64_t, int64_t>, StringId> memcpy_names_;  // (copy, src, dst kinds)
  struct TextHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>()(s); }
  };
  std::unordered_map<std::string, std::pair<StringId, StringId>, TextHash, std::equal_to<>> nvtx_names_;
  std::vector<std::pair<std::string_view, StringId>> categories_;      // the few categories, interned once
  std::map<std::pair<int64_t, int64_t>, uint32_t> rank_of_;            // (globalPid, device) -> rank index
  std::map<int64_t, std::vector<uint32_t>> ranks_of_process_;          // globalPid -> its ranks, device order
  std::map<std::pair<int64_t, int64_t>, uint32_t> rank_of_launch_;     // (globalPid, correlation) -> rank
  std::map<std::pair<uint32_t, int64_t>, TrackId> gpu_tracks_;         // (rank, stream)
  std::map<std::pair<uint32_t, int64_t>, TrackId> cpu_tracks_;         // (rank, globalTid)
  std::vector<std::pair<TrackId, int64_t>> track_threads_;             // CPU track -> globalTid
  std::map<std::pair<uint32_t, StringId>, uint64_t> category_counts_;  // (rank, category) -> slices
};

}  // namespace

Expected<TraceStore> ImportNsysSqlite(const std::string& path, const ImportOptions& /*options*/) {
  auto db = NsysSqliteReader::Open(path);
  if (!db.ok()) return db.status();
  if (!IsNsysExport(*db.value()))
    return Status::NotATrace(fmt::format("{}: an SQLite database but not an Nsight Systems export (it has no "
                                         "StringIds table beside CUPTI_ACTIVITY_KIND_* or NVTX_EVENTS tables)",
                                         path),
                             ErrorPlace{path});
  NsysStoreBuilder builder(std::move(db).value());
  if (Status st = builder.Build(); !st.ok()) return st;
  return builder.Take();
}

}  // namespace strata
