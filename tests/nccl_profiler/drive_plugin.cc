// strata_nccl_harness: stands in for NCCL to test libstrata_nccl_profiler.so without a GPU. It dlopens the
// plugin, looks up ncclProfiler_v5 (or _v3) as NCCL does, and drives its callbacks with constructed events
// of one rank of a data-parallel job.
// Default run (Timeline below): per step, collectives whose kernels start on the device when this rank arrives
// and end when the last rank has arrived plus a transfer time, and one point-to-point operation. One rank
// (--straggler) computes --late-ms longer from step --late-from on. Device times are globaltimer-like
// (CLOCK_REALTIME ns from HARNESS_BASE_NS, the same for every rank). Callbacks come in shuffled but legal
// orders (the collective's stop before its channels start, as NCCL does, between, or after they stop).
// Scenarios (--scenario, v5, one process per rank; RunScenario below): collectives #0..#K-1 (--at K) of the
// communicator --comm-hash complete on every rank, then at #K:
//   hang                ranks other than 2 enqueue #K and start its kernel, never finished; rank 2 never
//                       enqueues it (a second communicator, hash + 1, completes K all_gathers meanwhile);
//   mismatch            every rank enqueues all_reduce #K and starts its kernel: count 1024, rank 2 512;
//   kernel_not_started  every rank enqueues #K; all but rank 1 start its kernel.
// Then the process holds --hold-ms (the plugin must flush on its own meanwhile) and is killed with SIGKILL,
// as a hung job is: no finalize, no exit handlers.
// usage: strata_nccl_harness PLUGIN --rank R --ranks N [--version 5|3] [--steps S] [--per-step C]
//        [--straggler K --late-ms X --late-from S0] [--comm-hash H]
//        [--scenario hang|mismatch|kernel_not_started --at K --hold-ms MS]
// Exit 0 when every callback returned ncclSuccess (scenarios: killed by SIGKILL instead), 1 when one did not,
// 2 on bad usage, 3 when the plugin asked for no events.
#include <dirent.h>
#include <dlfcn.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "recorder/nccl_profiler/nccl_profiler_abi.h"

namespace {

struct Args {
  const char* plugin = nullptr;
  int version = 5, rank = 0, ranks = 2, steps = 12, per_step = 2, straggler = -1, late_from = 0;
  double late_ms = 0, compute_ms = 60, transfer_ms = 2;
  uint64_t comm_hash = 42;
  std::string scenario;  // "" = the default run
  int at = 3, hold_ms = 1500;
};

bool ValidScenario(const std::string& s) {
  return s.empty() || s == "hang" || s == "mismatch" || s == "kernel_not_started";
}

bool Parse(int argc, char** argv, Args* a) {
  if (argc < 2) return false;
  a->plugin = argv[1];
  for (int i = 2; i + 1 < argc; i += 2) {
    const std::string k = argv[i];
    const char* v = argv[i + 1];
    if (k == "--version")
      a->version = std::atoi(v);
    else if (k == "--rank")
      a->rank = std::atoi(v);
    else if (k == "--ranks")
      a->ranks = std::atoi(v);
    else if (k == "--steps")
      a->steps = std::atoi(v);
    else if (k == "--per-step")
      a->per_step = std::atoi(v);
    else if (k == "--straggler")
      a->straggler = std::atoi(v);
    else if (k == "--late-ms")
      a->late_ms = std::atof(v);
    else if (k == "--late-from")
      a->late_from = std::atoi(v);
    else if (k == "--comm-hash")
      a->comm_hash = std::strtoull(v, nullptr, 0);
    else if (k == "--scenario")
      a->scenario = v;
    else if (k == "--at")
      a->at = std::atoi(v);
    else if (k == "--hold-ms")
      a->hold_ms = std::atoi(v);
    else
      return false;
  }
  if (!ValidScenario(a->scenario) || (!a->scenario.empty() && a->version != 5)) return false;
  return a->version == 5 || a->version == 3;
}

void Logger(ncclDebugLogLevel, unsigned long, const char*, int, const char* fmt, ...) {
  std::fprintf(stderr, "harness: plugin logged: %s\n", fmt);
}

uint64_t RealtimeNs() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

int failures = 0;
void Check(ncclResult_t r, const char* what) {
  if (r != ncclSuccess) {
    std::fprintf(stderr, "harness: %s returned %d\n", what, static_cast<int>(r));
    ++failures;
  }
}

// The job's device timeline, simulated causally for every rank: within a step, each collective follows
// some compute (the first --compute-ms, the others 10 ms); it ends --transfer-ms after the last rank
// arrived, and every rank continues from there; 20 ms of optimizer work end the step. The straggler's
// first compute of each late step takes --late-ms longer.
struct Span {
  uint64_t arrive = 0, end = 0;
};

std::vector<Span> Timeline(const Args& a, uint64_t base) {
  std::vector<Span> out;
  std::vector<double> t(static_cast<size_t>(a.ranks), 0.0);  // ms since base, per rank
  for (int s = 0; s < a.steps; ++s) {
    for (int c = 0; c < a.per_step; ++c) {
      double last = 0;
      std::vector<double> arrive(t.size());
      for (int r = 0; r < a.ranks; ++r) {
        double work = c == 0 ? a.compute_ms : 10.0;
        if (r == a.straggler && s >= a.late_from && c == 0) work += a.late_ms;
        arrive[static_cast<size_t>(r)] = t[static_cast<size_t>(r)] + work;
        last = std::max(last, arrive[static_cast<size_t>(r)]);
      }
      const double end = last + a.transfer_ms;
      out.push_back({base + static_cast<uint64_t>(arrive[static_cast<size_t>(a.rank)] * 1e6),
                     base + static_cast<uint64_t>(end * 1e6)});
      for (double& v : t) v = end;
    }
    for (double& v : t) v += 20.0;
  }
  return out;
}

// One communicator of the plugin (v5) and the calls NCCL makes on it.
struct Comm {
  ncclProfiler_v5_t* p = nullptr;
  void* ctx = nullptr;
  int rank = 0;
};

// NCCL's init of communicator `hash`; false (after saying why) when the plugin asked for no events.
bool InitComm(ncclProfiler_v5_t* p, uint64_t hash, const char* name, const Args& a, Comm* c) {
  int mask = 0;
  c->p = p;
  c->rank = a.rank;
  Check(p->init(&c->ctx, hash, &mask, name, 1, a.ranks, a.rank, Logger), "init");
  if ((mask & ncclProfileColl) && (mask & ncclProfileKernelCh)) return true;
  std::fprintf(stderr, "harness: the plugin asked for events 0x%x, not collectives and kernel channels\n", mask);
  Check(p->finalize(c->ctx), "finalize");  // NCCL finalizes every communicator it initialised
  return false;
}

void* StartColl(const Comm& c, const char* func, size_t count, uint64_t seq, uint8_t channels) {
  ncclProfilerEventDescr_v5_t coll{};
  coll.type = ncclProfileColl;
  coll.rank = c.rank;
  coll.coll.seqNumber = seq;
  coll.coll.func = func;
  coll.coll.count = count;
  coll.coll.datatype = "ncclFloat32";
  coll.coll.nChannels = channels;
  void* h = nullptr;
  Check(c.p->startEvent(c.ctx, &h, &coll), "startEvent(coll)");
  return h;
}

void* StartChannel(const Comm& c, void* parent, int id, uint64_t ptimer) {
  ncclProfilerEventDescr_v5_t k{};
  k.type = ncclProfileKernelCh;
  k.parentObj = parent;
  k.rank = c.rank;
  k.kernelCh.channelId = static_cast<uint8_t>(id);
  k.kernelCh.pTimer = ptimer;
  void* h = nullptr;
  Check(c.p->startEvent(c.ctx, &h, &k), "startEvent(kernelCh)");
  return h;
}

void StopChannel(const Comm& c, void* channel, uint64_t ptimer) {
  ncclProfilerEventStateArgs_v5_t st{};
  st.kernelCh.pTimer = ptimer;
  Check(c.p->recordEventState(channel, ncclProfilerKernelChStop, &st), "recordEventState(KernelChStop)");
  Check(c.p->stopEvent(channel), "stopEvent(kernelCh)");
}

// An event type the plugin did not ask for: it must hand back no handle.
void UnwantedEvent(const Comm& c) {
  ncclProfilerEventDescr_v5_t other{};
  other.type = ncclProfileProxyOp;
  void* oh = reinterpret_cast<void*>(1);
  Check(c.p->startEvent(c.ctx, &oh, &other), "startEvent(proxyOp)");
  if (oh == nullptr) return;
  std::fprintf(stderr, "harness: the plugin returned a handle for an event it did not ask for\n");
  ++failures;
}

// A send to the next rank on one channel: NCCL stops the p2p event on the host, then its kernel runs.
void P2pOp(const Comm& c, int ranks) {
  ncclProfilerEventDescr_v5_t d{};
  d.type = ncclProfileP2p;
  d.rank = c.rank;
  d.p2p.func = "Send";
  d.p2p.count = 64;
  d.p2p.datatype = "ncclFloat32";
  d.p2p.peer = (c.rank + 1) % ranks;
  d.p2p.nChannels = 1;
  void* h = nullptr;
  Check(c.p->startEvent(c.ctx, &h, &d), "startEvent(p2p)");
  Check(c.p->stopEvent(h), "stopEvent(p2p)");
  const uint64_t t = RealtimeNs();
  StopChannel(c, StartChannel(c, h, 0, t), t + 2000);
}

// The default run: collective `i` of the timeline, its callbacks in one of three legal orders.
void TimelineCollective(const Comm& c, uint64_t i, const Span& span) {
  void* h = StartColl(c, "AllReduce", 1 << 20, i, 2);
  const int order = static_cast<int>(i % 3);  // 0: as NCCL (stopped before its kernel), 1: between, 2: after
  if (order == 0) Check(c.p->stopEvent(h), "stopEvent(coll)");
  void* ch[2] = {StartChannel(c, h, 0, span.arrive), StartChannel(c, h, 1, span.arrive + 1000)};
  UnwantedEvent(c);
  if (order == 1) Check(c.p->stopEvent(h), "stopEvent(coll)");
  for (int k = 0; k < 2; ++k) StopChannel(c, ch[k], span.end - static_cast<uint64_t>(k) * 500);
  if (order == 2) Check(c.p->stopEvent(h), "stopEvent(coll)");
}

int RunV5(const Args& a, ncclProfiler_v5_t* p, uint64_t base) {
  Comm c;
  if (!InitComm(p, a.comm_hash, "world", a, &c)) return 3;
  const std::vector<Span> timeline = Timeline(a, base);
  for (int s = 0; s < a.steps; ++s) {
    for (int k = 0; k < a.per_step; ++k) {
      const uint64_t i = static_cast<uint64_t>(s * a.per_step + k);
      TimelineCollective(c, i, timeline[i]);
    }
    P2pOp(c, a.ranks);
  }
  Check(p->finalize(c.ctx), "finalize");
  return failures ? 1 : 0;
}

// Collective #seq of `c` from enqueue to done, in NCCL's order (stopped on the host before its kernel starts).
void CompleteCollective(const Comm& c, const char* func, size_t count, uint64_t seq) {
  void* h = StartColl(c, func, count, seq, 2);
  Check(c.p->stopEvent(h), "stopEvent(coll)");
  const uint64_t t = RealtimeNs();
  void* ch[2] = {StartChannel(c, h, 0, t), StartChannel(c, h, 1, t + 1000)};
  for (void* x : ch) StopChannel(c, x, t + 50000);
}

// Collective #seq enqueued (and stopped on the host); its kernel started on both channels when `kernel`;
// never finished.
void EnqueueStuck(const Comm& c, size_t count, uint64_t seq, bool kernel) {
  void* h = StartColl(c, "AllReduce", count, seq, 2);
  Check(c.p->stopEvent(h), "stopEvent(coll)");
  if (!kernel) return;
  const uint64_t t = RealtimeNs();
  for (int k = 0; k < 2; ++k) (void)StartChannel(c, h, k, t + static_cast<uint64_t>(k) * 1000);
}

// What this rank does at collective #K of the scenario.
void StuckAt(const Args& a, const Comm& c) {
  const auto k = static_cast<uint64_t>(a.at);
  if (a.scenario == "hang") {
    if (a.rank != 2) EnqueueStuck(c, 1024, k, true);
  } else if (a.scenario == "mismatch") {
    EnqueueStuck(c, a.rank == 2 ? 512 : 1024, k, true);
  } else {  // kernel_not_started
    EnqueueStuck(c, 1024, k, a.rank != 1);
  }
}

int RunScenario(const Args& a, ncclProfiler_v5_t* p) {
  Comm world, side;
  if (!InitComm(p, a.comm_hash, "world", a, &world)) return 3;
  const bool hang = a.scenario == "hang";
  if (hang && !InitComm(p, a.comm_hash + 1, "side", a, &side)) return 3;
  for (int i = 0; i < a.at; ++i) {
    CompleteCollective(world, "AllReduce", 1024, static_cast<uint64_t>(i));
    P2pOp(world, a.ranks);
    if (hang) CompleteCollective(side, "AllGather", 256, static_cast<uint64_t>(i));
  }
  StuckAt(a, world);
  if (failures) return 1;
  // Hung: no more callbacks. What the plugin appended must reach the file by itself before the kill.
  const timespec hold{a.hold_ms / 1000, (a.hold_ms % 1000) * 1000000L};
  nanosleep(&hold, nullptr);
  kill(getpid(), SIGKILL);
  return 1;  // not reached
}

int RunV3(const Args& a, ncclProfiler_v3_t* p) {
  void* ctx = nullptr;
  int mask = 0;
  Check(p->init(&ctx, &mask), "init");
  if (!(mask & ncclProfileColl)) {
    Check(p->finalize(ctx), "finalize");
    return 3;
  }
  for (int s = 0; s < a.steps * a.per_step; ++s) {
    ncclProfilerEventDescr_v3_t coll{};
    coll.type = ncclProfileColl;
    coll.coll.seqNumber = static_cast<uint64_t>(s);
    coll.rank = a.rank;
    coll.coll.name = "world";
    coll.coll.commHash = a.comm_hash;
    coll.coll.func = "AllGather";
    coll.coll.count = 4096;
    void* h = nullptr;
    Check(p->startEvent(ctx, &h, &coll), "startEvent(coll)");
    ncclProfilerEventDescr_v3_t k{};
    k.type = ncclProfileKernelCh;
    k.parentObj = h;
    void* ch = nullptr;
    Check(p->startEvent(ctx, &ch, &k), "startEvent(kernelCh)");
    const timespec pause{0, 200000};
    nanosleep(&pause, nullptr);
    Check(p->stopEvent(ch), "stopEvent(kernelCh)");
    Check(p->stopEvent(h), "stopEvent(coll)");
  }
  Check(p->finalize(ctx), "finalize");
  return failures ? 1 : 0;
}

}  // namespace

// Threads of this process (/proc/self/task entries).
int ThreadCount() {
  int n = 0;
  if (DIR* d = opendir("/proc/self/task")) {
    while (dirent* e = readdir(d))
      if (e->d_name[0] != '.') ++n;
    closedir(d);
  }
  return n;
}

int main(int argc, char** argv) {
  Args a;
  if (!Parse(argc, argv, &a)) {
    std::fprintf(stderr,
                 "usage: strata_nccl_harness PLUGIN --rank R --ranks N [--version 5|3] [--steps S] "
                 "[--per-step C] [--straggler K --late-ms X --late-from S0] [--comm-hash H] "
                 "[--scenario hang|mismatch|kernel_not_started --at K --hold-ms MS]\n");
    return 2;
  }
  void* lib = dlopen(a.plugin, RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) {
    std::fprintf(stderr, "harness: cannot load %s: %s\n", a.plugin, dlerror());
    return 1;
  }
  const char* symbol = a.version == 5 ? "ncclProfiler_v5" : "ncclProfiler_v3";
  void* table = dlsym(lib, symbol);
  if (table == nullptr) {
    std::fprintf(stderr, "harness: %s does not export %s\n", a.plugin, symbol);
    return 1;
  }
  // The same base on every rank: the ranks' device clocks agree (one host), as globaltimers roughly do.
  const char* base_env = std::getenv("HARNESS_BASE_NS");
  const uint64_t base = base_env ? std::strtoull(base_env, nullptr, 10) : RealtimeNs();
  if (!a.scenario.empty()) return RunScenario(a, static_cast<ncclProfiler_v5_t*>(table));
  const int rc = a.version == 5 ? RunV5(a, static_cast<ncclProfiler_v5_t*>(table), base)
                                : RunV3(a, static_cast<ncclProfiler_v3_t*>(table));
  // NCCL may unload the plugin after the last communicator's finalize, so no plugin thread may outlive it:
  // the harness's own thread must be the only one left. (Not checked by dlclose: unmapping the plugin hides
  // its never-destroyed recording from the leak checker, which then reports it as lost.)
  if (rc == 0 && ThreadCount() != 1) {
    std::fprintf(stderr, "harness: %d threads are left after the last finalize\n", ThreadCount());
    return 1;
  }
  return rc;
}
