/* A stand-in for libnccl.so with NCCL's API signatures (nccl.h, NCCL 2.x) for the calls strata probes, each
 * returning ncclSuccess at once: lets the recorder's uprobes on the NCCL API (element counts read from the
 * count argument) be tested on a machine without a GPU. strata finds probe points by symbol name in a library
 * whose file name starts with libnccl.so (recorder/probe_catalog.cc); this one is built as libnccl.so in its
 * own folder of the build tree and given to `strata record --lib`. */
#include <stddef.h>

typedef int ncclResult_t;
typedef int ncclDataType_t;
typedef int ncclRedOp_t;
typedef void* ncclComm_t;
typedef void* cudaStream_t;

/* What the calls saw, so the compiler keeps each function's body and arguments. */
volatile size_t fake_nccl_last_count;

ncclResult_t ncclAllReduce(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, ncclRedOp_t op,
                           ncclComm_t comm, cudaStream_t stream) {
  (void)sendbuff, (void)recvbuff, (void)datatype, (void)op, (void)comm, (void)stream;
  fake_nccl_last_count = count;
  return 0;
}

ncclResult_t ncclBroadcast(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, int root,
                           ncclComm_t comm, cudaStream_t stream) {
  (void)sendbuff, (void)recvbuff, (void)datatype, (void)root, (void)comm, (void)stream;
  fake_nccl_last_count = count;
  return 0;
}

ncclResult_t ncclSend(const void* sendbuff, size_t count, ncclDataType_t datatype, int peer, ncclComm_t comm,
                      cudaStream_t stream) {
  (void)sendbuff, (void)datatype, (void)peer, (void)comm, (void)stream;
  fake_nccl_last_count = count;
  return 0;
}
