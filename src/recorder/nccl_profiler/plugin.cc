// libstrata_nccl_profiler.so: an NCCL profiler plugin (NCCL_PROFILER_PLUGIN=<this file>) that writes each
// collective's kernel span on the device into a strata segment, so that `strata diagnose` can tell which
// rank's GPU arrived late at a collective with no PyTorch profiler and no code change. `strata record`
// sets NCCL_PROFILER_PLUGIN and STRATA_NCCL_PROFILER_DIR for the command it launches.
// Output: STRATA_NCCL_PROFILER_DIR/nccl-<host>-<pid>.sseg, one per process: a "process" record (pid, rank
// from RANK / SLURM_PROCID / OMPI_COMM_WORLD_RANK / PMI_RANK, else the first communicator's rank), one
// "probe" record per collective kind (kind "collective_device"), a call row per collective on the host's
// CLOCK_MONOTONIC (device globaltimer ns minus the realtime-monotonic offset in the file header; v3 has no
// device time and uses the host's time at the channel callbacks), and at exit a "recording" record with
// source "nccl_profiler" and the tracker's counts. Without STRATA_NCCL_PROFILER_DIR the plugin asks NCCL
// for no events and writes nothing.
// Invariants: no callback throws into NCCL (errors become ncclInternalError, once logged); the segment is
// flushed at least every second while collectives complete, at finalize and at exit.
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "recorder/nccl_profiler/collective_tracker.h"
#include "recorder/nccl_profiler/nccl_profiler_abi.h"
#include "segments/segment_format.h"
#include "segments/segment_writer.h"

namespace strata::nccl_profiler {
namespace {

constexpr const char* kDirEnv = "STRATA_NCCL_PROFILER_DIR";
constexpr const char* kLibraryName = "libstrata_nccl_profiler.so";

uint64_t Now(clockid_t clock) {
  timespec ts{};
  clock_gettime(clock, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

std::optional<int> RankFromEnvironment() {
  for (const char* name : {"RANK", "SLURM_PROCID", "OMPI_COMM_WORLD_RANK", "PMI_RANK"}) {
    const char* v = std::getenv(name);
    if (v == nullptr || *v == '\0') continue;
    char* end = nullptr;
    const long r = std::strtol(v, &end, 10);
    if (*end == '\0' && r >= 0 && r < (1 << 24)) return static_cast<int>(r);
  }
  return std::nullopt;
}

std::string ReadFirstLine(const char* path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

// The process's one segment and tracker; created by the first init, closed at exit.
class Recording {
 public:
  static Recording* Get() {
    static Recording* instance = new Recording();  // never destroyed: callbacks may come during exit
    return instance;
  }

  // Opens the segment on the first call; false when the plugin is to record nothing.
  bool Start(int comm_rank, ncclDebugLogger_t log) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!rank_) rank_ = RankFromEnvironment().value_or(comm_rank);
    if (opened_ || failed_) return opened_;
    const char* dir = std::getenv(kDirEnv);
    if (dir == nullptr || *dir == '\0') {
      failed_ = true;
      Log(log, "strata NCCL profiler: STRATA_NCCL_PROFILER_DIR is not set: recording nothing");
      return false;
    }
    char host[256] = {};
    gethostname(host, sizeof host - 1);
    host_ = host;
    pid_ = static_cast<int>(getpid());
    segments::FileHeader header;
    header.created_unix_ns = static_cast<int64_t>(Now(CLOCK_REALTIME));
    start_ns_ = Now(CLOCK_MONOTONIC);
    header.realtime_minus_monotonic_ns = header.created_unix_ns - static_cast<int64_t>(start_ns_);
    offset_ns_ = header.realtime_minus_monotonic_ns;
    const std::string path = std::string(dir) + "/nccl-" + host_ + "-" + std::to_string(pid_) + ".sseg";
    if (Status st = writer_.Open(path, header, 4096); !st.ok()) {
      failed_ = true;
      Log(log, ("strata NCCL profiler: " + st.message() + ": recording nothing").c_str());
      return false;
    }
    writer_.AppendMeta({{"type", "source"}, {"name", "nccl_profiler"}, {"host", host_}});
    writer_.AppendMeta({{"type", "process"},
                        {"pid", pid_},
                        {"ppid", static_cast<int>(getppid())},
                        {"comm", ReadFirstLine("/proc/self/comm")},
                        {"rank", *rank_},
                        {"first_seen_ns", start_ns_}});
    opened_ = true;
    std::atexit([] { Get()->Close(); });
    return true;
  }

  CollectiveTracker& tracker() { return tracker_; }

  void Flush() {
    std::lock_guard<std::mutex> lock(mutex_);
    if (opened_) (void)writer_.Flush();
  }

 private:
  Recording() : tracker_([this](const CompletedCollective& c) { Write(c); }) {}

  static void Log(ncclDebugLogger_t log, const char* message) {
    if (log) log(NCCL_LOG_INFO, ~0ul, __FILE__, __LINE__, "%s", message);
  }

  void Write(const CompletedCollective& c) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!opened_) return;
    auto [it, inserted] = probes_.try_emplace(c.op, static_cast<uint32_t>(probes_.size()));
    if (inserted)
      writer_.AppendMeta({{"type", "probe"},
                          {"id", it->second},
                          {"symbol", "ncclProfiler"},
                          {"op", c.op},
                          {"kind", "collective_device"},
                          {"library", kLibraryName},
                          {"emit", "call"}});
    segments::CallRow row;
    row.tid = c.tid;
    row.tgid = static_cast<uint32_t>(pid_);
    row.probe = it->second;
    const auto to_host = [&](uint64_t t) {
      return c.device_clock ? static_cast<uint64_t>(static_cast<int64_t>(t) - offset_ns_) : t;
    };
    row.start_ns = to_host(c.start_ns);
    row.end_ns = to_host(c.end_ns);
    writer_.Append(row);
    const uint64_t now = Now(CLOCK_MONOTONIC);
    if (now - last_flush_ns_ > 1000000000ull) {
      last_flush_ns_ = now;
      (void)writer_.Flush();
    }
  }

  void Close() {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!opened_) return;
    const TrackerStats s = tracker_.stats();
    writer_.AppendMeta({{"type", "recording"},
                        {"source", "nccl_profiler"},
                        {"host", host_},
                        {"pids", {pid_}},
                        {"start_ns", start_ns_},
                        {"collectives", s.completed},
                        {"without_device_time", s.without_device_time},
                        {"orphan_channels", s.orphan_channels}});
    (void)writer_.Close();
    opened_ = false;
  }

  std::mutex mutex_;
  CollectiveTracker tracker_;
  segments::SegmentWriter writer_;
  std::map<std::string, uint32_t> probes_;
  std::optional<int> rank_;
  std::string host_;
  int pid_ = 0;
  uint64_t start_ns_ = 0, last_flush_ns_ = 0;
  int64_t offset_ns_ = 0;
  bool opened_ = false, failed_ = false;
};

uint32_t ThreadId() { return static_cast<uint32_t>(syscall(SYS_gettid)); }

constexpr int kMask = static_cast<int>(ncclProfileColl | ncclProfileKernelCh);

// --- v5 --------------------------------------------------------------------------------------------
ncclResult_t InitV5(void** context, uint64_t, int* mask, const char*, int, int, int rank, ncclDebugLogger_t log) {
  try {
    *context = Recording::Get();
    *mask = Recording::Get()->Start(rank, log) ? kMask : 0;
    return ncclSuccess;
  } catch (...) {
    *mask = 0;
    return ncclInternalError;
  }
}

ncclResult_t StartV5(void*, void** handle, ncclProfilerEventDescr_v5_t* d) {
  try {
    *handle = nullptr;
    CollectiveTracker& t = Recording::Get()->tracker();
    if (d->type == ncclProfileColl)
      *handle = t.StartCollective(d->coll.func ? d->coll.func : "", d->coll.seqNumber, d->coll.count, ThreadId(),
                                  Now(CLOCK_MONOTONIC), true);
    else if (d->type == ncclProfileKernelCh)
      *handle = t.StartChannel(d->parentObj, d->kernelCh.pTimer);
    return ncclSuccess;
  } catch (...) {
    return ncclInternalError;
  }
}

ncclResult_t StopV5(void* handle) {
  try {
    Recording::Get()->tracker().Stop(handle);
    return ncclSuccess;
  } catch (...) {
    return ncclInternalError;
  }
}

ncclResult_t StateV5(void* handle, ncclProfilerEventState_t state, ncclProfilerEventStateArgs_v5_t* args) {
  if (state == ncclProfilerKernelChStop && args != nullptr)
    Recording::Get()->tracker().ChannelStopped(handle, args->kernelCh.pTimer);
  return ncclSuccess;
}

ncclResult_t Finalize(void*) {
  Recording::Get()->Flush();
  return ncclSuccess;
}

// --- v3 --------------------------------------------------------------------------------------------
ncclResult_t InitV3(void** context, int* mask) { return InitV5(context, 0, mask, "", 0, 0, 0, nullptr); }

ncclResult_t StartV3(void*, void** handle, ncclProfilerEventDescr_v3_t* d) {
  try {
    *handle = nullptr;
    CollectiveTracker& t = Recording::Get()->tracker();
    if (d->type == ncclProfileColl)
      *handle = t.StartCollective(d->coll.func ? d->coll.func : "", d->coll.seqNumber, d->coll.count, ThreadId(),
                                  Now(CLOCK_MONOTONIC), false);
    else if (d->type == ncclProfileKernelCh)
      *handle = t.StartChannel(d->parentObj, Now(CLOCK_MONOTONIC));
    return ncclSuccess;
  } catch (...) {
    return ncclInternalError;
  }
}

ncclResult_t StopV3(void* handle) {
  try {
    Recording::Get()->tracker().Stop(handle, Now(CLOCK_MONOTONIC));
    return ncclSuccess;
  } catch (...) {
    return ncclInternalError;
  }
}

ncclResult_t StateV3(void*, ncclProfilerEventState_t, ncclProfilerEventStateArgs_v3_t*) { return ncclSuccess; }

}  // namespace
}  // namespace strata::nccl_profiler

extern "C" {
__attribute__((visibility("default"))) ncclProfiler_v5_t ncclProfiler_v5 = {"strata",
                                                                            strata::nccl_profiler::InitV5,
                                                                            strata::nccl_profiler::StartV5,
                                                                            strata::nccl_profiler::StopV5,
                                                                            strata::nccl_profiler::StateV5,
                                                                            strata::nccl_profiler::Finalize};
__attribute__((visibility("default"))) ncclProfiler_v3_t ncclProfiler_v3 = {"strata",
                                                                            strata::nccl_profiler::InitV3,
                                                                            strata::nccl_profiler::StartV3,
                                                                            strata::nccl_profiler::StopV3,
                                                                            strata::nccl_profiler::StateV3,
                                                                            strata::nccl_profiler::Finalize};
}
