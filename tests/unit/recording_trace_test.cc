// The recording as a trace source (importers/recording_trace.h): a constructed recording of a two-rank
// DDP-like job with no profiler — all_reduce calls on a gloo worker thread, the main thread's off-CPU
// intervals and stack samples — becomes a job whose steps come from the collective rhythm, whose straggler
// is the rank that computes longer, and whose culprit op is the function on its stacks.
#include "importers/recording_trace.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "analysis/communication.h"
#include "analysis/diagnosis/counter_evidence.h"
#include "analysis/diagnosis/diagnose.h"
#include "analysis/job_summary.h"
#include "importers/recorded_gpu.h"
#include "model/job_model.h"
#include "reports/evidence_json.h"
#include "store/slice_names.h"
#include "store/stack_frames.h"
#include "store/stack_index.h"

namespace strata {
namespace {

constexpr uint64_t kMs = 1'000'000;

nlohmann::json Stack(uint32_t pid) {
  return {{"type", "stack"},
          {"kernel", false},
          {"pid", pid},
          {"id", 7},
          {"frames",
           {{{"fn", "memcpy"}, {"module", "/lib/x86_64-linux-gnu/libc.so.6"}, {"offset", 0}},
            {{"fn", "at::native::addmm_out(at::Tensor const&)"},
             {"module", "/usr/lib/libtorch_cpu.so.1.13"},
             {"offset", 8}},
            {{"fn", "_PyEval_EvalFrameDefault"},
             {"module", "/usr/bin/python3.11"},
             {"offset", 0},
             {"interpreter", true}}}}};
}

// Rank r (pid 100 + 10 r, gloo worker thread pid + 1) computes 30 ms (rank 1: 40 ms) per 100 ms step,
// then all_reduces its gradients (ending when the last rank arrives) and, 2 ms later, its loss.
// `setup_calls_of_rank1`: rank 1's set-up broadcasts (3 like rank 0, or fewer: its recording began later).
RecordedRun DdpRecording(int steps = 10, size_t setup_calls_of_rank1 = 3) {
  RecordedSegment seg;
  seg.data.path = "run/record-host-1.sseg";
  seg.probes.push_back(
      {"gloo::allreduce(gloo::AllreduceOptions const&)", "all_reduce", ProbeKind::kCollective, "libgloo.so"});
  seg.probes.push_back(
      {"c10d::ProcessGroupGloo::allreduce", "all_reduce", ProbeKind::kCollectiveEnqueue, "libtorch_cpu.so"});
  seg.probes.push_back({"gloo::broadcast(gloo::BroadcastOptions&)", "broadcast", ProbeKind::kCollective, "libgloo.so"});
  seg.sample_hz = 100;
  std::vector<nlohmann::json> meta;
  for (int r = 0; r < 2; ++r) {
    const auto pid = static_cast<uint32_t>(100 + 10 * r);
    seg.processes[static_cast<int>(pid)] = {static_cast<int>(pid), 1, r, "python3", "", 0, 0};
    meta.push_back(Stack(pid));
    const uint64_t compute = r == 0 ? 30 : 40;
    seg.data.off_cpu.push_back({pid, pid, 0, 100 * kMs, 0, 1, 0, 0, 0, 0});
    const std::vector<uint64_t> setup = {10, 30, 50};
    for (size_t i = r == 1 ? 3 - setup_calls_of_rank1 : 0; i < setup.size(); ++i)
      seg.data.calls.push_back({pid + 1, pid, 2, setup[i] * kMs, (setup[i] + 1) * kMs});  // set-up
    for (int s = 1; s <= steps; ++s) {
      const uint64_t t0 = static_cast<uint64_t>(s) * 100;
      seg.data.off_cpu.push_back({pid, pid, (t0 + compute) * kMs, (t0 + 100) * kMs, 0, 1, 0, 0, 0, 0});
      seg.data.calls.push_back({pid + 1, pid, 0, (t0 + compute) * kMs, (t0 + 41) * kMs});
      seg.data.calls.push_back({pid, pid, 1, (t0 + compute) * kMs, (t0 + compute) * kMs + 1000});  // enqueue
      seg.data.calls.push_back({pid + 1, pid, 0, (t0 + 43) * kMs, (t0 + 44) * kMs});
      for (uint64_t at = 5; at < compute; at += 10) seg.data.samples.push_back({(t0 + at) * kMs, pid, pid, 0, 7, -1});
    }
  }
  seg.data.calls.push_back({101, 100, 9, 0, 1});    // a probe id the segment does not define
  seg.data.counters.push_back({5 * kMs, 42, 1.0});  // a series id the segment does not declare
  seg.user_stacks = IndexUserStacks(meta);
  RecordedRun run;
  run.segments.push_back(std::move(seg));
  return run;
}

TEST(RecordingTrace, RanksCollectivesAndOnCpuTimeBecomeTraces) {
  const RecordedRun run = DdpRecording();
  auto store = TraceStoreFromRecording(run);
  ASSERT_TRUE(store.ok()) << store.error();
  const TraceStore& s = store.value();
  ASSERT_EQ(s.ranks.size(), 2u);
  EXPECT_EQ(s.ranks[1].rank, 1);
  EXPECT_EQ(s.ranks[0].rank_source, "recording");
  EXPECT_EQ(s.ranks[0].backend, "gloo");
  ASSERT_EQ(s.inputs.size(), 1u);
  EXPECT_EQ(s.inputs[0].format, InputFormat::kRecording);
  EXPECT_EQ(s.inputs[0].skipped.Count(SkipId::kCallUnknownProbe), 1u);
  EXPECT_EQ(s.inputs[0].skipped.Count(SkipId::kCounterUnknownSeries), 1u);
  size_t collectives = 0, enqueues = 0, samples = 0;
  for (size_t i = 0; i < s.slices.size(); ++i) {
    const std::string_view name = s.strings.view(s.slices.name[i]);
    collectives += name == "gloo:all_reduce";
    samples += name == "at::native::addmm_out [libtorch_cpu.so.1.13]";
    enqueues += s.track(s.slices.track[i]).tid == s.track(s.slices.track[i]).pid && name == "gloo:all_reduce";
  }
  EXPECT_EQ(collectives, 40u);  // the blocking gloo calls only: the c10d enqueues are the same collectives
  EXPECT_EQ(enqueues, 0u);
  EXPECT_EQ(samples, 70u);  // 3 + 4 per step
}

// A main thread that keeps the CPU from its last off-CPU record until it exits (a loop with no sleep, no
// preemption recorded) keeps that stretch and its samples: its exit shows it on CPU to the end (the recorder
// test late_library_frames lost up to 2/3 of a 1-second loop's samples to this).
TEST(RecordingTrace, OnCpuTimeAfterTheLastOffCpuRecordLastsUntilTheExit) {
  RecordedRun run = DdpRecording();
  RecordedSegment& seg = run.segments[0];
  uint64_t last_off = 0;
  for (const auto& o : seg.data.off_cpu)
    if (o.tid == 100) last_off = std::max(last_off, o.end_ns);
  for (uint64_t at = 5; at < 200; at += 10) seg.data.samples.push_back({last_off + at * kMs, 100, 100, 0, 7, -1});
  seg.processes[100].exited_ns = last_off + 200 * kMs;
  auto store = TraceStoreFromRecording(run);
  ASSERT_TRUE(store.ok()) << store.error();
  const TraceStore& s = store.value();
  size_t samples = 0;
  int64_t on_cpu_end = 0, main_thread_end = 0;
  for (size_t i = 0; i < s.slices.size(); ++i) {
    if (s.track(s.slices.track[i]).pid != 100) continue;
    const std::string_view name = s.strings.view(s.slices.name[i]);
    samples += name == "at::native::addmm_out [libtorch_cpu.so.1.13]";
    const int64_t end = s.slices.ts_ns[i] + s.slices.dur_ns[i];
    if (name == kRecordedOnCpu) on_cpu_end = std::max(on_cpu_end, end);
    if (name == kRecordedMainThread) main_thread_end = std::max(main_thread_end, end);
  }
  EXPECT_EQ(samples, 30u + 20u);  // the steps' 3 each and the 20 of the last stretch
  EXPECT_EQ(on_cpu_end, static_cast<int64_t>(last_off + 200 * kMs));
  EXPECT_EQ(main_thread_end, on_cpu_end);
}

TEST(RecordingTrace, DiagnosisFromTheRecordingAloneNamesTheRankAndTheFunction) {
  const RecordedRun run = DdpRecording();
  auto store = TraceStoreFromRecording(run);
  ASSERT_TRUE(store.ok()) << store.error();
  const diagnosis::DiagnosisResult d = diagnosis::Diagnose(store.value(), {});
  EXPECT_EQ(model::StepSourceName(d.step_source), "detected-rhythm");
  EXPECT_GE(d.steps.size(), 8u);
  // The set-up broadcasts make no step of their own: every step is a 100 ms training step.
  EXPECT_NEAR(d.step_time_median_ms, 100.0, 1.0);
  EXPECT_LE(d.steps.size(), 10u);
  ASSERT_FALSE(d.stragglers.empty());
  EXPECT_EQ(d.stragglers[0].rank, RankNumber(1));
  EXPECT_NEAR(d.stragglers[0].late_ms_per_step, 10.0, 1.0);
  ASSERT_FALSE(d.findings.empty());
  EXPECT_EQ(d.findings[0].cause, diagnosis::Cause::kSlowCompute);
  EXPECT_EQ(d.findings[0].op, "at::native::addmm_out [libtorch_cpu.so.1.13]");
}

// A gloo algorithm's bytes (importers/gloo_buffer_bytes.h) reach the communication table (issue 25): each
// all_reduce algorithm of DdpRecording gets its entry row and, 10 µs before it on the same worker thread, the
// buffers c10d created for it (gradients 1024 floats, the loss 1 float); a buffer created on the main thread
// does not count. A thread's first algorithm has no known size, and its instance none; the others carry
// their bytes as a trace's args would, and the table reads their size and bus bandwidth.
TEST(RecordingTrace, GlooBuffersGiveRecordedCollectivesTheirBytes) {
  RecordedRun run = DdpRecording();
  RecordedSegment& seg = run.segments[0];
  seg.probes.push_back(
      {"gloo::Context::createUnboundBuffer(void*, unsigned long)", "", ProbeKind::kCollectiveBuffer, "libgloo.so"});
  const auto buffer_probe = static_cast<uint32_t>(seg.probes.size() - 1);
  std::vector<CallRow> allreduces;
  for (const CallRow& c : seg.data.calls)
    if (c.probe == 0) allreduces.push_back(c);
  for (const CallRow& c : allreduces) {
    const bool loss = c.start_ns / kMs % 100 == 43;  // the loss all_reduce starts 43 ms into each step
    seg.data.call_enters.push_back({c.tid, c.tgid, buffer_probe, c.start_ns - 10'000, 0, loss ? 4u : 4096u});
    seg.data.call_enters.push_back({c.tgid, c.tgid, buffer_probe, c.start_ns - 5'000, 0, 1'000'000});  // main's
    seg.data.call_enters.push_back({c.tid, c.tgid, 0, c.start_ns, 0, 0});
  }
  auto store = TraceStoreFromRecording(run);
  ASSERT_TRUE(store.ok()) << store.error();
  const TraceStore& s = store.value();
  std::map<int64_t, size_t> calls_of_size;  // bytes (-1: none) -> gloo:all_reduce slices
  for (size_t i = 0; i < s.slices.size(); ++i) {
    if (s.strings.view(s.slices.name[i]) != "gloo:all_reduce") continue;
    if (!(s.slices.flags[i] & kSliceCollectiveArgs)) {
      ++calls_of_size[-1];
      continue;
    }
    const CollectiveArgs& a = s.collective_args.at(s.slices.args[i]);
    EXPECT_EQ(s.strings.view(a.dtype), "uint8");
    EXPECT_EQ(s.strings.view(a.collective), "all_reduce");
    ++calls_of_size[a.in_nelems];
  }
  // Per rank: 10 steps x 2 all_reduces, the first (step 1's gradients) of unknown size.
  EXPECT_EQ(calls_of_size, (std::map<int64_t, size_t>{{-1, 2}, {4, 20}, {4096, 18}}));

  const model::JobModel job = model::BuildJobModel(s, SlicesByRank(s));
  const CommunicationTable table = ComputeCommunication(s, job);
  ASSERT_EQ(table.ops.size(), 1u);
  const CommunicationOp& op = table.ops[0];
  EXPECT_EQ(op.op, "all_reduce");
  EXPECT_NEAR(op.bytes, (9 * 4096.0 + 10 * 4.0) / 19.0, 1e-6);
  ASSERT_TRUE(op.split);
  EXPECT_GT(op.busbw_gbps, 0);
  EXPECT_NEAR(op.busbw_gbps, op.algbw_gbps * 2 * (2 - 1) / 2.0, 1e-9);  // 2 ranks: busbw = algbw
}

// The recorder's NVML series reach the diagnosis (issue 24): each rank's GPU (its LOCAL_RANK-th of
// CUDA_VISIBLE_DEVICES, recorded_gpu.h) becomes its counter tracks, and the counter evidence reads them as it
// reads a trace's. Rank 1 is the late rank of DdpRecording; its GPU's SM clock reads 1100 MHz against
// 1980 MHz on rank 0's, sampled every 10 ms (the recorder samples NVML at its counter interval): the finding
// is thermal_throttling with the clocks as its evidence. GPU 2 (no rank's) runs at 900 MHz and must not count.
RecordedRun ThrottledGpuRecording() {
  RecordedRun run = DdpRecording();
  RecordedSegment& seg = run.segments[0];
  for (int pid : {100, 110}) {
    seg.processes[pid].local_rank = pid == 100 ? 0 : 1;
    seg.processes[pid].visible_devices = "GPU-aaaa,GPU-bbbb,GPU-cccc";
  }
  const double clock[] = {1980, 1100, 900};
  const char* uuid[] = {"GPU-aaaa-1111", "GPU-bbbb-2222", "GPU-cccc-3333"};
  for (int g = 0; g < 3; ++g) {
    seg.series.push_back({"gpu.sm_clock_mhz", -1, g, uuid[g], "MHz", false});
    for (uint64_t t = 0; t < 1200; t += 10)
      seg.data.counters.push_back({t * kMs, static_cast<uint32_t>(seg.series.size() - 1), clock[g]});
  }
  return run;
}

TEST(RecordingTrace, TheRanksGpuClockFromNvmlNamesThermalThrottling) {
  const RecordedRun run = ThrottledGpuRecording();
  auto store = TraceStoreFromRecording(run);
  ASSERT_TRUE(store.ok()) << store.error();
  size_t counter_tracks = 0;
  for (const Track& t : store.value().tracks)
    if (t.kind == TrackKind::kCounter) {
      ++counter_tracks;
      EXPECT_EQ(store.value().strings.view(t.name), "gpu.sm_clock_mhz");
    }
  EXPECT_EQ(counter_tracks, 2u) << "one per rank: GPU 2 is no rank's";
  const diagnosis::DiagnosisResult d = diagnosis::Diagnose(store.value(), {});
  ASSERT_FALSE(d.findings.empty());
  const diagnosis::Finding& f = d.findings[0];
  EXPECT_EQ(f.rank, RankNumber(1));
  EXPECT_EQ(f.cause, diagnosis::Cause::kThermalThrottling) << f.summary;
  ASSERT_EQ(f.evidence.counters.size(), 1u);
  EXPECT_EQ(f.evidence.counters[0].counter, "sm_clock");
  EXPECT_EQ(f.evidence.counters[0].rank, 1100.0);
  EXPECT_EQ(f.evidence.counters[0].peers, 1980.0);
  EXPECT_EQ(f.evidence.counters[0].source, "recording");
  // Without the series the same recording says slow_compute (the test above): the clocks made the difference.
}

// The counters are judged without editing a finding and applied in one step (counter_evidence.h): judging
// rank 1's slow_compute finding over its steps compares its GPU clock with its peer's and names
// thermal_throttling, and leaves the findings as they were; applying sets the cause, keeps the cause before
// and attaches the counters; a finding whose cause counters do not refine (dataloader_stall) gets no refinement,
// and a refinement that names nothing attaches its counters and keeps the cause.
TEST(RecordingTrace, CountersAreJudgedWithoutEditingAndAppliedInOneStep) {
  auto store = TraceStoreFromRecording(ThrottledGpuRecording());
  ASSERT_TRUE(store.ok()) << store.error();
  const auto rows = SlicesByRank(store.value());
  const model::JobModel job = model::BuildJobModel(store.value(), rows);
  ASSERT_EQ(job.steps.by_rank.size(), 2u);
  diagnosis::TraceRankEvidence late;
  for (const model::StepWindow& w : job.steps.by_rank[1]) late.late_steps.push_back(w.step);
  ASSERT_FALSE(late.late_steps.empty());
  std::vector<diagnosis::Finding> findings(2);
  findings[0].rank = RankNumber(1);
  findings[0].cause = diagnosis::Cause::kDataloaderStall;
  findings[0].evidence.kind = late;
  findings[1].rank = RankNumber(1);
  findings[1].cause = diagnosis::Cause::kSlowCompute;
  findings[1].confidence = 0.8;
  findings[1].summary = "rank 1 computes longer";
  findings[1].evidence.kind = late;
  const std::vector<diagnosis::Finding> judged = findings;

  std::vector<diagnosis::CounterRefinement> j = diagnosis::JudgeWithCounters(store.value(), job.steps, findings);
  ASSERT_EQ(j.size(), 1u) << "dataloader_stall is not a cause counters refine";
  EXPECT_EQ(j[0].finding, 1u);
  ASSERT_EQ(j[0].counters.size(), 1u);
  EXPECT_EQ(j[0].counters[0].rank, 1100.0);
  EXPECT_EQ(j[0].counters[0].peers, 1980.0);
  EXPECT_TRUE(j[0].choice.names);
  EXPECT_EQ(j[0].choice.cause, diagnosis::Cause::kThermalThrottling);
  for (size_t i = 0; i < findings.size(); ++i) {
    EXPECT_EQ(findings[i].cause, judged[i].cause) << "judging edits nothing";
    EXPECT_TRUE(findings[i].evidence.counters.empty());
  }

  std::vector<diagnosis::CounterRefinement> keep = j;
  keep[0].choice.names = false;
  std::vector<diagnosis::Finding> kept = findings;
  diagnosis::ApplyCounterJudgement(keep, &kept);
  EXPECT_EQ(kept[1].cause, diagnosis::Cause::kSlowCompute);
  EXPECT_EQ(kept[1].evidence.counters.size(), 1u);
  EXPECT_FALSE(kept[1].evidence.cause_before_counters);

  const std::string why = j[0].choice.why;
  diagnosis::ApplyCounterJudgement(std::move(j), &findings);
  EXPECT_EQ(findings[0].cause, diagnosis::Cause::kDataloaderStall);
  EXPECT_TRUE(findings[0].evidence.counters.empty());
  EXPECT_EQ(findings[1].cause, diagnosis::Cause::kThermalThrottling);
  EXPECT_EQ(findings[1].evidence.cause_before_counters, diagnosis::Cause::kSlowCompute);
  EXPECT_EQ(findings[1].evidence.counters.size(), 1u);
  EXPECT_EQ(findings[1].summary, "rank 1 computes longer; " + why);
}

TEST(RecordedGpu, TheRanksGpuFromItsEnvironment) {
  std::vector<RecordedSeries> series;
  for (int g = 0; g < 4; ++g) series.push_back({"gpu.sm_clock_mhz", -1, g, fmt::format("GPU-{}aa-uuid", g), "MHz"});
  RecordedProcess p;
  EXPECT_EQ(NvmlIndexOfProcess(p, series), std::nullopt) << "four GPUs and nothing to choose by";
  p.local_rank = 2;
  EXPECT_EQ(NvmlIndexOfProcess(p, series), 2);
  p.visible_devices = "3,1";
  EXPECT_EQ(NvmlIndexOfProcess(p, series), std::nullopt) << "local rank 2 of two visible GPUs";
  p.local_rank = 1;
  EXPECT_EQ(NvmlIndexOfProcess(p, series), 1);
  p.visible_devices = "3";
  EXPECT_EQ(NvmlIndexOfProcess(p, series), 3) << "one visible GPU: the process's whatever its local rank";
  p.visible_devices = "GPU-0aa,GPU-2aa";
  EXPECT_EQ(NvmlIndexOfProcess(p, series), 2) << "a UUID prefix, matched against the series' labels";
  p.visible_devices = "7";
  EXPECT_EQ(NvmlIndexOfProcess(p, series), std::nullopt) << "a GPU the recorder has no series of";
  p = {};
  EXPECT_EQ(NvmlIndexOfProcess(p, {series[0]}), 0) << "the host's only GPU";
  EXPECT_EQ(NvmlIndexOfProcess(p, {}), std::nullopt);
}

// Rank 1's recording lacks the first set-up call: its call indices are one behind rank 0's, and its steps
// are still the same 100 ms training steps (counted from the call that ends with rank 0's), not windows
// shifted by a call.
TEST(RecordingTrace, ARankWithOneCallFewerHasTheSameSteps) {
  const RecordedRun run = DdpRecording(10, 2);
  auto store = TraceStoreFromRecording(run);
  ASSERT_TRUE(store.ok()) << store.error();
  const diagnosis::DiagnosisResult d = diagnosis::Diagnose(store.value(), {});
  EXPECT_EQ(model::StepSourceName(d.step_source), "detected-rhythm");
  EXPECT_GE(d.steps.size(), 8u);
  EXPECT_NEAR(d.step_time_median_ms, 100.0, 1.0);
  ASSERT_FALSE(d.stragglers.empty());
  EXPECT_EQ(d.stragglers[0].rank, RankNumber(1));
  EXPECT_NEAR(d.stragglers[0].late_ms_per_step, 10.0, 1.0);
  ASSERT_FALSE(d.findings.empty());
  EXPECT_EQ(d.findings[0].cause, diagnosis::Cause::kSlowCompute);
  EXPECT_EQ(d.findings[0].op, "at::native::addmm_out [libtorch_cpu.so.1.13]");
}

// Rank 1's main thread waits 12 ms per step for its DataLoader worker (pid 111, a process of rank 1) before
// computing like rank 0: the wait is data loading, and the cause dataloader_stall.
TEST(RecordingTrace, WaitsEndedByTheRanksWorkerAreDataLoading) {
  RecordedSegment seg;
  seg.data.path = "run/record-host-1.sseg";
  seg.probes.push_back(
      {"gloo::allreduce(gloo::AllreduceOptions const&)", "all_reduce", ProbeKind::kCollective, "libgloo.so"});
  seg.processes[100] = {100, 1, 0, "python3", "", 0, 0};
  seg.processes[110] = {110, 1, 1, "python3", "", 0, 0};
  seg.processes[111] = {111, 110, 1, "pt_data_worker", "", 0, 0};
  for (uint32_t pid : {100u, 110u}) {
    seg.data.off_cpu.push_back({pid, pid, 0, 100 * kMs, 0, 1, 0, 0, 0, 0});
    for (uint64_t s = 1; s <= 10; ++s) {
      const uint64_t t0 = s * 100, wait = pid == 110 ? 12 : 0;
      if (wait) seg.data.off_cpu.push_back({pid, pid, (t0 + 1) * kMs, (t0 + 1 + wait) * kMs, 0, 1, 0, 0, 111, 0});
      const uint64_t arrive = t0 + 31 + wait;
      seg.data.off_cpu.push_back({pid, pid, arrive * kMs, (t0 + 100) * kMs, 0, 1, 0, 0, 0, 0});
      seg.data.calls.push_back({pid + 1, pid, 0, arrive * kMs, (t0 + 45) * kMs});
      seg.data.calls.push_back({pid + 1, pid, 0, (t0 + 47) * kMs, (t0 + 48) * kMs});
    }
  }
  RecordedRun run;
  run.segments.push_back(std::move(seg));
  auto store = TraceStoreFromRecording(run);
  ASSERT_TRUE(store.ok()) << store.error();
  const diagnosis::DiagnosisResult d = diagnosis::Diagnose(store.value(), {});
  ASSERT_FALSE(d.stragglers.empty());
  EXPECT_EQ(d.stragglers[0].rank, RankNumber(1));
  ASSERT_FALSE(d.findings.empty());
  EXPECT_EQ(d.findings[0].cause, diagnosis::Cause::kDataloaderStall);
}

// Two hosts: rank 1's segment comes from a host whose CLOCK_MONOTONIC reads 1,000 s more. The model aligns
// the ranks by their collectives, so the straggler is still rank 1, late by its 10 ms.
TEST(RecordingTrace, HostsWithOtherClocksAreAlignedByCollectives) {
  const RecordedRun one = DdpRecording();
  RecordedRun run;
  for (int rank = 0; rank < 2; ++rank) {
    RecordedSegment seg = one.segments[0];
    seg.data.path = fmt::format("run/record-host{}-1.sseg", rank);
    const auto pid = static_cast<uint32_t>(100 + 10 * rank);
    const uint64_t shift = rank == 1 ? 1000ull * 1'000'000'000 : 0;
    std::erase_if(seg.processes, [&](const auto& p) { return p.first != static_cast<int>(pid); });
    std::erase_if(seg.data.calls, [&](const auto& c) { return c.tgid != pid; });
    std::erase_if(seg.data.off_cpu, [&](const auto& o) { return o.tgid != pid; });
    std::erase_if(seg.data.samples, [&](const auto& x) { return x.tgid != pid; });
    for (auto& c : seg.data.calls) c.start_ns += shift, c.end_ns += shift;
    for (auto& o : seg.data.off_cpu) o.start_ns += shift, o.end_ns += shift;
    for (auto& x : seg.data.samples) x.ts_ns += shift;
    run.segments.push_back(std::move(seg));
  }
  auto store = TraceStoreFromRecording(run);
  ASSERT_TRUE(store.ok()) << store.error();
  EXPECT_EQ(store.value().inputs.size(), 2u);
  const diagnosis::DiagnosisResult d = diagnosis::Diagnose(store.value(), {});
  ASSERT_FALSE(d.stragglers.empty());
  EXPECT_EQ(d.stragglers[0].rank, RankNumber(1));
  EXPECT_NEAR(d.stragglers[0].late_ms_per_step, 10.0, 1.0);
  EXPECT_LT(d.clock_residual_us, 1000.0);
}

TEST(RecordingTrace, ARankInTwoRecordingsIsAnErrorNamingBoth) {
  RecordedRun run = DdpRecording(3);
  run.segments.push_back(run.segments[0]);
  run.segments[1].data.path = "other/record-host-2.sseg";
  auto store = TraceStoreFromRecording(run);
  ASSERT_FALSE(store.ok());
  EXPECT_NE(store.error().find("run/record-host-1.sseg"), std::string::npos) << store.error();
  EXPECT_NE(store.error().find("other/record-host-2.sseg"), std::string::npos) << store.error();
}

TEST(RecordingTrace, NoRankedProcessIsAnErrorNamingTheFile) {
  RecordedRun run = DdpRecording(3);
  for (auto& [pid, p] : run.segments[0].processes) p.rank.reset();
  auto store = TraceStoreFromRecording(run);
  ASSERT_FALSE(store.ok());
  EXPECT_NE(store.error().find("run/record-host-1.sseg"), std::string::npos);
}

// A GPU job: NCCL's calls return on the CPU at once (enqueue), so the host says nothing about arrival. The
// NCCL profiler plugin's segment (one per rank process) holds each collective's kernel span on the device;
// folded into the recorder's segment of the same host, those spans are the collectives, and the rank whose
// kernels start last (it arrived late) is the straggler.
TEST(RecordingTrace, DeviceCollectivesFromTheNcclPluginFoldIntoTheRecording) {
  RecordedRun run;
  RecordedSegment host;
  host.data.path = "run/record-host-1.sseg";
  host.host = "node1";
  host.probes.push_back({"ncclAllReduce", "all_reduce", ProbeKind::kCollectiveEnqueue, "libnccl.so.2"});
  for (int r = 0; r < 2; ++r) {
    const auto pid = static_cast<uint32_t>(100 + 10 * r);
    host.processes[static_cast<int>(pid)] = {static_cast<int>(pid), 1, r, "python3", "", 0, 0};
    for (uint64_t s = 1; s <= 10; ++s)  // enqueues: same time on both ranks, whatever the device does
      host.data.calls.push_back({pid, pid, 0, (s * 100 + 5) * kMs, (s * 100 + 5) * kMs + 1000});
  }
  run.segments.push_back(std::move(host));
  for (int r = 0; r < 2; ++r) {
    RecordedSegment plugin;
    plugin.data.path = fmt::format("run/nccl-node1-{}.sseg", 100 + 10 * r);
    plugin.source = "nccl_profiler";
    plugin.host = "node1";
    plugin.probes.push_back({"ncclProfiler", "all_reduce", ProbeKind::kCollectiveDevice, "libstrata_nccl_profiler.so"});
    const auto pid = static_cast<uint32_t>(100 + 10 * r);
    plugin.processes[static_cast<int>(pid)] = {static_cast<int>(pid), 1, r, "python3", "", 0, 0};
    for (uint64_t s = 1; s <= 10; ++s) {
      const uint64_t arrive = s * 100 + (r == 1 ? 45 : 30);  // rank 1's GPU reaches the all_reduce 15 ms later
      plugin.data.calls.push_back({pid, pid, 0, arrive * kMs, (s * 100 + 47) * kMs});
    }
    run.segments.push_back(std::move(plugin));
  }
  MergePluginSegments(&run);
  ASSERT_EQ(run.segments.size(), 1u) << "the plugin segments fold into the recorder's";
  EXPECT_EQ(run.segments[0].probes.size(), 2u);
  auto store = TraceStoreFromRecording(run);
  ASSERT_TRUE(store.ok()) << store.error();
  EXPECT_EQ(store.value().ranks[0].backend, "nccl");
  const diagnosis::DiagnosisResult d = diagnosis::Diagnose(store.value(), {});
  ASSERT_FALSE(d.stragglers.empty());
  EXPECT_EQ(d.stragglers[0].rank, RankNumber(1));
  EXPECT_NEAR(d.stragglers[0].late_ms_per_step, 15.0, 1.5);
  EXPECT_EQ(StragglerEvidenceJson(d.stragglers[0].evidence).value("from", ""),
            "recorder: collectives on the device (NCCL profiler plugin)");
  ASSERT_FALSE(d.findings.empty());
  EXPECT_EQ(d.findings[0].cause, diagnosis::Cause::kUnknown)
      << "nothing but collectives was recorded: no host stall claimed";

  // A plugin segment no recorder segment saw stays a recording of its own.
  RecordedRun alone;
  RecordedSegment plugin;
  plugin.source = "nccl_profiler";
  plugin.processes[5] = {5, 1, 0, "python3", "", 0, 0};
  alone.segments.push_back(plugin);
  MergePluginSegments(&alone);
  EXPECT_EQ(alone.segments.size(), 1u);
}

TEST(StackFrames, CulpritSkipsTheCLibraryAndTheInterpreter) {
  const UserStacks stacks = IndexUserStacks({Stack(5), {{"type", "stack"}, {"kernel", "no"}}, nlohmann::json(3)});
  ASSERT_EQ(stacks.size(), 1u);
  EXPECT_EQ(CulpritFrame(stacks.at({5, 7})), "at::native::addmm_out [libtorch_cpu.so.1.13]");
  EXPECT_EQ(CulpritFrame({{"memcpy", "/lib/libc.so.6", false}}), "memcpy [libc.so.6]");
  EXPECT_EQ(CulpritFrame({}), "?");
  // A stripped library's internal function has no name, but the library is known: it is named, not skipped
  // for the garbage a frame-pointer walk finds above it. An address in no known file is skipped.
  EXPECT_EQ(CulpritFrame({{"?", "/lib/libbz2.so.1.0", false}, {"?", "?", false}, {"main", "/bin/app", false}}),
            "[libbz2.so.1.0]");
  EXPECT_EQ(CulpritFrame({{"?", "?", false}, {"main", "/bin/app", false}}), "main [app]");
  EXPECT_EQ(CulpritFrame({{"?", "/usr/bin/python3.11", false}, {"main", "/bin/app", false}}), "main [app]");
}

// Samples say which frame is native and which Python; time in torch/utils/data/ is data loading.
TEST(StackFrames, SampleNamesPairTheNativeCulpritWithItsPythonCaller) {
  const PythonStacks py =
      IndexPythonStacks({{{"type", "py_stack"},
                          {"pid", 5},
                          {"id", 0},
                          {"frames",
                           {{{"fn", "Net.forward"}, {"file", "/srv/train.py"}, {"line", 42}, {"first_line", 40}},
                            {{"fn", "main"}, {"file", "/srv/train.py"}, {"line", 7}}}}},
                         {{"type", "py_stack"},
                          {"pid", 5},
                          {"id", 1},
                          {"frames",
                           {{{"fn", "Dataset.__getitem__"}, {"file", "/srv/data.py"}, {"line", 3}},
                            {{"fn", "_MapDatasetFetcher.fetch"},
                             {"file", "/usr/lib/python3/dist-packages/torch/utils/data/_utils/fetch.py"},
                             {"line", 49}}}}},
                         {{"type", "py_stack"}, {"pid", "x"}}});
  ASSERT_EQ(py.size(), 2u);
  // A frame is named by the line it executes; the first line is kept beside it (an older recording's frame,
  // without first_line, says only that, as its line).
  EXPECT_EQ(py.at({5, 0})[0].line, 42);
  EXPECT_EQ(py.at({5, 0})[0].first_line, 40);
  EXPECT_EQ(py.at({5, 0})[1].first_line, 7);
  const std::vector<StackFrame> torch = {
      {"memcpy", "/lib/libc.so.6", false},
      {"at::native::addmm_out(at::Tensor const&)", "/usr/lib/libtorch_cpu.so", false},
      {"_PyEval_EvalFrameDefault", "/usr/bin/python3.11", true}};
  const std::vector<StackFrame> interpreter = {{"long_add", "/usr/bin/python3.11", false},
                                               {"_PyEval_EvalFrameDefault", "/usr/bin/python3.11", true}};
  EXPECT_EQ(SampleName(torch, &py.at({5, 0})),
            "at::native::addmm_out [libtorch_cpu.so] in Python Net.forward (train.py:42)");
  EXPECT_EQ(SampleName(interpreter, &py.at({5, 0})), "Python Net.forward (train.py:42)");
  EXPECT_EQ(SampleName(torch, nullptr), "at::native::addmm_out [libtorch_cpu.so]");
  EXPECT_EQ(SampleName(interpreter, &py.at({5, 1})), "DataLoader: Python Dataset.__getitem__ (data.py:3)");
  EXPECT_TRUE(InDataLoading(py.at({5, 1})));
  EXPECT_FALSE(InDataLoading(py.at({5, 0})));
  // Findings keep the Python location (a C++ argument list is still dropped).
  EXPECT_EQ(ShortOpName("at::native::addmm_out [libtorch_cpu.so] in Python Net.forward (train.py:42)"),
            "at::native::addmm_out [libtorch_cpu.so] in Python Net.forward (train.py:42)");
  EXPECT_EQ(ShortOpName("void gemm<float>(int, float*)"), "void gemm<float>");
}

}  // namespace
}  // namespace strata
