// strata_nccl_harness: stands in for NCCL to test libstrata_nccl_profiler.so without a GPU. It dlopens the
// plugin, looks up ncclProfiler_v5 (or _v3) as NCCL does, and drives its callbacks with constructed events
// of one rank of a data-parallel job (Timeline below): per step, collectives whose kernels start on the
// device when this rank arrives and end when the last rank has arrived plus a transfer time. One rank
// (--straggler) computes --late-ms longer from step --late-from on. Device times are globaltimer-like
// (CLOCK_REALTIME ns from HARNESS_BASE_NS, the same for every rank).
// Callbacks come in a shuffled but legal order (the collective's stop before or after its channels').
// usage: strata_nccl_harness PLUGIN --rank R --ranks N [--version 5|3] [--steps S] [--per-step C]
//        [--straggler K --late-ms X --late-from S0]       Exit 0 when every callback returned ncclSuccess.
#include <dlfcn.h>
#include <time.h>

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
};

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
    else
      return false;
  }
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

int RunV5(const Args& a, ncclProfiler_v5_t* p, uint64_t base) {
  void* ctx = nullptr;
  int mask = 0;
  Check(p->init(&ctx, 42, &mask, "world", 1, a.ranks, a.rank, Logger), "init");
  if (!(mask & ncclProfileColl) || !(mask & ncclProfileKernelCh)) {
    std::fprintf(stderr, "harness: the plugin asked for events 0x%x, not collectives and kernel channels\n", mask);
    return 3;
  }
  const std::vector<Span> timeline = Timeline(a, base);
  for (int s = 0; s < a.steps; ++s) {
    for (int c = 0; c < a.per_step; ++c) {
      const uint64_t arrive = timeline[static_cast<size_t>(s * a.per_step + c)].arrive;
      const uint64_t end = timeline[static_cast<size_t>(s * a.per_step + c)].end;
      ncclProfilerEventDescr_v5_t coll{};
      coll.type = ncclProfileColl;
      coll.rank = a.rank;
      coll.coll.seqNumber = static_cast<uint64_t>(s * a.per_step + c);
      coll.coll.func = "AllReduce";
      coll.coll.count = 1 << 20;
      coll.coll.datatype = "ncclFloat32";
      coll.coll.nChannels = 2;
      void* h = nullptr;
      Check(p->startEvent(ctx, &h, &coll), "startEvent(coll)");
      void* ch[2] = {};
      for (int i = 0; i < 2; ++i) {
        ncclProfilerEventDescr_v5_t k{};
        k.type = ncclProfileKernelCh;
        k.parentObj = h;
        k.rank = a.rank;
        k.kernelCh.channelId = static_cast<uint8_t>(i);
        k.kernelCh.pTimer = arrive + static_cast<uint64_t>(i) * 1000;
        Check(p->startEvent(ctx, &ch[i], &k), "startEvent(kernelCh)");
      }
      // An event type the plugin did not ask for: it must hand back no handle and accept stopping it.
      ncclProfilerEventDescr_v5_t other{};
      other.type = ncclProfileProxyOp;
      void* oh = reinterpret_cast<void*>(1);
      Check(p->startEvent(ctx, &oh, &other), "startEvent(proxyOp)");
      if (oh != nullptr) {
        std::fprintf(stderr, "harness: the plugin returned a handle for an event it did not ask for\n");
        ++failures;
      }
      const bool coll_first = (s + c) % 2 == 0;
      if (coll_first) Check(p->stopEvent(h), "stopEvent(coll)");
      for (int i = 0; i < 2; ++i) {
        ncclProfilerEventStateArgs_v5_t st{};
        st.kernelCh.pTimer = end - static_cast<uint64_t>(i) * 500;
        Check(p->recordEventState(ch[i], ncclProfilerKernelChStop, &st), "recordEventState(KernelChStop)");
        Check(p->stopEvent(ch[i]), "stopEvent(kernelCh)");
      }
      if (!coll_first) Check(p->stopEvent(h), "stopEvent(coll)");
    }
  }
  Check(p->finalize(ctx), "finalize");
  return failures ? 1 : 0;
}

int RunV3(const Args& a, ncclProfiler_v3_t* p) {
  void* ctx = nullptr;
  int mask = 0;
  Check(p->init(&ctx, &mask), "init");
  if (!(mask & ncclProfileColl)) return 3;
  for (int s = 0; s < a.steps * a.per_step; ++s) {
    ncclProfilerEventDescr_v3_t coll{};
    coll.type = ncclProfileColl;
    coll.coll.seqNumber = static_cast<uint64_t>(s);
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

int main(int argc, char** argv) {
  Args a;
  if (!Parse(argc, argv, &a)) {
    std::fprintf(stderr,
                 "usage: strata_nccl_harness PLUGIN --rank R --ranks N [--version 5|3] [--steps S] "
                 "[--per-step C] [--straggler K --late-ms X --late-from S0]\n");
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
  return a.version == 5 ? RunV5(a, static_cast<ncclProfiler_v5_t*>(table), base)
                        : RunV3(a, static_cast<ncclProfiler_v3_t*>(table));
}
