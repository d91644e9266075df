// A hand-made recording with CPU stack samples, for the pprof export's tests: the unit test indexes it in
// memory (tests/pprof/pprof_export_test.cc) and strata_pprof_fixture writes it as a segment file for the CLI
// test (tests/pprof/check_pprof_cli.sh), so that both read the same samples.
//
// Three ranks (pids 100, 110, 120, host "node-a", 100 Hz). Each main thread samples
//  - stack 1, a native leaf compute_kernel (work.cc:42, libwork.so) called from the interpreter running the
//    Python frames Net.forward (train.py:44, its def at 42) <- train_step (train.py:12, its def at 10): 10
//    samples, rank 1 30 (the straggler), rank 2 20;
//  - stack 2, memcpy in libc (no line info) under the interpreter, no Python frames: 5 samples each;
// and each gloo worker thread (tid = pid + 1) samples read_socket (libgloo.so) 4 times; rank 0's worker one
// more time with no user stack. A launcher process (pid 99, no rank) samples too and must be left out.
// Steps, so that the diagnosis names the straggler (as tests/unit/recording_trace_test.cc's DDP recording):
// every 100 ms each rank computes 30 ms (rank 1: 40 ms), then all_reduces on its worker thread until the last
// rank arrives.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <vector>

#include "segments/segment_tables.h"

namespace strata::pprof_fixture {

inline constexpr uint64_t kFixtureMs = 1'000'000;

inline nlohmann::json FixtureFrame(const char* fn, const char* module, const char* file = nullptr, int line = 0,
                                   bool interpreter = false) {
  nlohmann::json f = {{"fn", fn}, {"module", module}, {"offset", 0}};
  if (file) f["file"] = file;
  if (line) f["line"] = line;
  if (interpreter) f["interpreter"] = true;
  return f;
}

inline void AddFixtureMeta(uint32_t pid, int rank, segments::SegmentData* data) {
  data->meta.push_back({{"type", "process"}, {"pid", pid}, {"ppid", 99}, {"rank", rank}, {"comm", "python3"}});
  const auto eval = FixtureFrame("_PyEval_EvalFrameDefault", "/usr/bin/python3.11", nullptr, 0, true);
  const auto main = FixtureFrame("main", "/usr/bin/python3.11");
  data->meta.push_back(
      {{"type", "stack"},
       {"kernel", false},
       {"pid", pid},
       {"id", 1},
       {"frames", {FixtureFrame("compute_kernel", "/opt/app/libwork.so", "work.cc", 42), eval, main}}});
  data->meta.push_back({{"type", "stack"},
                        {"kernel", false},
                        {"pid", pid},
                        {"id", 2},
                        {"frames", {FixtureFrame("memcpy", "/lib/x86_64-linux-gnu/libc.so.6"), eval, main}}});
  data->meta.push_back({{"type", "stack"},
                        {"kernel", false},
                        {"pid", pid},
                        {"id", 3},
                        {"frames", {FixtureFrame("read_socket", "/usr/lib/libgloo.so")}}});
  data->meta.push_back({{"type", "py_stack"},
                        {"pid", pid},
                        {"id", 1},
                        {"frames",
                         {{{"fn", "Net.forward"}, {"file", "train.py"}, {"line", 44}, {"first_line", 42}},
                          {{"fn", "train_step"}, {"file", "train.py"}, {"line", 12}, {"first_line", 10}}}}});
}

// Appends `n` samples of (pid, tid, stack) every 10 ms from *t, with Python stack 1 when `python`.
inline void AddFixtureSamples(uint32_t pid, uint32_t tid, int32_t stack, int n, bool python, uint64_t* t,
                              segments::SegmentData* data) {
  for (int i = 0; i < n; ++i, *t += 10 * kFixtureMs) {
    data->samples.push_back({*t, tid, pid, 0, stack, -1});
    if (python) data->py_samples.push_back({*t, tid, pid, 1});
  }
}

// Ten 100 ms steps of a rank computing `compute_ms` then waiting in a gloo all_reduce (probe 0) that ends
// when the slowest rank (40 ms) has arrived, and a second one 2 ms later.
inline void AddFixtureSteps(uint32_t pid, uint64_t compute_ms, segments::SegmentData* data) {
  data->off_cpu.push_back({pid, pid, 0, 100 * kFixtureMs, 0, 1, 0, 0, 0, 0});
  for (uint64_t step = 1; step <= 10; ++step) {
    const uint64_t t0 = step * 100;
    data->off_cpu.push_back({pid, pid, (t0 + compute_ms) * kFixtureMs, (t0 + 100) * kFixtureMs, 0, 1, 0, 0, 0, 0});
    data->calls.push_back({pid + 1, pid, 0, (t0 + compute_ms) * kFixtureMs, (t0 + 41) * kFixtureMs});
    data->calls.push_back({pid + 1, pid, 0, (t0 + 43) * kFixtureMs, (t0 + 44) * kFixtureMs});
  }
}

inline segments::SegmentData PprofFixtureRecording() {
  segments::SegmentData data;
  data.path = "run/record-node-a.sseg";
  data.meta.push_back({{"type", "recording"}, {"host", "node-a"}, {"sample_hz", 100}, {"recorder_pid", 5}});
  data.meta.push_back({{"type", "process"}, {"pid", 99}, {"ppid", 1}, {"comm", "torchrun"}});
  data.meta.push_back({{"type", "probe"},
                       {"id", 0},
                       {"symbol", "gloo::allreduce(gloo::AllreduceOptions const&)"},
                       {"op", "all_reduce"},
                       {"kind", "collective"},
                       {"library", "/usr/lib/libgloo.so"}});
  const int compute[] = {10, 30, 20};
  for (int rank = 0; rank < 3; ++rank) {
    const auto pid = static_cast<uint32_t>(100 + 10 * rank);
    AddFixtureMeta(pid, rank, &data);
    AddFixtureSteps(pid, rank == 1 ? 40 : 30, &data);
    uint64_t t = 1000 * kFixtureMs;
    AddFixtureSamples(pid, pid, 1, compute[rank], true, &t, &data);
    AddFixtureSamples(pid, pid, 2, 5, false, &t, &data);
    t = 1000 * kFixtureMs;
    AddFixtureSamples(pid, pid + 1, 3, 4, false, &t, &data);
    if (rank == 0) AddFixtureSamples(pid, pid + 1, -1, 1, false, &t, &data);
  }
  data.samples.push_back({1000 * kFixtureMs, 99, 99, 0, -1, -1});  // the launcher: no rank
  return data;
}

}  // namespace strata::pprof_fixture
