/* One "rank" of a job that calls the NCCL API (tests/recorder/fake_nccl.c stands in for libnccl.so): RANK
 * from the environment, as torchrun sets it. Each rank calls ncclAllReduce --calls times on 1024 elements,
 * 20 ms apart, and one ncclSend of 100 + RANK elements (point-to-point: counts differ by design); rank
 * --odd-rank calls all_reduce number --odd-call on 512 elements instead (a collective mismatch by size).
 * usage: nccl_api_caller CALLS ODD_RANK ODD_CALL */
#include <stddef.h>
#include <stdlib.h>
#include <time.h>

int ncclAllReduce(const void*, void*, size_t, int, int, void*, void*);
int ncclSend(const void*, size_t, int, int, void*, void*);

int main(int argc, char** argv) {
  if (argc != 4) return 2;
  const int calls = atoi(argv[1]), odd_rank = atoi(argv[2]), odd_call = atoi(argv[3]);
  const char* rank_env = getenv("RANK");
  const int rank = rank_env ? atoi(rank_env) : 0;
  static float buffer[1024];
  const struct timespec pause = {0, 20 * 1000 * 1000};
  ncclSend(buffer, (size_t)(100 + rank), 7, (rank + 1) % 3, NULL, NULL);
  for (int i = 0; i < calls; i++) {
    const size_t count = rank == odd_rank && i == odd_call ? 512 : 1024;
    if (ncclAllReduce(buffer, buffer, count, 7, 0, NULL, NULL) != 0) return 1;
    nanosleep(&pause, NULL);
  }
  return 0;
}
