// The one decoder of where a recording's ranked processes were (importers/recorded_threads.h) on a
// constructed segment: ranked processes only, exits on the Unix clock with the main thread's last Python
// stack, thread states of the process's threads with when the main thread woke, its off-CPU intervals with the
// stack sampled at their end, its CPU samples named once per distinct stack, Python stacks cut to
// kNamedPythonFrames frames and marked when they run PyTorch's data loading.
#include <gtest/gtest.h>

#include "importers/recorded_threads.h"

namespace strata {
namespace {

constexpr uint64_t kMs = 1'000'000;
constexpr int64_t kOffset = 1'700'000'000'000'000'000;

int64_t Unix(uint64_t mono) { return kOffset + static_cast<int64_t>(mono); }

RecordedSegment Job() {
  RecordedSegment seg;
  seg.data.header.realtime_minus_monotonic_ns = kOffset;
  seg.processes[10] = {10, 1, 0, "python3", "", 0, 0};
  seg.processes[11] = {11, 10, 0, "pt_data_worker", "", 0, 0};
  seg.processes[30] = {30, 1, std::nullopt, "launcher", "", 0, 0};
  std::vector<PythonFrameRef> deep;
  for (int i = 0; i < 12; ++i) deep.push_back({"f" + std::to_string(i), "/x/train.py", i});
  seg.python_stacks[{10, 0}] = deep;
  seg.python_stacks[{10, 1}] = {
      {"_MapDatasetFetcher.fetch", "/usr/lib/python3/dist-packages/torch/utils/data/_utils/fetch.py", 3}};
  seg.user_stacks[{10, 5}] = {{"spin", "/x/libjob.so"}};
  return seg;
}

const ProcessThreads& Decoded(const RecordedThreads& t, uint32_t pid) { return t.segments.at(0).processes.at(pid); }

RecordedThreads Decode(const RecordedSegment& seg) {
  RecordedRun run;
  run.segments.push_back(seg);
  return DecodeRecordedThreads(run);
}

TEST(RecordedThreads, RankedProcessesWithTheirExitAndLastPythonStack) {
  RecordedSegment seg = Job();
  seg.processes[10].exited_ns = 500 * kMs;
  seg.processes[10].exit_code = 3;
  seg.data.py_samples.push_back({100 * kMs, 10, 10, 1});
  seg.data.py_samples.push_back({400 * kMs, 10, 10, 0});  // the last before the exit
  seg.data.py_samples.push_back({600 * kMs, 10, 10, 1});  // after it
  seg.data.py_samples.push_back({450 * kMs, 12, 10, 1});  // another thread's
  const RecordedThreads t = Decode(seg);
  ASSERT_EQ(t.segments.size(), 1u);
  EXPECT_EQ(t.segments[0].processes.size(), 2u) << "the launcher has no rank";
  const ProcessThreads& p = Decoded(t, 10);
  EXPECT_EQ(p.rank, 0);
  ASSERT_TRUE(p.exited_unix_ns);
  EXPECT_EQ(*p.exited_unix_ns, Unix(500 * kMs));
  EXPECT_EQ(p.exit_code, 3);
  ASSERT_GE(p.python_at_exit, 0);
  const NamedPythonStack& s = p.stacks.at(static_cast<size_t>(p.python_at_exit));
  ASSERT_EQ(s.frames.size(), kNamedPythonFrames);
  EXPECT_EQ(s.frames[0], "Python f0 (train.py:0)");
  EXPECT_FALSE(s.data_loading);
  EXPECT_EQ(Decoded(t, 11).ppid, 10u);
  EXPECT_FALSE(Decoded(t, 11).exited_unix_ns);
}

TEST(RecordedThreads, ThreadStatesWithWhenTheMainThreadWoke) {
  RecordedSegment seg = Job();
  // {pid, tid, ts, since, state, syscall, wchan, user_stack, kernel_stack, py_stack}
  seg.thread_states.push_back({10, 10, 300 * kMs, 100 * kMs, 1, "202", "futex_wait_queue", 5, -1, 1});
  seg.thread_states.push_back({10, 13, 300 * kMs, 0, 1, "0", "pipe_read", -1, -1, 7});  // a stack not recorded
  seg.thread_states.back().since_before_attach = true;
  seg.thread_states.back().comm = "holder";
  seg.thread_states.push_back({30, 30, 300 * kMs, 100 * kMs, 1, "202", "", -1, -1, -1});  // no rank
  seg.data.off_cpu.push_back({10, 10, 100 * kMs, 250 * kMs, 0, 1, 0, 0, 0, 0});
  seg.data.off_cpu.push_back({10, 10, 100 * kMs, 200 * kMs, 0, 1, 0, 0, 0, 0});  // the earlier end counts
  const RecordedThreads t = Decode(seg);
  const ProcessThreads& p = Decoded(t, 10);
  ASSERT_EQ(p.thread_states.size(), 2u);
  const ThreadStateRecord& main = p.thread_states[0];
  EXPECT_EQ(main.tid, 10u);
  EXPECT_EQ(main.seen_unix_ns, Unix(300 * kMs));
  EXPECT_EQ(main.since_unix_ns, Unix(100 * kMs));
  EXPECT_EQ(main.woke_unix_ns, Unix(200 * kMs));
  EXPECT_EQ(main.syscall, "202");
  ASSERT_GE(main.native, 0);
  EXPECT_EQ(p.native_frames.at(static_cast<size_t>(main.native)), "spin [libjob.so]");
  ASSERT_GE(main.python, 0);
  EXPECT_TRUE(p.stacks.at(static_cast<size_t>(main.python)).data_loading);
  const ThreadStateRecord& other = p.thread_states[1];
  EXPECT_EQ(other.since_unix_ns, 0) << "asleep since before the attach: unknown";
  EXPECT_TRUE(other.since_before_attach);
  EXPECT_EQ(other.woke_unix_ns, 0) << "only the main thread's wake is read";
  EXPECT_EQ(other.python, -1);
  EXPECT_EQ(other.comm, "holder");
}

TEST(RecordedThreads, MainThreadOffCpuAndSamplesWithNamedStacks) {
  RecordedSegment seg = Job();
  seg.data.off_cpu.push_back({10, 10, 100 * kMs, 200 * kMs, 0, 2, 0, 0, 0, 0});
  seg.data.off_cpu.push_back({12, 10, 100 * kMs, 200 * kMs, 0, 1, 0, 0, 0, 0});  // another thread: left out
  seg.data.py_samples.push_back({200 * kMs, 10, 10, 1});                         // taken when it came back
  for (uint64_t t = 300; t < 310; ++t) {
    seg.data.samples.push_back({t * kMs, 10, 10, 0, 5, -1});
    seg.data.py_samples.push_back({t * kMs, 10, 10, 0});
  }
  seg.data.samples.push_back({320 * kMs, 10, 10, 0, 99, -1});  // a stack not recorded
  seg.data.samples.push_back({330 * kMs, 12, 10, 0, 5, -1});   // another thread's
  const RecordedThreads t = Decode(seg);
  const ProcessThreads& p = Decoded(t, 10);
  ASSERT_EQ(p.off_cpu.size(), 1u);
  EXPECT_EQ(p.off_cpu[0].start_unix_ns, Unix(100 * kMs));
  EXPECT_EQ(p.off_cpu[0].end_unix_ns, Unix(200 * kMs));
  EXPECT_EQ(p.off_cpu[0].state, 2u);
  ASSERT_GE(p.off_cpu[0].python, 0);
  EXPECT_TRUE(p.stacks.at(static_cast<size_t>(p.off_cpu[0].python)).data_loading);
  ASSERT_EQ(p.samples.size(), 11u);
  EXPECT_EQ(p.sample_names.size(), 2u) << "one name per distinct stack";
  EXPECT_EQ(p.samples[0].name, p.samples[9].name);
  EXPECT_EQ(p.sample_names.at(p.samples[0].name), "spin [libjob.so] in Python f0 (train.py:0)");
  EXPECT_EQ(p.samples[0].unix_ns, Unix(300 * kMs));
  EXPECT_GE(p.samples[0].native, 0);
  EXPECT_GE(p.samples[0].python, 0);
  EXPECT_EQ(p.samples[10].native, -1);
  EXPECT_EQ(p.samples[10].python, -1);
}

TEST(RecordedThreads, EmptyRecording) { EXPECT_TRUE(DecodeRecordedThreads(RecordedRun{}).empty()); }

}  // namespace
}  // namespace strata
