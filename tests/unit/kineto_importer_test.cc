// Kineto / Chrome-trace importer on constructed traces: every phase, ids, GPU flag, args, metadata, and
// every bad-input case (skipped and counted by reason, or an error naming the file and byte offset).
#include "importers/kineto_importer.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "test_util.h"

namespace strata {
namespace {

using testing::ImportKinetoText;
using testing::SkippedCount;

std::string Trace(const std::vector<std::string>& events, const std::string& extra_members = "") {
  std::string out = "{" + extra_members + (extra_members.empty() ? "" : ", ") + "\"traceEvents\": [";
  for (size_t i = 0; i < events.size(); ++i) out += (i ? ",\n" : "\n") + events[i];
  return out + "\n]}";
}

TraceStore MustImport(const std::string& json, size_t batch_bytes = ImportOptions().batch_bytes,
                      bool pipeline = false) {
  auto r = ImportKinetoText(json, batch_bytes, nullptr, pipeline);
  EXPECT_TRUE(r.ok()) << r.error();
  if (!r.ok()) return TraceStore();
  return std::move(r).value();
}

std::string_view Name(const TraceStore& s, size_t row) { return s.strings.view(s.slices.name[row]); }
std::string_view Cat(const TraceStore& s, size_t row) { return s.strings.view(s.slices.category[row]); }
const Track& TrackOf(const TraceStore& s, size_t row) { return s.track(s.slices.track[row]); }

TEST(KinetoImporter, CompleteEvent) {
  const TraceStore s = MustImport(Trace({
      R"({"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 4037, "tid": 23695, "ts": 1682725898236567.125, "dur": 68.0})",
  }));
  ASSERT_EQ(s.slices.size(), 1u);
  EXPECT_EQ(s.slices.ts_ns[0], 1682725898236567125LL);
  EXPECT_EQ(s.slices.dur_ns[0], 68000);
  EXPECT_EQ(Name(s, 0), "aten::mm");
  EXPECT_EQ(Cat(s, 0), "cpu_op");
  EXPECT_EQ(s.slices.flags[0], kSliceComplete | kSliceHasCategory);
  EXPECT_EQ(s.slices.correlation[0], kNoCorrelation);
  EXPECT_EQ(s.slices.args[0], kNoArgs);
  EXPECT_EQ(s.slices.step[0], -1);
  EXPECT_EQ(TrackOf(s, 0).pid, 4037);
  EXPECT_EQ(TrackOf(s, 0).tid, 23695);
  EXPECT_EQ(TrackOf(s, 0).kind, TrackKind::kCpuThread);
  ASSERT_EQ(s.ranks.size(), 1u);
  ASSERT_EQ(s.inputs.size(), 1u);
  EXPECT_EQ(s.ranks[0].events, 1u);
  EXPECT_EQ(s.inputs[0].events, 1u);
  EXPECT_EQ(s.ranks[0].categories, (std::map<std::string, uint64_t>{{"cpu_op", 1}}));
  EXPECT_EQ(s.inputs[0].format, InputFormat::kKineto);
  EXPECT_TRUE(s.inputs[0].float_timestamps);  // ts written as a JSON float
  EXPECT_TRUE(s.inputs[0].skipped.Empty());
  EXPECT_EQ(s.ranks[0].rank, -1);
}

TEST(KinetoImporter, EventWithoutCategory) {
  const TraceStore s = MustImport(Trace({R"({"ph": "X", "name": "n", "pid": 1, "tid": 1, "ts": 5, "dur": 1})"}));
  ASSERT_EQ(s.slices.size(), 1u);
  EXPECT_EQ(s.slices.flags[0] & kSliceHasCategory, 0);
  EXPECT_EQ(s.ranks[0].categories, (std::map<std::string, uint64_t>{{"(none)", 1}}));
  EXPECT_FALSE(s.inputs[0].float_timestamps);
}

TEST(KinetoImporter, FloatTimestampsFlag) {
  // HTA rounds to whole µs when its ts column is floating point: a float ts anywhere, or an event without ts.
  EXPECT_FALSE(MustImport(Trace({R"({"ph": "X", "name": "a", "pid": 1, "tid": 1, "ts": 5, "dur": 1.5})"}))
                   .inputs[0]
                   .float_timestamps);
  EXPECT_TRUE(MustImport(Trace({R"({"ph": "X", "name": "a", "pid": 1, "tid": 1, "ts": 5.0, "dur": 1})"}))
                  .inputs[0]
                  .float_timestamps);
  EXPECT_TRUE(MustImport(Trace({R"({"ph": "X", "name": "a", "pid": 1, "tid": 1, "ts": 5, "dur": 1})",
                                R"({"ph": "M", "name": "thread_name", "pid": 1, "tid": 1, "args": {"name": "t"}})"}))
                  .inputs[0]
                  .float_timestamps);
}

TEST(KinetoImporter, BeginEndPairsNestLifo) {
  const TraceStore s = MustImport(Trace({
      R"({"ph": "B", "name": "outer", "cat": "user", "pid": 1, "tid": 2, "ts": 10})",
      R"({"ph": "B", "name": "inner", "pid": 1, "tid": 2, "ts": 12})",
      R"({"ph": "B", "name": "other thread", "pid": 1, "tid": 3, "ts": 13})",
      R"({"ph": "E", "pid": 1, "tid": 2, "ts": 20})",
      R"({"ph": "E", "pid": 1, "tid": 3, "ts": 21.5})",
      R"({"ph": "E", "name": "ignored", "pid": 1, "tid": 2, "ts": 30})",
  }));
  ASSERT_EQ(s.slices.size(), 3u);
  // Slices are appended lane by lane (in track order), each lane's in the order they close.
  const size_t inner = 0, outer = 1, other = 2;
  EXPECT_EQ(Name(s, inner), "inner");
  EXPECT_EQ(s.slices.ts_ns[inner], 12000);
  EXPECT_EQ(s.slices.dur_ns[inner], 8000);
  EXPECT_EQ(s.slices.flags[inner], kSliceBeginEnd);
  EXPECT_EQ(Name(s, other), "other thread");
  EXPECT_EQ(s.slices.dur_ns[other], 8500);
  EXPECT_EQ(TrackOf(s, other).tid, 3);
  EXPECT_EQ(Name(s, outer), "outer");
  EXPECT_EQ(Cat(s, outer), "user");
  EXPECT_EQ(s.slices.ts_ns[outer], 10000);
  EXPECT_EQ(s.slices.dur_ns[outer], 20000);
  EXPECT_EQ(s.slices.flags[outer], kSliceBeginEnd | kSliceHasCategory);
  EXPECT_EQ(s.ranks[0].events, 3u);
  EXPECT_TRUE(s.inputs[0].skipped.Empty());
}

TEST(KinetoImporter, InstantEvents) {
  const TraceStore s = MustImport(Trace({
      R"({"ph": "i", "s": "t", "name": "mark", "cat": "c", "pid": 1, "tid": 1, "ts": 7})",
      R"({"ph": "I", "name": "mark2", "pid": 1, "tid": 1, "ts": 8})",
      R"({"ph": "n", "name": "mark3", "pid": 1, "tid": 1, "ts": 9, "id": 4})",
  }));
  ASSERT_EQ(s.slices.size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(s.slices.dur_ns[i], 0);
    EXPECT_TRUE(s.slices.flags[i] & kSliceInstant);
    EXPECT_EQ(s.slices.ts_ns[i], static_cast<int64_t>(7000 + 1000 * i));
  }
}

TEST(KinetoImporter, CounterEvents) {
  const TraceStore s = MustImport(Trace({
      R"({"ph": "C", "name": "mem", "pid": 1, "tid": 0, "ts": 5, "args": {"bytes": 100}})",
      R"({"ph": "C", "name": "mem", "pid": 1, "tid": 0, "ts": 6, "args": {"bytes": 150.5}})",
      R"({"ph": "C", "name": "q", "pid": 1, "ts": 7, "args": {"a": 1, "b": "2", "c": "not a number"}})",
  }));
  EXPECT_EQ(s.slices.size(), 0u);
  ASSERT_EQ(s.counters.size(), 4u);
  EXPECT_EQ(s.strings.view(s.track(s.counters.track[0]).name), "mem");
  EXPECT_EQ(s.counters.track[0], s.counters.track[1]);
  EXPECT_EQ(s.counters.ts_ns[1], 6000);
  EXPECT_DOUBLE_EQ(s.counters.value[0], 100);
  EXPECT_DOUBLE_EQ(s.counters.value[1], 150.5);
  EXPECT_EQ(s.strings.view(s.track(s.counters.track[2]).name), "q.a");
  EXPECT_EQ(s.strings.view(s.track(s.counters.track[3]).name), "q.b");
  EXPECT_DOUBLE_EQ(s.counters.value[3], 2);
  EXPECT_EQ(s.track(s.counters.track[0]).kind, TrackKind::kCounter);
  EXPECT_EQ(s.ranks[0].events, 3u);
}

TEST(KinetoImporter, FlowEvents) {
  const TraceStore s = MustImport(Trace({
      R"({"ph": "s", "id": 41, "pid": 1, "tid": 2, "ts": 10, "cat": "ac2g", "name": "ac2g"})",
      R"({"ph": "f", "id": 41, "pid": 0, "tid": 7, "ts": 12, "cat": "ac2g", "name": "ac2g", "bp": "e"})",
      R"({"ph": "t", "id": "0x1a", "pid": 1, "tid": 2, "ts": 13})",
      R"({"ph": "f", "id": "0x1a", "pid": 1, "tid": 2, "ts": 14})",
      R"({"ph": "s", "pid": 1, "tid": 2, "ts": 15})",
  }));
  ASSERT_EQ(s.flows.size(), 4u);
  EXPECT_EQ(s.flows.id[0], 41);
  EXPECT_EQ(s.flows.id[1], 41);
  EXPECT_EQ(s.flows.phase[0], 's');
  EXPECT_EQ(s.flows.phase[1], 'f');
  EXPECT_EQ(s.flows.phase[2], 't');
  EXPECT_EQ(s.flows.ts_ns[1], 12000);
  EXPECT_EQ(s.strings.view(s.flows.category[0]), "ac2g");
  EXPECT_NE(s.flows.track[0], s.flows.track[1]);
  EXPECT_EQ(s.track(s.flows.track[1]).tid, 7);
  EXPECT_EQ(s.flows.id[2], s.flows.id[3]);  // the same string id maps to the same number
  EXPECT_NE(s.flows.id[2], 41);
  EXPECT_EQ(SkippedCount(s, "flow_without_id"), 1u);
  EXPECT_EQ(s.ranks[0].events, 4u);
}

TEST(KinetoImporter, ThreadAndProcessNamesFromMetadata) {
  const TraceStore s = MustImport(Trace({
      R"({"ph": "M", "name": "process_name", "pid": 1, "tid": 0, "args": {"name": "python"}})",
      R"({"ph": "M", "name": "thread_name", "pid": 1, "tid": 2, "args": {"name": "main thread"}})",
      R"({"ph": "M", "name": "thread_sort_index", "pid": 1, "tid": 2, "args": {"sort_index": 5}})",
      R"({"ph": "X", "name": "a", "pid": 1, "tid": 2, "ts": 1, "dur": 1})",
      R"({"ph": "X", "name": "b", "pid": 1, "tid": 3, "ts": 1, "dur": 1})",
      R"({"ph": "X", "name": "c", "pid": 9, "tid": 9, "ts": 1, "dur": 1})",
      R"({"ph": "M", "name": "thread_name", "pid": 9, "tid": 9, "args": {"name": "late name"}})",
  }));
  ASSERT_EQ(s.slices.size(), 3u);
  EXPECT_EQ(s.strings.view(TrackOf(s, 0).name), "main thread");
  EXPECT_EQ(s.strings.view(TrackOf(s, 1).name), "python");     // falls back to the process name
  EXPECT_EQ(s.strings.view(TrackOf(s, 2).name), "late name");  // metadata after the events
  EXPECT_EQ(s.ranks[0].events, 3u);                            // metadata is not counted as events
  EXPECT_TRUE(s.inputs[0].skipped.Empty());
}

TEST(KinetoImporter, MemberOrderInsideEventsDoesNotMatter) {
  // "args" before "ph": counters and metadata must still be read.
  const TraceStore s = MustImport(Trace({
      R"({"args": {"name": "worker"}, "name": "thread_name", "pid": 1, "tid": 2, "ph": "M"})",
      R"({"args": {"v": 3}, "name": "ctr", "pid": 1, "ts": 1, "ph": "C"})",
      R"({"dur": 2, "ts": 1, "tid": 2, "pid": 1, "name": "x", "args": {"stream": 7, "correlation": 9}, "cat": "kernel", "ph": "X"})",
  }));
  ASSERT_EQ(s.slices.size(), 1u);
  EXPECT_EQ(s.strings.view(TrackOf(s, 0).name), "worker");
  EXPECT_TRUE(s.slices.flags[0] & kSliceGpu);
  ASSERT_EQ(s.counters.size(), 1u);
  EXPECT_DOUBLE_EQ(s.counters.value[0], 3);
}

TEST(KinetoImporter, StringPids) {
  const TraceStore s = MustImport(Trace({
      R"({"ph": "X", "name": "a", "pid": "CPU functions", "tid": 1, "ts": 1, "dur": 1})",
      R"({"ph": "X", "name": "b", "pid": "CPU functions", "tid": 1, "ts": 2, "dur": 1})",
      R"({"ph": "X", "name": "c", "pid": "GPU 0", "tid": "stream 7", "ts": 3, "dur": 1})",
      R"({"ph": "X", "name": "d", "pid": 1, "tid": 1, "ts": 4, "dur": 1})",
      R"({"ph": "M", "name": "thread_name", "pid": "GPU 0", "tid": "stream 7", "args": {"name": "Stream 7"}})",
  }));
  ASSERT_EQ(s.slices.size(), 4u);
  EXPECT_EQ(s.slices.track[0], s.slices.track[1]);
  EXPECT_NE(s.slices.track[0], s.slices.track[2]);
  EXPECT_NE(s.slices.track[0], s.slices.track[3]);
  EXPECT_NE(TrackOf(s, 0).pid, 1);  // a string pid never collides with a numeric one
  EXPECT_EQ(s.strings.view(TrackOf(s, 2).name), "Stream 7");
  EXPECT_TRUE(s.inputs[0].skipped.Empty());
}

TEST(KinetoImporter, GpuFlagNeedsStreamAndCorrelation) {
  const TraceStore s = MustImport(Trace({
      R"({"ph": "X", "cat": "kernel", "name": "k1", "pid": 0, "tid": 7, "ts": 1, "dur": 1, "args": {"stream": 7, "correlation": 100, "device": 0}})",
      R"({"ph": "X", "cat": "kernel", "name": "k2", "pid": 0, "tid": 0, "ts": 1, "dur": 1, "args": {"stream": 0, "correlation": 0}})",
      R"({"ph": "X", "cat": "kernel", "name": "k3", "pid": 0, "tid": 8, "ts": 1, "dur": 1, "args": {"stream": 8}})",
      R"({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 1, "dur": 1, "args": {"correlation": 100}})",
      R"({"ph": "X", "cat": "kernel", "name": "k4", "pid": 0, "tid": 9, "ts": 1, "dur": 1, "args": {"stream": -1, "correlation": 5}})",
  }));
  ASSERT_EQ(s.slices.size(), 5u);
  EXPECT_TRUE(s.slices.flags[0] & kSliceGpu);
  EXPECT_EQ(s.slices.correlation[0], 100);
  EXPECT_EQ(TrackOf(s, 0).kind, TrackKind::kGpuStream);
  EXPECT_EQ(TrackOf(s, 0).stream, 7);
  EXPECT_TRUE(s.slices.flags[1] & kSliceGpu);
  EXPECT_EQ(TrackOf(s, 1).stream, 0);
  EXPECT_FALSE(s.slices.flags[2] & kSliceGpu);
  EXPECT_EQ(TrackOf(s, 2).kind, TrackKind::kGpuStream);
  EXPECT_FALSE(s.slices.flags[3] & kSliceGpu);
  EXPECT_EQ(s.slices.correlation[3], 100);
  EXPECT_EQ(TrackOf(s, 3).kind, TrackKind::kCpuThread);
  EXPECT_FALSE(s.slices.flags[4] & kSliceGpu);
}

TEST(KinetoImporter, CollectiveArgs) {
  const TraceStore s = MustImport(Trace({
      R"({"ph": "X", "cat": "kernel", "name": "ncclDevKernel_AllReduce_Sum_f32_RING_LL", "pid": 0, "tid": 7, "ts": 1, "dur": 5,
          "args": {"stream": 7, "correlation": 3, "Collective name": "allreduce", "In msg nelems": 2049000,
                   "Out msg nelems": 2049000, "Group size": 2, "dtype": "Float", "Process Group Name": "0",
                   "Process Group Description": "default_pg", "Process Group Ranks": "[0, 1]"}})",
      R"({"ph": "X", "cat": "cpu_op", "name": "record_param_comms", "pid": 1, "tid": 1, "ts": 0, "dur": 9,
          "args": {"Collective name": "broadcast", "Process Group Description": "pg1", "Group size": 4}})",
      R"({"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 0, "dur": 9, "args": {"Input Dims": [[1]]}})",
  }));
  ASSERT_EQ(s.slices.size(), 3u);
  ASSERT_EQ(s.collective_args.size(), 2u);
  ASSERT_TRUE(s.slices.flags[0] & kSliceCollectiveArgs);
  const CollectiveArgs& a = s.collective_args.at(s.slices.args[0]);
  EXPECT_EQ(s.strings.view(a.collective), "allreduce");
  EXPECT_EQ(s.strings.view(a.group), "0");
  EXPECT_EQ(s.strings.view(a.dtype), "Float");
  EXPECT_EQ(a.in_nelems, 2049000);
  EXPECT_EQ(a.out_nelems, 2049000);
  EXPECT_EQ(a.group_size, 2);
  EXPECT_EQ(s.strings.view(a.group_ranks), "[0, 1]");
  const CollectiveArgs& b = s.collective_args.at(s.slices.args[1]);
  EXPECT_EQ(s.strings.view(b.collective), "broadcast");
  EXPECT_EQ(s.strings.view(b.group), "pg1");  // description when there is no name
  EXPECT_EQ(b.group_size, 4);
  EXPECT_EQ(b.in_nelems, -1);
  EXPECT_FALSE(s.slices.flags[2] & kSliceCollectiveArgs);
  EXPECT_EQ(s.slices.args[2], kNoArgs);
}

TEST(KinetoImporter, TopLevelMetadata) {
  const TraceStore s = MustImport(Trace(
      {R"({"ph": "X", "name": "a", "pid": 1, "tid": 1, "ts": 1, "dur": 1})"},
      R"("schemaVersion": 1, "deviceProperties": [{"id": 0, "name": "NVIDIA A100-SXM4-80GB"}, {"id": 1, "name": "NVIDIA H100"}],
         "distributedInfo": {"backend": "nccl", "rank": 3, "world_size": 8}, "baseTimeNanoseconds": 1682725898000000000)"));
  EXPECT_EQ(s.ranks[0].rank, 3);
  EXPECT_EQ(s.ranks[0].world_size, 8);
  EXPECT_EQ(s.ranks[0].rank_source, "distributedInfo");
  EXPECT_EQ(s.ranks[0].backend, "nccl");
  EXPECT_EQ(s.ranks[0].devices, (std::vector<std::string>{"NVIDIA A100-SXM4-80GB", "NVIDIA H100"}));
  EXPECT_EQ(s.ranks[0].base_time_ns, 1682725898000000000LL);
}

TEST(KinetoImporter, MetadataAfterTraceEvents) {
  const std::string json = R"({"traceEvents": [{"ph": "X", "name": "a", "pid": 1, "tid": 1, "ts": 1, "dur": 1}],
      "distributedInfo": {"rank": 5}})";
  const TraceStore s = MustImport(json);
  EXPECT_EQ(s.ranks[0].rank, 5);
  EXPECT_EQ(s.slices.size(), 1u);
}

TEST(KinetoImporter, BareArrayFormats) {
  const TraceStore legacy = MustImport(R"([{"ph": "X", "name": "a", "pid": 1, "tid": 1, "ts": 0, "dur": 3}])");
  EXPECT_EQ(legacy.inputs[0].format, InputFormat::kPytorchLegacy);
  EXPECT_EQ(legacy.slices.size(), 1u);
  const TraceStore chrome =
      MustImport(R"([{"ph": "X", "cat": "c", "name": "a", "pid": 1, "tid": 1, "ts": 0, "dur": 3}])");
  EXPECT_EQ(chrome.inputs[0].format, InputFormat::kChromeJson);
  const TraceStore empty = MustImport("[]");
  EXPECT_EQ(empty.slices.size(), 0u);
  EXPECT_EQ(empty.ranks.size(), 1u);
}

// ---- bad input -------------------------------------------------------------------------------------

TEST(KinetoBadInput, InvalidJsonDocumentIsAnErrorWithFileAndOffset) {
  std::string path;
  const std::string json = R"({"traceEvents": [{"ph": "X", "ts": 1, "dur": 2}, {"ph": "X", "ts": 1)";
  auto r = ImportKinetoText(json, ImportOptions().batch_bytes, &path);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().find(path + ": invalid JSON at byte " + std::to_string(json.size())), std::string::npos)
      << r.error();
  auto r2 = ImportKinetoText("not json at all", ImportOptions().batch_bytes, &path);
  ASSERT_FALSE(r2.ok());
  EXPECT_NE(r2.error().find(path + ": invalid JSON at byte 0"), std::string::npos) << r2.error();
}

TEST(KinetoBadInput, InvalidJsonElementIsSkippedAndCounted) {
  for (size_t batch : {size_t{1}, size_t{64}, ImportOptions().batch_bytes}) {
    const TraceStore s = MustImport(Trace({
                                        R"({"ph": "X", "name": "good1", "pid": 1, "tid": 1, "ts": 1, "dur": 1})",
                                        R"({"ph": "X", "name": "bad", "pid": 1, "tid": 1, "ts": 1,, "dur": 1})",
                                        R"({"ph": "X", "name": "bad2" "pid": 1})",
                                        R"({"ph": "X", "name": "good2", "pid": 1, "tid": 1, "ts": 2, "dur": 1})",
                                    }),
                                    batch);
    ASSERT_EQ(s.slices.size(), 2u) << "batch " << batch;
    EXPECT_EQ(Name(s, 0), "good1");
    EXPECT_EQ(Name(s, 1), "good2");
    EXPECT_EQ(SkippedCount(s, "invalid_json"), 2u) << "batch " << batch;
  }
}

TEST(KinetoBadInput, MissingTraceEventsIsAnError) {
  std::string path;
  auto r = ImportKinetoText(R"({"schemaVersion": 1, "distributedInfo": {"rank": 0}})", 64, &path);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().find(path), std::string::npos) << r.error();
  EXPECT_NE(r.error().find("no \"traceEvents\" array"), std::string::npos) << r.error();
  auto r2 = ImportKinetoText(R"({"traceEvents": {"not": "an array"}})", 64, &path);
  ASSERT_FALSE(r2.ok());
  EXPECT_NE(r2.error().find("traceEvents"), std::string::npos) << r2.error();
}

TEST(KinetoBadInput, NegativeDuration) {
  const TraceStore s = MustImport(Trace({
      R"({"ph": "X", "name": "a", "pid": 1, "tid": 1, "ts": 10, "dur": -5})",
      R"({"ph": "X", "name": "b", "pid": 1, "tid": 1, "ts": 10, "dur": -0.001})",
      R"({"ph": "X", "name": "zero", "pid": 1, "tid": 1, "ts": 10, "dur": 0})",
      R"({"ph": "B", "name": "c", "pid": 1, "tid": 1, "ts": 10})",
      R"({"ph": "E", "pid": 1, "tid": 1, "ts": 9})",  // in time order it comes first: it ends nothing
  }));
  EXPECT_EQ(SkippedCount(s, "negative_duration"), 2u);
  EXPECT_EQ(SkippedCount(s, "end_without_begin"), 1u);
  EXPECT_EQ(SkippedCount(s, "begin_without_end"), 1u);
  ASSERT_EQ(s.slices.size(), 1u);
  EXPECT_EQ(Name(s, 0), "zero");
}

TEST(KinetoBadInput, AbsurdDuration) {
  const TraceStore s = MustImport(Trace({
      R"({"ph": "X", "name": "week", "pid": 1, "tid": 1, "ts": 0, "dur": 604800000000})",
      R"({"ph": "X", "name": "week+", "pid": 1, "tid": 1, "ts": 0, "dur": 604800000000.001})",
      R"({"ph": "X", "name": "year", "pid": 1, "tid": 1, "ts": 0, "dur": 31536000000000})",
      R"({"ph": "B", "name": "long pair", "pid": 1, "tid": 1, "ts": 0})",
      R"({"ph": "E", "pid": 1, "tid": 1, "ts": 31536000000000})",
  }));
  EXPECT_EQ(SkippedCount(s, "absurd_duration"), 3u);
  ASSERT_EQ(s.slices.size(), 1u);
  EXPECT_EQ(Name(s, 0), "week");
  EXPECT_EQ(s.slices.dur_ns[0], 604800000000000LL);
}

TEST(KinetoBadInput, NonUtf8NameIsKeptRepairedAndCounted) {
  for (size_t batch : {size_t{64}, ImportOptions().batch_bytes}) {
    const TraceStore s =
        MustImport(Trace({
                       R"({"ph": "X", "name": "ok", "pid": 1, "tid": 1, "ts": 1, "dur": 1})",
                       "{\"ph\": \"X\", \"name\": \"bad\xff\xfename\", \"pid\": 1, \"tid\": 1, \"ts\": 2, \"dur\": 1}",
                       "{\"ph\": \"X\", \"name\": \"cut \xe2\x82\", \"pid\": 1, \"tid\": 1, \"ts\": 3, \"dur\": 1}",
                       R"({"ph": "X", "name": "caf\u00e9 ✓", "pid": 1, "tid": 1, "ts": 4, "dur": 1})",
                   }),
                   batch);
    ASSERT_EQ(s.slices.size(), 4u) << "batch " << batch;
    EXPECT_EQ(Name(s, 0), "ok");
    EXPECT_EQ(Name(s, 1), "bad\xEF\xBF\xBD\xEF\xBF\xBDname");
    EXPECT_EQ(Name(s, 2), "cut \xEF\xBF\xBD\xEF\xBF\xBD");
    EXPECT_EQ(Name(s, 3), "caf\xC3\xA9 \xE2\x9C\x93");
    EXPECT_EQ(s.inputs[0].repaired.Count(SkipId::kInvalidUtf8Replaced), 2u);
    EXPECT_TRUE(s.inputs[0].skipped.Empty());
  }
}

// ph, name and cat with and without escapes give the string JSON means (an escaped and a plain spelling are one
// string), and a value that is not a string counts as absent.
TEST(KinetoImporter, StringsWithAndWithoutEscapesReadAlike) {
  const TraceStore s = MustImport(Trace({
      R"({"ph": "X", "cat": "cpu_op", "name": "plain", "pid": 1, "tid": 1, "ts": 1, "dur": 1})",
      R"({"ph": "X", "cat": "cpu\u005fop", "name": "q\"uote \\ tab\t caf\u00e9 \/", "pid": 1, "tid": 1, "ts": 2, "dur": 1})",
      R"({"ph": "\u0058", "cat" : "" , "name" :  ""  , "pid": 1, "tid": 1, "ts": 3, "dur": 1})",
      R"({"ph": "X", "cat": 5, "name": ["not", "a", "string"], "pid": 1, "tid": 1, "ts": 4, "dur": 1})",
      R"({"ph": 88, "name": "ph is a number", "pid": 1, "tid": 1, "ts": 5, "dur": 1})",
  }));
  ASSERT_EQ(s.slices.size(), 4u);
  EXPECT_EQ(Name(s, 0), "plain");
  EXPECT_EQ(Cat(s, 0), "cpu_op");
  EXPECT_EQ(Name(s, 1), "q\"uote \\ tab\t caf\xC3\xA9 /");
  EXPECT_EQ(Cat(s, 1), "cpu_op");
  EXPECT_EQ(s.slices.category[0], s.slices.category[1]) << "the escaped and the plain category are one string";
  EXPECT_EQ(Name(s, 2), "");
  EXPECT_TRUE(s.slices.flags[2] & kSliceHasCategory) << "an empty category is still a category";
  EXPECT_EQ(Name(s, 3), "");
  EXPECT_FALSE(s.slices.flags[3] & kSliceHasCategory) << "a category that is not a string is absent";
  EXPECT_EQ(SkippedCount(s, "unsupported_phase_other"), 1u);
  EXPECT_EQ(s.ranks[0].categories.at("cpu_op"), 2u);
  EXPECT_EQ(s.ranks[0].categories.at("(none)"), 1u);
}

TEST(KinetoBadInput, IntegersBeyondInt64) {
  const TraceStore s = MustImport(Trace({
      R"({"ph": "X", "name": "a", "pid": 1, "tid": 1, "ts": 99999999999999999999, "dur": 1})",
      R"({"ph": "X", "name": "b", "pid": 1, "tid": 1, "ts": 9223372036854776, "dur": 1})",
      R"({"ph": "X", "name": "c", "pid": 1, "tid": 1, "ts": 1, "dur": 99999999999999999999999})",
      R"({"ph": "i", "name": "d", "pid": 1, "tid": 1, "ts": -99999999999999999999})",
      R"({"ph": "X", "name": "end beyond int64", "pid": 1, "tid": 1, "ts": 9223372036854775, "dur": 600000000000})",
      R"({"ph": "X", "name": "e", "pid": 99999999999999999999, "tid": 1, "ts": 1, "dur": 1})",
      R"({"ph": "X", "name": "fits", "pid": 1, "tid": 1, "ts": 9223372036854774, "dur": 0.807})",
  }));
  EXPECT_EQ(SkippedCount(s, "timestamp_out_of_range"), 4u);
  EXPECT_EQ(SkippedCount(s, "duration_out_of_range"), 1u);
  EXPECT_EQ(SkippedCount(s, "invalid_pid_or_tid"), 1u);
  ASSERT_EQ(s.slices.size(), 1u);
  EXPECT_EQ(Name(s, 0), "fits");
  EXPECT_EQ(s.slices.ts_ns[0] + s.slices.dur_ns[0], INT64_MAX - 1000);
}

TEST(KinetoBadInput, MissingTimestamp) {
  const TraceStore s = MustImport(Trace({
      R"({"ph": "X", "name": "a", "pid": 1, "tid": 1, "dur": 1})",
      R"({"ph": "X", "name": "b", "pid": 1, "tid": 1, "ts": 5})",
      R"({"ph": "i", "name": "c", "pid": 1, "tid": 1})",
  }));
  EXPECT_EQ(SkippedCount(s, "missing_timestamp"), 2u);
  EXPECT_EQ(SkippedCount(s, "missing_duration"), 1u);
  EXPECT_EQ(s.slices.size(), 0u);
}

TEST(KinetoBadInput, NonNumericTimestamp) {
  const TraceStore s = MustImport(Trace({
      R"({"ph": "X", "name": "a", "pid": 1, "tid": 1, "ts": "abc", "dur": 1})",
      R"({"ph": "X", "name": "b", "pid": 1, "tid": 1, "ts": true, "dur": 1})",
      R"({"ph": "X", "name": "c", "pid": 1, "tid": 1, "ts": null, "dur": 1})",
      R"({"ph": "X", "name": "d", "pid": 1, "tid": 1, "ts": {"v": 1}, "dur": 1})",
      R"({"ph": "X", "name": "e", "pid": 1, "tid": 1, "ts": [1], "dur": 1})",
      R"({"ph": "X", "name": "f", "pid": 1, "tid": 1, "ts": 1, "dur": "x"})",
      R"({"ph": "X", "name": "quoted number", "pid": 1, "tid": 1, "ts": "12.5", "dur": 1})",
  }));
  EXPECT_EQ(SkippedCount(s, "invalid_timestamp"), 5u);
  EXPECT_EQ(SkippedCount(s, "invalid_duration"), 1u);
  ASSERT_EQ(s.slices.size(), 1u);
  EXPECT_EQ(s.slices.ts_ns[0], 12500);
}

TEST(KinetoBadInput, EndWithoutBeginAndBeginWithoutEnd) {
  const TraceStore s = MustImport(Trace({
      R"({"ph": "E", "pid": 1, "tid": 1, "ts": 1})",
      R"({"ph": "B", "name": "open1", "pid": 1, "tid": 1, "ts": 2})",
      R"({"ph": "B", "name": "open2", "pid": 1, "tid": 2, "ts": 2})",
      R"({"ph": "B", "name": "closed", "pid": 1, "tid": 2, "ts": 3})",
      R"({"ph": "E", "pid": 1, "tid": 2, "ts": 4})",
      R"({"ph": "E", "pid": 2, "tid": 1, "ts": 4})",
  }));
  EXPECT_EQ(SkippedCount(s, "end_without_begin"), 2u);
  EXPECT_EQ(SkippedCount(s, "begin_without_end"), 2u);
  ASSERT_EQ(s.slices.size(), 1u);
  EXPECT_EQ(Name(s, 0), "closed");
}

// B and E events written out of order are paired per lane by timestamp (Perfetto's sorter does the same):
// in file order the first E would close "b" before it began and "a" would swallow it.
TEST(KinetoBadInput, BeginEndOutOfOrderArePairedByTimestamp) {
  const TraceStore s = MustImport(Trace({
      R"({"ph": "B", "name": "a", "pid": 1, "tid": 1, "ts": 10})",
      R"({"ph": "B", "name": "b", "pid": 1, "tid": 1, "ts": 30})",
      R"({"ph": "E", "pid": 1, "tid": 1, "ts": 20})",
      R"({"ph": "E", "pid": 1, "tid": 1, "ts": 40})",
      R"({"ph": "E", "pid": 1, "tid": 2, "ts": 60})",  // its B comes later in the file
      R"({"ph": "B", "name": "c", "pid": 1, "tid": 2, "ts": 50})",
  }));
  EXPECT_TRUE(s.inputs[0].skipped.Empty());
  ASSERT_EQ(s.slices.size(), 3u);
  std::map<std::string, std::pair<int64_t, int64_t>> got;
  for (size_t i = 0; i < s.slices.size(); ++i) got[std::string(Name(s, i))] = {s.slices.ts_ns[i], s.slices.dur_ns[i]};
  EXPECT_EQ(got["a"], std::make_pair(int64_t{10'000}, int64_t{10'000}));
  EXPECT_EQ(got["b"], std::make_pair(int64_t{30'000}, int64_t{10'000}));
  EXPECT_EQ(got["c"], std::make_pair(int64_t{50'000}, int64_t{10'000}));
}

TEST(KinetoBadInput, UnsupportedOrMissingPhase) {
  const TraceStore s = MustImport(Trace({
      R"({"ph": "P", "name": "sample", "pid": 1, "tid": 1, "ts": 1})",
      R"({"ph": "P", "name": "sample", "pid": 1, "tid": 1, "ts": 2})",
      R"({"ph": "XX", "name": "a", "pid": 1, "tid": 1, "ts": 1, "dur": 1})",
      R"({"ph": "", "name": "a", "pid": 1, "tid": 1, "ts": 1, "dur": 1})",
      R"({"ph": 5, "name": "a", "pid": 1, "tid": 1, "ts": 1, "dur": 1})",
      R"({"name": "no phase", "pid": 1, "tid": 1, "ts": 1, "dur": 1})",
  }));
  EXPECT_EQ(SkippedCount(s, "unsupported_phase_P"), 2u);
  EXPECT_EQ(SkippedCount(s, "unsupported_phase_other"), 2u);
  EXPECT_EQ(SkippedCount(s, "missing_phase"), 2u);
  EXPECT_EQ(s.slices.size(), 0u);
}

TEST(KinetoBadInput, ElementThatIsNotAnObject) {
  const TraceStore s = MustImport(Trace({
      "42",
      R"("a string")",
      "[1, 2]",
      "null",
      "true",
      R"({"ph": "X", "name": "a", "pid": 1, "tid": 1, "ts": 1, "dur": 1})",
  }));
  EXPECT_EQ(SkippedCount(s, "not_an_object"), 5u);
  EXPECT_EQ(s.slices.size(), 1u);
}

// A thread reuses its batch buffer from file to file: what the previous file left after the new batch's end
// must not change how a malformed element is counted.
TEST(KinetoBadInput, ColonElementCountsTheSameAfterAnotherFile) {
  const TraceStore fresh = MustImport("[:]");
  ASSERT_EQ(SkippedCount(fresh, "not_an_object"), 1u);
  MustImport(R"([42, {"ph": "X", "name": "a", "pid": 1, "tid": 1, "ts": 1, "dur": 1}, {"ph": "X", "name": "b"}])");
  const TraceStore after = MustImport("[:]");
  EXPECT_EQ(after.inputs[0].skipped, fresh.inputs[0].skipped);
  EXPECT_EQ(after.inputs[0].events, fresh.inputs[0].events);
}

TEST(KinetoBadInput, EmptyElementsAreInvalidJsonWhateverTheBatching) {
  // ",," and a trailing comma leave empty array elements (found by fuzz_kineto: they used to count as
  // not_an_object or invalid_json depending on which batch they fell in).
  const std::string json = R"({"traceEvents": [ , {"ph": "X", "name": "a", "pid": 1, "tid": 1, "ts": 1, "dur": 1}, ,
      {"ph": "X", "name": "b", "pid": 1, "tid": 1, "ts": 2, "dur": 1}, {"bad" "json"}, 7, ]})";
  for (size_t batch : {size_t{1}, size_t{64}, ImportOptions().batch_bytes}) {
    SCOPED_TRACE("batch_bytes=" + std::to_string(batch));
    const TraceStore s = MustImport(json, batch);
    EXPECT_EQ(s.slices.size(), 2u);
    EXPECT_EQ(SkippedCount(s, "invalid_json"), 4u);   // three empty elements and {"bad" "json"}
    EXPECT_EQ(SkippedCount(s, "not_an_object"), 1u);  // 7
  }
}

TEST(KinetoBadInput, InvalidPidOrTid) {
  const TraceStore s = MustImport(Trace({
      R"({"ph": "X", "name": "a", "pid": 1.5, "tid": 1, "ts": 1, "dur": 1})",
      R"({"ph": "X", "name": "b", "pid": 1, "tid": true, "ts": 1, "dur": 1})",
      R"({"ph": "X", "name": "no ids", "ts": 1, "dur": 1})",
  }));
  EXPECT_EQ(SkippedCount(s, "invalid_pid_or_tid"), 2u);
  ASSERT_EQ(s.slices.size(), 1u);
  EXPECT_EQ(TrackOf(s, 0).pid, 0);
}

TEST(KinetoBadInput, TruncatedGzipIsAnErrorNamingTheFile) {
  std::string doc = "{\"traceEvents\": [";
  for (int i = 0; i < 5000; ++i)
    doc += std::string(i ? "," : "") + R"({"ph": "X", "name": "op)" + std::to_string(i) +
           R"(", "pid": 1, "tid": 1, "ts": )" + std::to_string(i) + R"(, "dur": 1})";
  doc += "]}";
  std::string gz = testing::GzipBytes(doc);
  gz.resize(gz.size() * 2 / 3);
  testing::TempFile f(gz, ".json.gz");
  auto src = ByteSource::Open(f.path());
  ASSERT_TRUE(src.ok());
  auto r = ImportKineto(*src.value(), ImportOptions());
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().find(f.path()), std::string::npos) << r.error();
  EXPECT_NE(r.error().find("truncated"), std::string::npos) << r.error();
}

// ---- batch size independence -----------------------------------------------------------------------

void ExpectSameStore(const TraceStore& a, const TraceStore& b) {
  ASSERT_EQ(a.slices.size(), b.slices.size());
  EXPECT_EQ(a.slices.ts_ns, b.slices.ts_ns);
  EXPECT_EQ(a.slices.dur_ns, b.slices.dur_ns);
  EXPECT_EQ(a.slices.correlation, b.slices.correlation);
  EXPECT_EQ(a.slices.track, b.slices.track);
  EXPECT_EQ(a.slices.flags, b.slices.flags);
  EXPECT_EQ(a.slices.args, b.slices.args);
  for (size_t i = 0; i < a.slices.size(); ++i) {
    ASSERT_EQ(a.strings.view(a.slices.name[i]), b.strings.view(b.slices.name[i])) << i;
    ASSERT_EQ(a.strings.view(a.slices.category[i]), b.strings.view(b.slices.category[i])) << i;
  }
  ASSERT_EQ(a.tracks.size(), b.tracks.size());
  for (size_t i = 0; i < a.tracks.size(); ++i) {
    EXPECT_EQ(a.tracks[i].pid, b.tracks[i].pid);
    EXPECT_EQ(a.tracks[i].tid, b.tracks[i].tid);
    EXPECT_EQ(a.tracks[i].kind, b.tracks[i].kind);
    EXPECT_EQ(a.strings.view(a.tracks[i].name), b.strings.view(b.tracks[i].name));
  }
  EXPECT_EQ(a.flows.id, b.flows.id);
  EXPECT_EQ(a.counters.value, b.counters.value);
  EXPECT_EQ(a.collective_args.size(), b.collective_args.size());
  EXPECT_EQ(a.inputs[0].skipped, b.inputs[0].skipped);
  EXPECT_EQ(a.inputs[0].repaired, b.inputs[0].repaired);
  EXPECT_EQ(a.inputs[0].events, b.inputs[0].events);
  EXPECT_EQ(a.ranks[0].categories, b.ranks[0].categories);
}

TEST(KinetoImporter, SameResultForEveryBatchSize) {
  std::vector<std::string> events;
  events.push_back(R"({"ph": "M", "name": "thread_name", "pid": 1, "tid": 1, "args": {"name": "main"}})");
  for (int i = 0; i < 400; ++i) {
    const std::string n = std::to_string(i);
    switch (i % 10) {
      case 0:
        events.push_back(R"({"ph": "X", "cat": "cpu_op", "name": "op \"q\" )" + n + R"(", "pid": 1, "tid": 1, "ts": )" +
                         n + R"(.5, "dur": 2})");
        break;
      case 1:
        events.push_back(R"({"ph": "X", "cat": "kernel", "name": "k)" + n + R"(", "pid": 0, "tid": 7, "ts": )" + n +
                         R"(, "dur": 1, "args": {"stream": 7, "correlation": )" + n + "}}");
        break;
      case 2:
        events.push_back(R"({"ph": "X", "name": "bad dur", "pid": 1, "tid": 1, "ts": 1, "dur": -1})");
        break;
      case 3:
        events.push_back(R"({"ph": "X", "name": "broken", "pid": 1,, "ts": 1})");
        break;
      case 4:
        events.push_back(
            "{\"ph\": \"X\", \"cat\": \"c\", \"name\": \"\xc3\x28\", \"pid\": 1, \"tid\": 2, \"ts\": 3, \"dur\": 1}");
        break;
      case 5:
        events.push_back(R"({"ph": "B", "name": "b", "pid": 1, "tid": 3, "ts": )" + n + "}");
        break;
      case 6:
        events.push_back(R"({"ph": "E", "pid": 1, "tid": 3, "ts": )" + n + "}");
        break;
      case 7:
        events.push_back(R"({"ph": "C", "name": "mem", "pid": 1, "ts": )" + n + R"(, "args": {"v": )" + n + "}}");
        break;
      case 8:
        events.push_back(R"({"ph": "s", "id": )" + n + R"(, "cat": "ac2g", "pid": 1, "tid": 1, "ts": )" + n + "}");
        break;
      default:
        events.push_back("17");
        break;
    }
  }
  const std::string json = Trace(events, R"("distributedInfo": {"rank": 1})");
  const TraceStore reference = MustImport(json);
  EXPECT_EQ(reference.slices.size(), 40u * 4);
  EXPECT_EQ(SkippedCount(reference, "invalid_json"), 40u);
  EXPECT_EQ(SkippedCount(reference, "negative_duration"), 40u);
  EXPECT_EQ(SkippedCount(reference, "not_an_object"), 40u);
  EXPECT_EQ(reference.inputs[0].repaired.Count(SkipId::kInvalidUtf8Replaced), 40u);
  for (size_t batch : {size_t{1}, size_t{64}, size_t{1000}, ImportOptions().batch_bytes}) {
    for (bool pipeline : {false, true}) {
      SCOPED_TRACE("batch_bytes=" + std::to_string(batch) + " pipeline=" + std::to_string(pipeline));
      ExpectSameStore(MustImport(json, batch, pipeline), reference);
    }
  }
}

TEST(KinetoImporter, EveryEventIsStoredOrCounted) {
  std::vector<std::string> events;
  for (int i = 0; i < 300; ++i) {
    events.push_back(i % 3 == 0 ? R"({"ph": "X", "name": "a", "pid": 1, "tid": 1, "ts": )" + std::to_string(i) +
                                      R"(, "dur": 1})"
                     : i % 3 == 1 ? R"({"ph": "X", "name": "a", "pid": 1, "tid": 1, "dur": 1})"
                                  : R"({"ph": "Z"})");
  }
  const TraceStore s = MustImport(Trace(events), 64);
  EXPECT_EQ(s.inputs[0].events + testing::TotalSkipped(s), events.size());
}

}  // namespace
}  // namespace strata
