// The NCCL profiler plugin ABI, declared from its public description (NCCL's ext-profiler/ and
// src/include/plugin/profiler/): NCCL dlopens the library named by NCCL_PROFILER_PLUGIN and looks up the
// versioned symbols ncclProfiler_v5, then older ones (the NCCL 2.28 here tries v5, v4, v3, v1). NCCL's
// headers are not installed here, so the structs NCCL passes are restated; their layout must match NCCL's
// byte for byte (static_asserts below pin the offsets strata reads).
// Only what strata uses is named: collective events (ncclProfileColl), point-to-point events (ncclProfileP2p,
// v5: counted apart from collectives) and their kernel channels (ncclProfileKernelCh), whose start/stop carry
// the GPU's globaltimer in v4+. v5's init gets the communicator's commHash (`commId`), v3's gets nothing: v3
// names it in each collective's descriptor (coll.commHash).
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>

// NCCL's descriptors are C: unions of unnamed structs, which C++ allows only as an extension (clang's -Wpedantic
// says so; g++ accepts them silently). Restated as NCCL writes them, so that the layout stays NCCL's.
#if defined(__clang__)
#pragma clang diagnostic push
#pragma clang diagnostic ignored "-Wnested-anon-types"
#endif

extern "C" {

typedef enum { ncclSuccess = 0, ncclInternalError = 3, ncclInvalidArgument = 4 } ncclResult_t;
typedef enum { NCCL_LOG_NONE = 0, NCCL_LOG_VERSION = 1, NCCL_LOG_WARN = 2, NCCL_LOG_INFO = 3 } ncclDebugLogLevel;
typedef void (*ncclDebugLogger_t)(ncclDebugLogLevel level, unsigned long flags, const char* file, int line,
                                  const char* fmt, ...);

// Event type bits (eActivationMask and descriptor `type`).
enum : uint64_t {
  ncclProfileGroup = 1u << 0,
  ncclProfileColl = 1u << 1,
  ncclProfileP2p = 1u << 2,
  ncclProfileProxyOp = 1u << 3,
  ncclProfileProxyStep = 1u << 4,
  ncclProfileProxyCtrl = 1u << 5,
  ncclProfileKernelCh = 1u << 6,
  ncclProfileNetPlugin = 1u << 7,
  ncclProfileGroupApi = 1u << 8,
  ncclProfileCollApi = 1u << 9,
  ncclProfileP2pApi = 1u << 10,
  ncclProfileKernelLaunch = 1u << 11,
};

// Event states (recordEventState); the numbering is fixed across versions.
typedef enum { ncclProfilerKernelChStop = 22 } ncclProfilerEventState_t;

// --- version 5 ------------------------------------------------------------------------------------
typedef struct {
  uint64_t type;
  void* parentObj;
  int rank;
  union {
    struct {
      bool graphCaptured;
      int groupDepth;
    } groupApi;
    struct {
      const char* func;
      size_t count;
      const char* datatype;
      int root;
      void* stream;
      bool graphCaptured;
    } collApi;
    struct {
      const char* func;
      size_t count;
      const char* datatype;
      void* stream;
      bool graphCaptured;
    } p2pApi;
    struct {
      void* stream;
    } kernelLaunch;
    struct {
      uint64_t seqNumber;
      const char* func;
      void const* sendBuff;
      void* recvBuff;
      size_t count;
      int root;
      const char* datatype;
      uint8_t nChannels;
      uint8_t nWarps;
      const char* algo;
      const char* proto;
      void* parentGroup;
    } coll;
    struct {
      const char* func;
      void* buff;
      const char* datatype;
      size_t count;
      int peer;
      uint8_t nChannels;
      void* parentGroup;
    } p2p;
    struct {
      pid_t pid;
      uint8_t channelId;
      int peer;
      int nSteps;
      int chunkSize;
      int isSend;
    } proxyOp;
    struct {
      int step;
    } proxyStep;
    struct {
      uint8_t channelId;
      uint64_t pTimer;  // GPU globaltimer (ns) when the channel's kernel work started
    } kernelCh;
    struct {
      int64_t id;
      void* data;
    } netPlugin;
  };
} ncclProfilerEventDescr_v5_t;

typedef union {
  struct {
    size_t transSize;
  } proxyStep;
  struct {
    int appendedProxyOps;
  } proxyCtrl;
  struct {
    void* data;
  } netPlugin;
  struct {
    uint64_t pTimer;  // GPU globaltimer (ns) at ncclProfilerKernelChStop
  } kernelCh;
  struct {
    uint64_t pTimer;
  } kernelStep;
} ncclProfilerEventStateArgs_v5_t;

typedef struct {
  const char* name;
  ncclResult_t (*init)(void** context, uint64_t commId, int* eActivationMask, const char* commName, int nNodes,
                       int nranks, int rank, ncclDebugLogger_t logfn);
  ncclResult_t (*startEvent)(void* context, void** eHandle, ncclProfilerEventDescr_v5_t* eDescr);
  ncclResult_t (*stopEvent)(void* eHandle);
  ncclResult_t (*recordEventState)(void* eHandle, ncclProfilerEventState_t eState,
                                   ncclProfilerEventStateArgs_v5_t* eStateArgs);
  ncclResult_t (*finalize)(void* context);
} ncclProfiler_v5_t;

// --- version 3 (no device timestamps: kernel channel times are taken on the host) ----------------
typedef struct {
  uint8_t type;
  void* parentObj;
  int rank;
  union {
    struct {
      const char* name;
      uint64_t commHash;
      uint64_t seqNumber;
      const char* func;
      void const* sendBuff;
      void* recvBuff;
      size_t count;
      int root;
      const char* datatype;
      uint8_t nMaxChannels;
      uint8_t nWarps;
      const char* algo;
      const char* proto;
    } coll;
    struct {
      uint8_t channelId;
    } kernelCh;
  };
} ncclProfilerEventDescr_v3_t;

typedef union {
  struct {
    size_t transSize;
    int steps;
  } proxyOp;
  struct {
    int appendedProxyOps;
  } proxyCtrl;
} ncclProfilerEventStateArgs_v3_t;

typedef struct {
  const char* name;
  ncclResult_t (*init)(void** context, int* eActivationMask);
  ncclResult_t (*startEvent)(void* context, void** eHandle, ncclProfilerEventDescr_v3_t* eDescr);
  ncclResult_t (*stopEvent)(void* eHandle);
  ncclResult_t (*recordEventState)(void* eHandle, ncclProfilerEventState_t eState,
                                   ncclProfilerEventStateArgs_v3_t* eStateArgs);
  ncclResult_t (*finalize)(void* context);
} ncclProfiler_v3_t;

}  // extern "C"

#if defined(__clang__)
#pragma clang diagnostic pop
#endif

// The offsets strata reads, as NCCL lays them out on x86-64 (LP64).
static_assert(offsetof(ncclProfilerEventDescr_v5_t, coll) == 24);
static_assert(offsetof(ncclProfilerEventDescr_v5_t, coll.func) == 32);
static_assert(offsetof(ncclProfilerEventDescr_v5_t, coll.count) == 56);
static_assert(offsetof(ncclProfilerEventDescr_v5_t, coll.datatype) == 72);
static_assert(offsetof(ncclProfilerEventDescr_v5_t, coll.nChannels) == 80);
static_assert(offsetof(ncclProfilerEventDescr_v5_t, p2p.nChannels) == 60);
static_assert(offsetof(ncclProfilerEventDescr_v5_t, kernelCh.pTimer) == 32);
static_assert(offsetof(ncclProfilerEventDescr_v3_t, rank) == 16);
static_assert(offsetof(ncclProfilerEventDescr_v3_t, coll.name) == 24);
static_assert(offsetof(ncclProfilerEventDescr_v3_t, coll.commHash) == 32);
static_assert(offsetof(ncclProfilerEventDescr_v3_t, coll.seqNumber) == 40);
static_assert(offsetof(ncclProfilerEventDescr_v3_t, coll.func) == 48);
