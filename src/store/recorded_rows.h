// The rows of one recording file as the store keeps them: one struct per table of the recorder's segment format
// (segments/segment_format.h lays them out on disk; segments/ reads and writes these structs), and a read file's
// rows without its JSON meta records, which the recording's index (store/recorded_run.h) keeps. The store owns
// them so that it needs nothing of the file format: segments/ sits above the store (ctest include_graph).
// Invariants: free of any JSON library; times are CLOCK_MONOTONIC nanoseconds of the recording host.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace strata {

// What a recording file's header said: its format version (0 until read), when it was created (wall clock),
// and the offset that places the CLOCK_MONOTONIC times of all its tables on the wall clock.
struct RecordedFileHeader {
  uint32_t version = 0;
  int64_t created_unix_ns = 0;
  int64_t realtime_minus_monotonic_ns = 0;
};

// A traced thread off CPU over [start_ns, end_ns). state 0 = preempted (still runnable), 1 = sleeping,
// 2 = uninterruptible (D); runq_ns = the part of it spent runnable, waiting for a CPU.
struct OffCpuRow {
  uint32_t tid = 0, tgid = 0;
  uint64_t start_ns = 0, end_ns = 0, runq_ns = 0;
  uint32_t state = 0, preempted_by = 0, ran_before = 0, waker = 0, cpu = 0;
};

struct SampleRow {
  uint64_t ts_ns = 0;
  uint32_t tid = 0, tgid = 0, cpu = 0;
  int32_t user_stack = -1, kernel_stack = -1;
};

// One probed call; `probe` indexes the "probe" meta records (name, kind, library, symbol).
struct CallRow {
  uint32_t tid = 0, tgid = 0, probe = 0;
  uint64_t start_ns = 0, end_ns = 0;
};

// A probed collective call entered at ts_ns (the `call` row with the same tid, probe and start_ns = ts_ns is
// written when it returns; an entry without one was still inside, or its thread died inside). `comm` names
// its communicator (the recorder: the call's first argument, a c10d process group's `this`, equal for one
// communicator's calls within a process; the NCCL plugin: NCCL's commHash, equal on every rank); `count` is
// its element count (0: not known).
struct CallEnterRow {
  uint32_t tid = 0, tgid = 0, probe = 0;
  uint64_t ts_ns = 0, comm = 0, count = 0;
};

// The Python frames of the sample of (ts_ns, tid); `py_stack` indexes the "py_stack" meta records of tgid.
struct PySampleRow {
  uint64_t ts_ns = 0;
  uint32_t tid = 0, tgid = 0;
  int32_t py_stack = -1;
};

struct GcRow {
  uint32_t tid = 0, tgid = 0;
  uint64_t start_ns = 0, end_ns = 0;
  int32_t generation = 0;
  int64_t collected = 0;
};

// One counter sample; `series` indexes the "series" meta records.
struct CounterRow {
  uint64_t ts_ns = 0;
  uint32_t series = 0;
  double value = 0;
};

// The rows of one recording file; `problems` says what could not be used (a torn last block, a bad checksum) —
// the rows before it are kept.
struct RecordedRows {
  std::string path;
  RecordedFileHeader header;
  std::vector<OffCpuRow> off_cpu;
  std::vector<SampleRow> samples;
  std::vector<CallRow> calls;
  std::vector<GcRow> gcs;
  std::vector<CounterRow> counters;
  std::vector<PySampleRow> py_samples;
  std::vector<CallEnterRow> call_enters;
  size_t blocks = 0;
  std::vector<std::string> problems;
};

}  // namespace strata
