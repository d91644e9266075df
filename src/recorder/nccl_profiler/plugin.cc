// libstrata_nccl_profiler.so: an NCCL profiler plugin (NCCL_PROFILER_PLUGIN=<this file>) that writes each
// collective's kernel span on the device, and the in-flight state of each collective, into a strata segment,
// so that `strata diagnose` can tell which rank's GPU arrived late at a collective, and name the rank and
// collective a hung or mismatched job stopped at, with no PyTorch profiler and no code change. `strata record`
// sets NCCL_PROFILER_PLUGIN and STRATA_NCCL_PROFILER_DIR for the command it launches.
// Output: STRATA_NCCL_PROFILER_DIR/nccl-<host>-<pid>.sseg, one per process: a "process" record (pid, rank
// from RANK / SLURM_PROCID / OMPI_COMM_WORLD_RANK / PMI_RANK, else the first communicator's rank); a
// "communicator" record per communicator (comm = NCCL's commHash, equal on every rank; nranks, rank, pid,
// name); one "probe" record per (kind, op); per collective three call_enter rows, kinds
// collective_device_enqueue (NCCL started the collective event), collective_device_start (its first kernel
// channel started) and collective_device_done (it completed on the device), each with comm, count, the issuing
// thread and CLOCK_MONOTONIC now; a call row of kind "collective_device" per collective with a device span, on
// the host's CLOCK_MONOTONIC (device globaltimer ns minus the realtime-monotonic offset in the file header; v3
// has no device time and uses the host's time at the channel callbacks); and at exit a "recording" record with
// source "nccl_profiler" and the tracker's counts. Without STRATA_NCCL_PROFILER_DIR the plugin asks NCCL for
// no events and writes nothing.
// Invariants: no callback throws into NCCL (errors become ncclInternalError, once logged); rows appended reach
// the file within a second even when NCCL never calls again (a hung job): a flush thread runs while any
// communicator is initialised and stops, joined, when the last one is finalized (NCCL may then unload the
// library); the segment is flushed at finalize and closed at exit; a forked child never writes its parent's
// file.
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>

#include <nlohmann/json.hpp>

#include "recorder/nccl_profiler/collective_tracker.h"
#include "recorder/nccl_profiler/nccl_profiler_abi.h"
#include "segments/segment_format.h"
#include "segments/segment_writer.h"
#include "store/probe_kind.h"

namespace strata::nccl_profiler {
namespace {

constexpr const char* kDirEnv = "STRATA_NCCL_PROFILER_DIR";
constexpr const char* kLibraryName = "libstrata_nccl_profiler.so";
constexpr auto kFlushPeriod = std::chrono::milliseconds(500);  // rows reach the file within ~0.5 s

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

ProbeKind StateKind(CollectiveState state) {
  switch (state) {
    case CollectiveState::kEnqueued:
      return ProbeKind::kCollectiveDeviceEnqueue;
    case CollectiveState::kKernelStarted:
      return ProbeKind::kCollectiveDeviceStart;
    case CollectiveState::kDone:
      return ProbeKind::kCollectiveDeviceDone;
  }
  return ProbeKind::kUnknown;
}

// A communicator NCCL initialised the plugin for: the context NCCL hands back to startEvent and finalize.
// Invariant: `hash` is final once `announced` (its "communicator" record written); v3 learns it, and the
// rank, from the communicator's first collective. Fields change only under the Recording's lock.
struct Communicator {
  uint64_t hash = 0;
  int nranks = 0, rank = -1;  // nranks 0: not known (v3)
  std::string name;
  uint64_t ordinal = 0;  // 1 for the first communicator initialised in this process, 2 for the next...
  bool announced = false;
};

// A thread that calls `flush` every kFlushPeriod from Start() to Stop(). Start/Stop are serialised; Stop joins
// (it must not be called holding a lock `flush` takes). In a forked child (which has no copy of the thread)
// Stop leaves it alone.
class Flusher {
 public:
  explicit Flusher(std::function<void()> flush) : flush_(std::move(flush)) {}

  void Start() {
    std::lock_guard<std::mutex> lifecycle(lifecycle_);
    if (thread_.joinable()) return;
    stop_ = false;
    pid_ = getpid();
    thread_ = std::thread([this] { Loop(); });
  }

  void Stop() {
    std::lock_guard<std::mutex> lifecycle(lifecycle_);
    if (!thread_.joinable() || pid_ != getpid()) return;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
    }
    wake_.notify_all();
    thread_.join();
  }

 private:
  void Loop() {
    std::unique_lock<std::mutex> lock(mutex_);
    while (!stop_) {
      wake_.wait_for(lock, kFlushPeriod, [this] { return stop_; });
      lock.unlock();
      flush_();
      lock.lock();
    }
  }

  std::function<void()> flush_;
  std::mutex lifecycle_, mutex_;
  std::condition_variable wake_;
  std::thread thread_;
  pid_t pid_ = 0;
  bool stop_ = false;
};

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
    if (Status st = OpenLocked(dir); !st.ok()) {
      failed_ = true;
      Log(log, ("strata NCCL profiler: " + st.message() + ": recording nothing").c_str());
      return false;
    }
    opened_ = true;
    std::atexit([] { Get()->Close(); });
    return true;
  }

  // A communicator joins (init): the flush thread runs while any is initialised.
  void Attach() {
    std::lock_guard<std::mutex> lock(attached_mutex_);
    if (attached_++ == 0) flusher_.Start();
  }

  // A communicator leaves (finalize): flushed; the last one stops the flush thread.
  void Detach() {
    Flush();
    std::lock_guard<std::mutex> lock(attached_mutex_);
    if (attached_ > 0 && --attached_ == 0) flusher_.Stop();
  }

  // Writes the "communicator" record of `c` once; v3 fills its key from the first collective first.
  void Announce(Communicator* c, const ncclProfilerEventDescr_v3_t* first_v3 = nullptr) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (c->announced) return;
    if (first_v3 != nullptr) LearnV3(c, *first_v3);
    c->announced = true;
    if (!opened_) return;
    writer_.AppendMeta({{"type", "communicator"},
                        {"comm", c->hash},
                        {"nranks", c->nranks},
                        {"rank", c->rank},
                        {"pid", pid_},
                        {"name", c->name}});
  }

  uint64_t NextOrdinal() {
    std::lock_guard<std::mutex> lock(mutex_);
    return ++communicators_;
  }

  CollectiveTracker& tracker() { return tracker_; }

  // Also says, once a second, that the process is still alive ("alive" record): a hung rank makes no more
  // rows, and a reader takes the last of these as how long the recording speaks for it.
  void Flush() {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!opened_ || pid_ != getpid()) return;
    const uint64_t now = Now(CLOCK_MONOTONIC);
    if (now - alive_ns_ >= 1'000'000'000) {
      writer_.AppendMeta({{"type", "alive"}, {"ts_ns", now}});
      alive_ns_ = now;
    }
    (void)writer_.Flush();
  }

 private:
  Recording()
      : tracker_([this](const CompletedCollective& c) { Write(c); },
                 [this](CollectiveState s, const CompletedCollective& c) { WriteState(s, c); }),
        flusher_([this] { Flush(); }) {}

  static void Log(ncclDebugLogger_t log, const char* message) {
    if (log) log(NCCL_LOG_INFO, ~0ul, __FILE__, __LINE__, "%s", message);
  }

  // v3's init names no communicator: its collectives carry the commHash (equal on every rank) and rank.
  // Stable substitute when NCCL gives 0: the communicator's ordinal in this process, equal on every rank as
  // long as the ranks create their communicators in the same order (NCCL requires it of collective inits).
  static void LearnV3(Communicator* c, const ncclProfilerEventDescr_v3_t& d) {
    c->hash = d.coll.commHash != 0 ? d.coll.commHash : c->ordinal;
    c->rank = d.rank;
    c->name = d.coll.name ? d.coll.name : "";
  }

  Status OpenLocked(const char* dir) {
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
    if (Status st = writer_.Open(path, header, 4096); !st.ok()) return st;
    writer_.AppendMeta({{"type", "source"}, {"name", "nccl_profiler"}, {"host", host_}});
    writer_.AppendMeta({{"type", "process"},
                        {"pid", pid_},
                        {"ppid", static_cast<int>(getppid())},
                        {"comm", ReadFirstLine("/proc/self/comm")},
                        {"rank", *rank_},
                        {"first_seen_ns", start_ns_}});
    return Status::Ok();
  }

  // The id of the probe (kind, op), writing its "probe" record the first time.
  uint32_t ProbeLocked(ProbeKind kind, const std::string& op, const char* emit) {
    auto [it, inserted] =
        probes_.try_emplace({std::string(ProbeKindName(kind)), op}, static_cast<uint32_t>(probes_.size()));
    if (inserted)
      writer_.AppendMeta({{"type", "probe"},
                          {"id", it->second},
                          {"symbol", "ncclProfiler"},
                          {"op", op},
                          {"kind", ProbeKindName(kind)},
                          {"library", kLibraryName},
                          {"emit", emit}});
    return it->second;
  }

  void Write(const CompletedCollective& c) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!opened_) return;
    CallRow row;
    row.tid = c.tid;
    row.tgid = static_cast<uint32_t>(pid_);
    row.probe = ProbeLocked(ProbeKind::kCollectiveDevice, c.op, "call");
    const auto to_host = [&](uint64_t t) {
      return c.device_clock ? static_cast<uint64_t>(static_cast<int64_t>(t) - offset_ns_) : t;
    };
    row.start_ns = to_host(c.start_ns);
    row.end_ns = to_host(c.end_ns);
    writer_.Append(row);
  }

  void WriteState(CollectiveState state, const CompletedCollective& c) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!opened_) return;
    CallEnterRow row;
    row.tid = c.tid;
    row.tgid = static_cast<uint32_t>(pid_);
    row.probe = ProbeLocked(StateKind(state), c.op, "call_enter");
    row.ts_ns = Now(CLOCK_MONOTONIC);
    row.comm = c.comm;
    row.count = c.count;
    writer_.Append(row);
  }

  void Close() {
    if (pid_ != getpid()) return;  // a forked child: the file is its parent's
    flusher_.Stop();
    std::lock_guard<std::mutex> lock(mutex_);
    if (!opened_) return;
    const TrackerStats s = tracker_.stats();
    writer_.AppendMeta({{"type", "recording"},
                        {"source", "nccl_profiler"},
                        {"host", host_},
                        {"pids", {pid_}},
                        {"start_ns", start_ns_},
                        {"collectives", s.completed},
                        {"collectives_started", s.started},
                        {"without_device_time", s.without_device_time},
                        {"p2p", s.p2p},
                        {"orphan_channels", s.orphan_channels}});
    (void)writer_.Close();
    opened_ = false;
  }

  std::mutex mutex_;
  CollectiveTracker tracker_;
  segments::SegmentWriter writer_;
  std::map<std::pair<std::string, std::string>, uint32_t> probes_;  // (kind, op) -> id
  std::optional<int> rank_;
  std::string host_;
  int pid_ = 0;
  uint64_t start_ns_ = 0, communicators_ = 0, alive_ns_ = 0;
  int64_t offset_ns_ = 0;
  bool opened_ = false, failed_ = false;
  std::mutex attached_mutex_;
  int attached_ = 0;
  Flusher flusher_;  // last: stopped before the members its thread uses
};

uint32_t ThreadId() { return static_cast<uint32_t>(syscall(SYS_gettid)); }

uint64_t CommHash(void* context) { return context ? static_cast<Communicator*>(context)->hash : 0; }

// One communicator's init: its context, the events to ask for (0 = none).
ncclResult_t Init(void** context, int* mask, Communicator* c, int wanted, ncclDebugLogger_t log) {
  try {
    Recording* rec = Recording::Get();
    c->ordinal = rec->NextOrdinal();
    *context = c;
    *mask = 0;
    if (!rec->Start(c->rank < 0 ? 0 : c->rank, log)) return ncclSuccess;
    rec->Attach();
    *mask = wanted;
    return ncclSuccess;
  } catch (...) {
    *mask = 0;
    return ncclInternalError;
  }
}

ncclResult_t Finalize(void* context) {
  try {
    auto* c = static_cast<Communicator*>(context);
    Recording::Get()->Detach();
    delete c;  // its collectives still in flight keep their commHash: they hold no pointer to it
    return ncclSuccess;
  } catch (...) {
    return ncclInternalError;
  }
}

// What a collective event of either ABI says about its start (v5 and v3 name these fields alike).
template <typename Descr>
CollectiveStart StartOf(void* context, const Descr& d) {
  CollectiveStart s;
  s.comm = CommHash(context);
  s.func = d.coll.func ? d.coll.func : "";
  s.nccl_seq = d.coll.seqNumber;
  s.count = d.coll.count;
  s.tid = ThreadId();
  s.host_ns = Now(CLOCK_MONOTONIC);
  return s;
}

// --- v5 --------------------------------------------------------------------------------------------
constexpr int kMaskV5 = static_cast<int>(ncclProfileColl | ncclProfileP2p | ncclProfileKernelCh);

ncclResult_t InitV5(void** context, uint64_t comm_hash, int* mask, const char* name, int, int nranks, int rank,
                    ncclDebugLogger_t log) {
  auto* c = new Communicator();
  c->hash = comm_hash;  // NCCL passes comm->commHash as v5's commId
  c->nranks = nranks;
  c->rank = rank;
  c->name = name ? name : "";
  const ncclResult_t r = Init(context, mask, c, kMaskV5, log);
  if (*mask != 0) Recording::Get()->Announce(c);
  return r;
}

void* StartCollectiveV5(void* context, const ncclProfilerEventDescr_v5_t& d) {
  CollectiveStart s = StartOf(context, d);
  s.channels = d.coll.nChannels;
  s.device_clock = true;
  return Recording::Get()->tracker().StartCollective(s);
}

ncclResult_t StartV5(void* context, void** handle, ncclProfilerEventDescr_v5_t* d) {
  try {
    *handle = nullptr;
    CollectiveTracker& t = Recording::Get()->tracker();
    if (d->type == ncclProfileColl)
      *handle = StartCollectiveV5(context, *d);
    else if (d->type == ncclProfileP2p)
      *handle = t.StartP2p(CommHash(context), d->p2p.nChannels);
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

// --- v3 --------------------------------------------------------------------------------------------
// v3 asks for no point-to-point events, and gives no channel count: a collective is done when NCCL stopped it
// and none of its channels is open (which can come before its kernel ran).
constexpr int kMaskV3 = static_cast<int>(ncclProfileColl | ncclProfileKernelCh);

ncclResult_t InitV3(void** context, int* mask) { return Init(context, mask, new Communicator(), kMaskV3, nullptr); }

void* StartCollectiveV3(void* context, const ncclProfilerEventDescr_v3_t& d) {
  auto* c = static_cast<Communicator*>(context);
  if (c != nullptr) Recording::Get()->Announce(c, &d);
  CollectiveStart s = StartOf(context, d);
  s.device_clock = false;
  return Recording::Get()->tracker().StartCollective(s);
}

ncclResult_t StartV3(void* context, void** handle, ncclProfilerEventDescr_v3_t* d) {
  try {
    *handle = nullptr;
    if (d->type == ncclProfileColl)
      *handle = StartCollectiveV3(context, *d);
    else if (d->type == ncclProfileKernelCh)
      *handle = Recording::Get()->tracker().StartChannel(d->parentObj, Now(CLOCK_MONOTONIC));
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
