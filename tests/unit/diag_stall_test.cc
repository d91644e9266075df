// The stall rule, mismatches and job ends on constructed recordings (analysis/diagnosis/stall.h): a rank that
// never entered the collective its peers wait in is named with its state and frame; a stall the job recovered
// from, a short wait and a job stopped by SIGTERM are not hangs; the threshold follows the job's rhythm; the
// wavefront is followed across communicators; NCCL's kernel-not-started and count mismatches; live `now`.
#include <gtest/gtest.h>

#include <algorithm>
#include <csignal>
#include <map>
#include <optional>
#include <random>

#include "analysis/diagnosis/rank_whereabouts.h"
#include "analysis/diagnosis/stall.h"
#include "importers/recorded_calls.h"
#include "importers/recorded_threads.h"
#include "model/collective_progress.h"

namespace strata::diagnosis {
namespace {

constexpr uint64_t kMs = 1'000'000;
constexpr uint64_t kS = 1000 * kMs;

// A gloo job of `ranks` ranks (pid 10 + rank, the gloo worker thread pid + 100): each rank calls c10d's
// allreduce (probe 0) then runs gloo's algorithm (probe 1) every 100 ms; calls from `stop_at` on are made
// only by ranks in `late`, which never return. The recording ends at `end_ns`.
struct Job {
  RecordedSegment seg;
  void Process(int rank, std::optional<int> exit_signal = {}, uint64_t exited = 0) {
    RecordedProcess p{10 + rank, 1, rank, "python3", "", 0, exited};
    p.exit_signal = exit_signal;
    p.world_size = std::nullopt;
    seg.processes[10 + rank] = p;
  }
  void Call(int rank, uint32_t probe_c10d, uint32_t probe_algo, uint64_t t, bool returns, uint64_t comm = 0xab) {
    const uint32_t pid = 10 + rank;
    seg.data.call_enters.push_back({pid, pid, probe_c10d, t, comm, 0});
    seg.data.calls.push_back({pid, pid, probe_c10d, t, t + 10'000});
    seg.data.call_enters.push_back({pid + 100, pid, probe_algo, t + 20'000, 0, 0});
    if (returns) seg.data.calls.push_back({pid + 100, pid, probe_algo, t + 20'000, t + 5 * kMs});
  }
};

Job GlooJob(int ranks, int steps, int stop_at, const std::vector<int>& late, uint64_t end_ns) {
  Job j;
  j.seg.launched = true;
  j.seg.end_ns = end_ns;
  j.seg.probes = {
      {"c10d::ProcessGroupGloo::allreduce(x)", "all_reduce", ProbeKind::kCollectiveEnqueue, "libtorch_cpu.so"},
      {"gloo::allreduce(gloo::AllreduceOptions const&)", "all_reduce", ProbeKind::kCollective, "libtorch_cpu.so"},
      {"c10d::ProcessGroupGloo::broadcast(x)", "broadcast", ProbeKind::kCollectiveEnqueue, "libtorch_cpu.so"},
      {"gloo::broadcast(gloo::BroadcastOptions&)", "broadcast", ProbeKind::kCollective, "libtorch_cpu.so"}};
  for (int r = 0; r < ranks; ++r) {
    j.Process(r);
    for (int k = 0; k < steps; ++k) {
      if (k >= stop_at && std::find(late.begin(), late.end(), r) == late.end()) break;
      j.Call(r, 0, 1, kS + static_cast<uint64_t>(k) * 100 * kMs, k < stop_at);
    }
  }
  return j;
}

// A job the recorder started, with GlooJob's probes, ending at `end_ns`, and no process or call yet.
Job LaunchedJobWithoutCalls(uint64_t end_ns) {
  Job j;
  j.seg.launched = true;
  j.seg.end_ns = end_ns;
  j.seg.probes = GlooJob(1, 0, 0, {}, 0).seg.probes;
  return j;
}

void AddStuckState(Job* j, int rank, uint64_t since) {
  const uint32_t pid = 10 + rank;
  j->seg.thread_states.push_back({pid, pid, since + 2 * kS, since, 1, "202", "futex_wait_queue", -1, -1, 0});
  j->seg.python_stacks[{pid, 0}] = {{"blocked", "/x/job.py", 7}};
}

DiagnosisResult Analyse(const Job& j, StallOptions o = {}) {
  RecordedRun run;
  run.segments.push_back(j.seg);
  DiagnosisResult result;
  ApplyStallAnalysis({DecodeRecordedCalls(run), DecodeRecordedThreads(run)}, &result, o);
  return result;
}

// The sentences of a result's notes that keep it from being called healthy (verdict_notes.h).
std::vector<std::string> Problems(const DiagnosisResult& r) {
  return NoteTexts(r.verdict_notes, NoteEffect::kBlocksHealthy);
}

const StallEvidence& Stall(const Finding& f) { return std::get<StallEvidence>(f.evidence.kind); }

// Judging a stall takes no result; applying puts its findings before the result's own and its problems
// among the input problems: a job's abnormal end after the problems found before, asleep-before-recording
// first. Here rank 1 stops and is then killed (SIGKILL) while ranks 0 and 2 wait: a hang, then the kill.
TEST(Stall, AJudgementPutsItsFindingsFirstAndItsProblemsAfter) {
  Job j = GlooJob(3, 4, 3, {0, 2}, 31 * kS);
  j.Process(1, SIGKILL, 30 * kS);
  AddStuckState(&j, 1, kS + 300 * kMs);
  RecordedRun run;
  run.segments.push_back(j.seg);
  StallJudgement judged = JudgeStall({DecodeRecordedCalls(run), DecodeRecordedThreads(run)});
  ASSERT_FALSE(judged.findings.empty());
  EXPECT_EQ(judged.findings.front().cause, Cause::kHang);
  ASSERT_EQ(judged.problems.size(), 1u);
  EXPECT_EQ(judged.problems[0].id, NoteId::kEndedAbnormally);
  EXPECT_NE(NoteText(judged.problems[0]).find("killed by signal 9"), std::string::npos) << NoteText(judged.problems[0]);
  EXPECT_FALSE(judged.leading_problem);

  DiagnosisResult result;
  result.findings.resize(1);
  result.findings[0].cause = Cause::kSlowCompute;
  const VerdictNote before{NoteId::kDuplicateStepMarkers, {"0", "2"}};
  result.verdict_notes = {before};
  const size_t added = judged.findings.size();
  ApplyStallJudgement(std::move(judged), &result);
  ASSERT_EQ(result.findings.size(), added + 1);
  EXPECT_EQ(result.findings.front().cause, Cause::kHang);
  EXPECT_EQ(result.findings.back().cause, Cause::kSlowCompute);
  ASSERT_EQ(result.verdict_notes.size(), 2u);
  EXPECT_EQ(result.verdict_notes[0], before);
  EXPECT_EQ(result.verdict_notes[1].id, NoteId::kEndedAbnormally);

  StallJudgement asleep;
  asleep.leading_problem = VerdictNote{NoteId::kAsleepBeforeRecording, {"rank 0: sleeping"}};
  ApplyStallJudgement(std::move(asleep), &result);
  EXPECT_EQ(result.verdict_notes.front().id, NoteId::kAsleepBeforeRecording);
}

TEST(Stall, NamesTheRankThatNeverEnteredWithItsStateAndFrame) {
  // Rank 1 stops after 3 collectives (blocked on a lock); ranks 0 and 2 wait in #3 until the end, 30 s on.
  Job j = GlooJob(3, 4, 3, {0, 2}, 31 * kS);
  AddStuckState(&j, 1, kS + 250 * kMs);
  const DiagnosisResult r = Analyse(j);
  ASSERT_EQ(r.findings.size(), 1u);
  const Finding& f = r.findings[0];
  EXPECT_EQ(f.cause, Cause::kHang);
  ASSERT_TRUE(f.rank);
  EXPECT_EQ(*f.rank, RankNumber(1));
  EXPECT_EQ(f.impact_pct, 100);
  EXPECT_EQ(f.layer, Layer::kPython);
  const StallEvidence& e = Stall(f);
  EXPECT_EQ(e.communicator, "pg0");
  EXPECT_EQ(e.seq, 3);
  EXPECT_EQ(e.op, "all_reduce");
  EXPECT_EQ(e.waiting_ranks, (std::vector<int32_t>{0, 2}));
  EXPECT_EQ(e.missing_ranks, (std::vector<int32_t>{1}));
  EXPECT_TRUE(e.ongoing);
  EXPECT_NEAR(e.stalled_for_s, 30 - 0.205, 0.01);  // from the last completion (#2 at 1.2 s + 5 ms)
  ASSERT_EQ(e.missing.size(), 1u);
  EXPECT_EQ(StateText(e.missing[0].state), "blocked on a lock (futex)");
  EXPECT_EQ(e.missing[0].frame, "Python blocked (job.py:7)");
  EXPECT_EQ(e.missing[0].last_completed_seq, 2);
  EXPECT_EQ(e.missing[0].observed_by, Observer::kThreadState);
}

// The recorder also wrote the stuck rank's other threads off CPU: one asleep (the lock's holder), one idle in
// a futex wait (a pool thread). The busy one is named first and in the summary; the idle one is listed after.
TEST(Stall, TheStuckRanksOtherThreadsAreListedBusyFirst) {
  Job j = GlooJob(3, 4, 3, {0, 2}, 31 * kS);
  AddStuckState(&j, 1, kS + 250 * kMs);
  RecordedThreadState idle{11, 60, 3 * kS, kS + 300 * kMs, 1, "202", "futex_wait_queue"};
  idle.comm = "pool";
  RecordedThreadState holder{11, 61, 3 * kS, kS + 240 * kMs, 1, "35", "hrtimer_nanosleep"};
  holder.comm = "holder";
  RecordedThreadState other_rank{10, 62, 3 * kS, kS, 1, "35", "hrtimer_nanosleep"};  // rank 0's: not listed
  j.seg.thread_states.insert(j.seg.thread_states.end(), {idle, holder, other_rank});
  const DiagnosisResult r = Analyse(j);
  ASSERT_EQ(r.findings.size(), 1u);
  const StallEvidence& e = Stall(r.findings[0]);
  ASSERT_EQ(e.missing.size(), 1u);
  const auto& threads = e.missing[0].other_threads;
  ASSERT_EQ(threads.size(), 2u);
  EXPECT_EQ(threads[0].tid, 61u);
  EXPECT_EQ(threads[0].name, "holder");
  EXPECT_EQ(StateText(threads[0].state), "sleeping (nanosleep)");
  EXPECT_FALSE(threads[0].idle);
  EXPECT_EQ(threads[1].tid, 60u);
  EXPECT_TRUE(threads[1].idle);
  EXPECT_NE(r.findings[0].summary.find("meanwhile its thread 61 (holder) is sleeping (nanosleep)"), std::string::npos)
      << r.findings[0].summary;
  EXPECT_EQ(r.findings[0].summary.find("thread 60"), std::string::npos) << "an idle thread is not in the summary";
  EXPECT_EQ(StateText(e.missing[0].state), "blocked on a lock (futex)") << "the main thread's state is unchanged";
}

TEST(Stall, ARankWithoutCallsInWhatWasReadIsStillMissingLive) {
  // Live, after the window (or a new flight-recorder chunk) lost rank 1's last calls: its process is still in
  // the recording, so it is missing from the collective ranks 0 and 2 wait in, not forgotten.
  Job j = GlooJob(3, 4, 3, {0, 2}, 0);
  AddStuckState(&j, 1, kS + 250 * kMs);
  std::erase_if(j.seg.data.call_enters, [](const auto& e) { return e.tgid == 11; });
  std::erase_if(j.seg.data.calls, [](const auto& c) { return c.tgid == 11; });
  StallOptions live;
  live.now_unix_ns = static_cast<int64_t>(20 * kS);
  const DiagnosisResult r = Analyse(j, live);
  ASSERT_EQ(r.findings.size(), 1u);
  ASSERT_TRUE(r.findings[0].rank);
  EXPECT_EQ(*r.findings[0].rank, RankNumber(1));
  EXPECT_EQ(StateText(Stall(r.findings[0]).missing[0].state), "blocked on a lock (futex)");
}

TEST(Stall, AHostCallWhoseAlgorithmNeverStartedIsNoWait) {
  // Rank 1's last c10d call has no gloo algorithm (missed while the probes were attached, or its worker is
  // elsewhere): it is not waiting in the collective; it is missing, and where its thread is is what counts.
  Job j = GlooJob(3, 4, 3, {0, 2}, 31 * kS);
  AddStuckState(&j, 1, kS + 250 * kMs);
  j.seg.data.call_enters.push_back({11, 11, 0, kS + 260 * kMs, 0xab, 0});  // c10d allreduce, no algorithm
  const DiagnosisResult r = Analyse(j);
  ASSERT_EQ(r.findings.size(), 1u);
  ASSERT_TRUE(r.findings[0].rank);
  EXPECT_EQ(*r.findings[0].rank, RankNumber(1));
  EXPECT_EQ(StateText(Stall(r.findings[0]).missing[0].state), "blocked on a lock (futex)");
}

TEST(Stall, ARecoveredStallOrAShortWaitIsNoHang) {
  // Every collective returns: no rank is inside one at the end, however long the pause before the last.
  Job recovered = GlooJob(3, 4, 4, {}, 31 * kS);
  recovered.Call(0, 0, 1, 20 * kS, true);
  recovered.Call(1, 0, 1, 20 * kS, true);
  recovered.Call(2, 0, 1, 20 * kS, true);
  EXPECT_TRUE(Analyse(recovered).findings.empty());
  // Ranks inside a collective for 2 s at the end (under the 5 s floor): not a stall.
  Job short_wait = GlooJob(3, 4, 3, {0, 2}, kS + 300 * kMs + 2 * kS);
  const DiagnosisResult r = Analyse(short_wait);
  EXPECT_TRUE(r.findings.empty());
  // ... but the job did not end cleanly: ranks were left inside a collective.
  ASSERT_EQ(Problems(r).size(), 1u);
  EXPECT_NE(Problems(r)[0].find("inside a collective"), std::string::npos) << Problems(r)[0];
}

TEST(Stall, SigtermOnEveryRankAtOnceIsAStopNotAHang) {
  Job j = GlooJob(3, 4, 3, {0, 1, 2}, 2 * kS);
  for (int r = 0; r < 3; ++r) j.Process(r, 15, kS + 400 * kMs + static_cast<uint64_t>(r) * kMs);
  const DiagnosisResult result = Analyse(j);
  EXPECT_TRUE(result.findings.empty());
  ASSERT_FALSE(Problems(result).empty());
  EXPECT_NE(Problems(result)[0].find("every rank was stopped by signal 15 (SIGTERM)"), std::string::npos)
      << Problems(result)[0];
}

// A recorder attached to a job already stopped: no collective call, every rank's main thread asleep since
// before the attach (its start unknown). No hang is claimed (nothing was measured against a collective); the
// ranks are said grouped by where they wait, the one elsewhere apart, and the result is never healthy.
TEST(Stall, EveryRankAsleepBeforeTheAttachIsSaidByPlaceNotJudged) {
  auto job = [](bool every_rank) {
    Job j = GlooJob(3, 0, 0, {}, 5 * kS);
    for (int r = 0; r < 3; ++r) {
      const uint32_t pid = 10 + static_cast<uint32_t>(r);
      if (r == 2 && !every_rank) continue;
      RecordedThreadState t{pid, pid, 2 * kS, 0, 1, "202", "futex_wait_queue", -1, -1, 0};
      t.py_stack = 0;
      t.since_before_attach = true;
      j.seg.thread_states.push_back(t);
      j.seg.python_stacks[{pid, 0}] = {r == 1 ? PythonFrameRef{"blocked_on_lock", "/x/job.py", 84}
                                              : PythonFrameRef{"backward", "/t/autograd/__init__.py", 103}};
    }
    return j;
  };
  const DiagnosisResult result = Analyse(job(true));
  EXPECT_TRUE(result.findings.empty()) << "no collective: no hang is claimed";
  ASSERT_FALSE(Problems(result).empty());
  const std::string said = Problems(result)[0];
  EXPECT_NE(said.find("every rank was asleep since before the recorder attached"), std::string::npos) << said;
  EXPECT_NE(said.find("ranks 0, 2: blocked on a lock (futex) in Python backward (__init__.py:103)"), std::string::npos)
      << said;
  EXPECT_NE(said.find("rank 1: blocked on a lock (futex) in Python blocked_on_lock (job.py:84)"), std::string::npos)
      << said;
  // A rank the recorder did not see asleep since before it attached: the rule does not apply.
  EXPECT_TRUE(Problems(Analyse(job(false))).empty());
}

TEST(Stall, ACrashIsNamedAndKeepsTheJobFromHealthy) {
  Job j = GlooJob(2, 4, 4, {}, 2 * kS);
  j.Process(1, 11, kS + 500 * kMs);  // SIGSEGV
  const DiagnosisResult result = Analyse(j);
  ASSERT_EQ(Problems(result).size(), 1u);
  EXPECT_NE(Problems(result)[0].find("rank 1 (pid 11) was killed by signal 11 (SIGSEGV)"), std::string::npos)
      << Problems(result)[0];
}

TEST(Stall, TheThresholdFollowsTheJobsRhythm) {
  // Collectives every 2 s: 10 typical gaps = 20 s; ranks inside one for 12 s are not stalled yet.
  Job j;
  j.seg.launched = true;
  j.seg.probes = GlooJob(1, 0, 0, {}, 0).seg.probes;
  for (int r = 0; r < 2; ++r) {
    j.Process(r);
    for (int k = 0; k < 6; ++k) j.Call(r, 0, 1, kS + static_cast<uint64_t>(k) * 2 * kS, true);
  }
  j.Call(0, 0, 1, 13 * kS, false);
  j.seg.end_ns = 25 * kS;
  EXPECT_TRUE(Analyse(j).findings.empty());
  j.seg.end_ns = 40 * kS;  // 29 s after the last completion: stalled
  const DiagnosisResult r = Analyse(j);
  ASSERT_EQ(r.findings.size(), 1u);
  EXPECT_NEAR(Stall(r.findings[0]).threshold_s, 20, 0.1);
}

TEST(Stall, RanksThatDiedWaitingAreAStallPastTheFloorWhateverTheRhythm) {
  // Collectives every 2 s (10 gaps = 20 s); ranks 0 and 2 inside one from 13 s, rank 1 never enters; 12 s later
  // the waiting ranks exit (the process group's timeout): post-mortem that is a hang, at the 5 s floor.
  Job j;
  j.seg.launched = true;
  j.seg.probes = GlooJob(1, 0, 0, {}, 0).seg.probes;
  for (int r = 0; r < 3; ++r) {
    j.Process(r);
    for (int k = 0; k < 6; ++k) j.Call(r, 0, 1, kS + static_cast<uint64_t>(k) * 2 * kS, true);
  }
  j.Call(0, 0, 1, 13 * kS, false);
  j.Call(2, 0, 1, 13 * kS, false);
  j.seg.end_ns = 27 * kS;
  EXPECT_TRUE(Analyse(j).findings.empty());  // alive at the end, 12 s in: not yet 10 gaps
  j.Process(0, std::nullopt, 25 * kS);
  j.Process(2, std::nullopt, 25 * kS);
  const DiagnosisResult r = Analyse(j);
  ASSERT_FALSE(r.findings.empty());
  EXPECT_EQ(r.findings[0].cause, Cause::kHang);
  EXPECT_EQ(r.findings[0].rank, RankNumber(1));
  EXPECT_NEAR(Stall(r.findings[0]).threshold_s, thresholds::kStallFloorS, 1e-9);
  // Only one of the two waiting ranks gone: the other may still see it complete; the rhythm's threshold holds.
  j.Process(2);
  EXPECT_TRUE(Analyse(j).findings.empty());
}

// The usual production story: rank 1 stops (a lock, a slow read) longer than the process group's timeout; its
// peers wait in #3, time out and exit; rank 1 then comes back, enters #3 alone and fails. Every rank entered #3,
// so membership names no one; by time rank 1 was missing for the peers' whole wait. Entering while the peers
// still waited (a stop shorter than the timeout, the collective still hung) names no rank that way.
TEST(Stall, ARankThatEntersAfterItsPeersGaveUpIsTheMissingOneAndSaysWhenItCameBack) {
  auto job = [](uint64_t back_at) {
    Job j = GlooJob(3, 4, 3, {0, 2}, 27 * kS);
    j.Call(1, 0, 1, back_at, false);
    AddStuckState(&j, 1, kS + 250 * kMs);
    j.Process(0, std::nullopt, 16300 * kMs);
    j.Process(2, std::nullopt, 16300 * kMs);
    j.Process(1, std::nullopt, back_at + 100 * kMs);
    return j;
  };
  for (uint64_t back_at : {26300 * kMs, 16400 * kMs}) {
    const DiagnosisResult r = Analyse(job(back_at));
    ASSERT_FALSE(r.findings.empty());
    const Finding& f = r.findings[0];
    EXPECT_EQ(f.cause, Cause::kHang);
    ASSERT_TRUE(f.rank) << f.summary;
    EXPECT_EQ(*f.rank, RankNumber(1));
    const StallEvidence& e = Stall(f);
    EXPECT_EQ(e.seq, 3);
    EXPECT_EQ(e.waiting_ranks, (std::vector<int32_t>{0, 2}));
    EXPECT_EQ(e.missing_ranks, (std::vector<int32_t>{1}));
    EXPECT_NEAR(e.stalled_for_s, 16.3 - 1.205, 0.01);  // the peers' wait: from #2's completion to their exit
    ASSERT_EQ(e.missing.size(), 1u);
    EXPECT_EQ(StateText(e.missing[0].state), "blocked on a lock (futex)");  // where it was during their wait
    EXPECT_NEAR(e.missing[0].came_back_unix_s, static_cast<double>(back_at) / 1e9, 1e-6);
    EXPECT_NE(f.summary.find("came back"), std::string::npos) << f.summary;
  }
  // Rank 1 entered at 10 s, while its peers still waited, and the collective stayed stuck 6.3 s (over the 5 s
  // floor) with every rank in it: a hang of its own, no rank named.
  const DiagnosisResult r = Analyse(job(10 * kS));
  ASSERT_FALSE(r.findings.empty());
  EXPECT_FALSE(r.findings[0].rank);
  EXPECT_EQ(Stall(r.findings[0]).waiting_ranks, (std::vector<int32_t>{0, 1, 2}));
}

// A stop about as long as the process group's timeout (seen on a real job: rank 1 back at +8.0 s, its peers'
// 8 s timeout firing at the same moment): rank 1 enters #3 15 s after its peers and 0.2 s before they give up.
// It was missing for their wait; "every rank entered and none completed" named no one.
TEST(Stall, ARankThatEntersAsItsPeersGiveUpIsTheMissingOne) {
  Job j = GlooJob(3, 4, 3, {0, 2}, 27 * kS);
  j.Call(1, 0, 1, 16100 * kMs, false);
  AddStuckState(&j, 1, kS + 250 * kMs);
  j.Process(0, std::nullopt, 16300 * kMs);
  j.Process(2, std::nullopt, 16300 * kMs);
  j.Process(1, std::nullopt, 16400 * kMs);
  const DiagnosisResult r = Analyse(j);
  ASSERT_FALSE(r.findings.empty());
  const Finding& f = r.findings[0];
  ASSERT_TRUE(f.rank) << f.summary;
  EXPECT_EQ(*f.rank, RankNumber(1));
  const StallEvidence& e = Stall(f);
  EXPECT_EQ(e.waiting_ranks, (std::vector<int32_t>{0, 2}));
  EXPECT_EQ(e.missing_ranks, (std::vector<int32_t>{1}));
  ASSERT_EQ(e.missing.size(), 1u);
  EXPECT_NEAR(e.missing[0].came_back_unix_s, 16.1, 1e-6);
  EXPECT_NE(f.summary.find("0.2 s before they gave up"), std::string::npos) << f.summary;
}

TEST(Stall, LiveNowMeasuresTheStallUpToNowAndJudgesNoEnd) {
  Job j = GlooJob(3, 4, 3, {0, 2}, 0);
  j.seg.end_ns = 0;
  StallOptions live;
  live.now_unix_ns = static_cast<int64_t>(kS + 300 * kMs + 7 * kS);
  const DiagnosisResult r = Analyse(j, live);
  ASSERT_EQ(r.findings.size(), 1u);
  EXPECT_NEAR(Stall(r.findings[0]).stalled_for_s, 7.095, 0.01);
  EXPECT_TRUE(Problems(r).empty());
  live.now_unix_ns = static_cast<int64_t>(kS + 300 * kMs + 3 * kS);  // 3 s in: not yet
  EXPECT_TRUE(Analyse(j, live).findings.empty());
}

// At #2, rank 1 calls broadcast where ranks 0 and 2 call all_reduce; `went_on`: every rank then completes #3
// (an all_reduce) as well, else none does (the communicator is derailed, as gloo and NCCL leave it).
Job MismatchJob(bool went_on) {
  Job j = LaunchedJobWithoutCalls(2 * kS);
  for (int r = 0; r < 3; ++r) {
    j.Process(r);
    for (int k = 0; k < 4; ++k) {
      const bool odd = r == 1 && k == 2;
      j.Call(r, odd ? 2 : 0, odd ? 3 : 1, kS + static_cast<uint64_t>(k) * 10 * kMs, k < 3 || went_on);
    }
  }
  return j;
}

TEST(Stall, MismatchNamesEachSide) {
  const DiagnosisResult r = Analyse(MismatchJob(false));
  ASSERT_FALSE(r.findings.empty());
  const Finding& f = r.findings[0];
  EXPECT_EQ(f.cause, Cause::kCollectiveMismatch);
  ASSERT_TRUE(f.rank);
  EXPECT_EQ(*f.rank, RankNumber(1));
  const StallEvidence& e = Stall(f);
  EXPECT_EQ(e.seq, 2);
  ASSERT_EQ(e.calls.size(), 2u);
  EXPECT_EQ(e.calls[0].op, "all_reduce");
  EXPECT_EQ(e.calls[0].ranks, (std::vector<int32_t>{0, 2}));
  EXPECT_EQ(e.calls[1].op, "broadcast");
  EXPECT_EQ(e.calls[1].ranks, (std::vector<int32_t>{1}));
}

// A communicator that went on after a number whose calls differ (every rank completed a later number of it,
// with calls that agree) was not derailed: the difference is the recording's (held-out seeds 36000+: gloo's
// buffer bytes of a throttled rank), no mismatch. The same calls followed by a derailed communicator are one.
TEST(Stall, ADifferenceTheCommunicatorWentOnFromIsNoMismatch) {
  for (const Finding& f : Analyse(MismatchJob(true)).findings)
    EXPECT_NE(f.cause, Cause::kCollectiveMismatch) << f.summary;
  const DiagnosisResult derailed = Analyse(MismatchJob(false));
  ASSERT_FALSE(derailed.findings.empty());
  EXPECT_EQ(derailed.findings[0].cause, Cause::kCollectiveMismatch);
}

// Generated jobs (2-6 ranks, 4-12 numbers on communicator A, a mismatch at a random number by a random rank;
// communicator B alongside, always completing): the mismatch is named at its number exactly when A did not go
// on past it. A goes on: every later number agrees and completes (no mismatch), or only its last one does
// after more differences (none). A derailed: no call after the mismatch on A while B goes on (named; B's going
// on is not A's).
TEST(Stall, AMismatchIsNamedExactlyWhenItsCommunicatorDidNotGoOn) {
  std::mt19937 rng(5);
  for (int trial = 0; trial < 300; ++trial) {
    const int ranks = 2 + static_cast<int>(rng() % 5), numbers = 4 + static_cast<int>(rng() % 9);
    const int at = static_cast<int>(rng() % static_cast<unsigned>(numbers - 1));
    const int odd = static_cast<int>(rng() % static_cast<unsigned>(ranks));
    const int mode = static_cast<int>(rng() % 3);  // 0 goes on, 1 derailed, 2 goes on at its last number only
    Job j = LaunchedJobWithoutCalls(kS + static_cast<uint64_t>(numbers + 1) * 20 * kMs);
    for (int r = 0; r < ranks; ++r) {
      j.Process(r);
      for (int k = 0; k < numbers; ++k) {
        const uint64_t t = kS + static_cast<uint64_t>(k) * 20 * kMs;
        const bool differs = r == odd && (k == at || (mode == 2 && k > at && k < numbers - 1));
        if (mode != 1 || k <= at) j.Call(r, differs ? 2 : 0, differs ? 3 : 1, t, true, 0xa0);
        j.Call(r, 0, 1, t + 8 * kMs, true, 0xb0);
      }
    }
    std::stable_sort(j.seg.data.call_enters.begin(), j.seg.data.call_enters.end(),
                     [](const auto& a, const auto& b) { return a.ts_ns < b.ts_ns; });
    std::vector<const Finding*> mismatches;
    const DiagnosisResult r = Analyse(j);
    for (const Finding& f : r.findings)
      if (f.cause == Cause::kCollectiveMismatch) mismatches.push_back(&f);
    const std::string what = fmt::format("trial {}: {} ranks, {} numbers, odd rank {} at #{}, mode {}", trial, ranks,
                                         numbers, odd, at, mode);
    if (mode != 1) {
      EXPECT_TRUE(mismatches.empty()) << what << ": " << mismatches.front()->summary;
      continue;
    }
    ASSERT_EQ(mismatches.size(), 1u) << what;
    EXPECT_EQ(Stall(*mismatches[0]).seq, at) << what;
    EXPECT_EQ(Stall(*mismatches[0]).communicator, "pg0") << what;
  }
}

// A call lost from rank 1's record of a launched job (held-out seed 19441 named collective_mismatch on a
// CPU-contention job): its later calls carry the numbers of the calls before them, so at each number its op
// differs from its peers'. They completed 10 ms (a whole gap) from its peers' calls of that number, not with
// them: not one collective, no mismatch. The same calls completing together are one (MismatchNamesEachSide).
TEST(Stall, CallsOfOneNumberCompletedAGapApartAreNoMismatch) {
  Job j = LaunchedJobWithoutCalls(2 * kS);
  for (int r = 0; r < 3; ++r) {
    j.Process(r);
    for (int k = 0; k < 6; ++k) {
      if (r == 1 && k == 2) continue;  // its record lost this call
      const bool broadcast = k % 2 == 1;
      j.Call(r, broadcast ? 2 : 0, broadcast ? 3 : 1, kS + static_cast<uint64_t>(k) * 10 * kMs, true);
    }
  }
  const DiagnosisResult r = Analyse(j);
  for (const Finding& f : r.findings) EXPECT_NE(f.cause, Cause::kCollectiveMismatch) << f.summary;
}

// NCCL's API alone (a call returns 50 µs after it is made, at its launch): 3 ranks, 5 all_reduces 100 ms apart,
// each of `count` elements; rank `odd_rank`'s call `odd_call` is made `odd_delay` later, of `odd_count`.
Job NcclApiJob(uint64_t count, int odd_rank = -1, uint64_t odd_call = 0, uint64_t odd_delay = 0,
               uint64_t odd_count = 0) {
  Job j;
  j.seg.launched = true;
  j.seg.end_ns = 25 * kS;
  j.seg.probes = {{"ncclAllReduce", "all_reduce", ProbeKind::kCollectiveEnqueue, "libnccl.so"}};
  for (int r = 0; r < 3; ++r) {
    j.Process(r);
    const uint32_t pid = 10 + static_cast<uint32_t>(r);
    for (uint64_t k = 0; k < 5; ++k) {
      const bool odd = r == odd_rank && k == odd_call;
      const uint64_t t = kS + k * 100 * kMs + (odd ? odd_delay : 0);
      j.seg.data.call_enters.push_back({pid, pid, 0, t, 0, odd ? odd_count : count});
      j.seg.data.calls.push_back({pid, pid, 0, t, t + 50'000});
    }
  }
  return j;
}

// NCCL's API alone: a call returns at its launch, so the launches' times say nothing of whether the calls of
// one number were one collective. Rank 1 launches all_reduce #3 on 512 elements (its peers on 1024) 60 ms
// after them, more than half the gap to the next launch: still a mismatch (the guard above judges
// completions, and these are none; the sanitizer's timing hid ctest recorder_hangs nccl_api_mismatch so).
TEST(Stall, NcclApiLaunchesApartAreStillAMismatch) {
  const DiagnosisResult r = Analyse(NcclApiJob(1024, 1, 3, 60 * kMs, 512));
  ASSERT_FALSE(r.findings.empty());
  EXPECT_EQ(r.findings[0].cause, Cause::kCollectiveMismatch) << r.findings[0].summary;
  EXPECT_EQ(Stall(r.findings[0]).seq, 3);
}

// The model's grouping by number (model::CallsByNumber), which the mismatch rule reads: the lost-call job's
// numbers 2-4 are completed a gap apart on rank 1 (not one collective), the others together; NCCL's API alone
// tracks no completion, so none of its numbers is judged apart, however far apart the launches.
model::CollectiveProgress ProgressOf(const Job& j) {
  RecordedRun run;
  run.segments.push_back(j.seg);
  return model::BuildCollectiveProgress(DecodeRecordedCalls(run));
}

TEST(CollectiveNumbers, CallsCompletedAGapApartAreNotOneCollective) {
  Job j = LaunchedJobWithoutCalls(2 * kS);
  for (int r = 0; r < 3; ++r) {
    j.Process(r);
    for (int k = 0; k < 6; ++k) {
      if (r == 1 && k == 2) continue;
      j.Call(r, 0, 1, kS + static_cast<uint64_t>(k) * 10 * kMs, true);
    }
  }
  const model::CollectiveProgress p = ProgressOf(j);
  const std::vector<model::CallsAtNumber> numbers = model::CallsByNumber(p);
  ASSERT_EQ(numbers.size(), 6u);
  for (const model::CallsAtNumber& at : numbers) {
    EXPECT_EQ(at.completed_apart, at.key.seq >= 2 && at.key.seq <= 4) << at.key.seq;
    ASSERT_FALSE(at.calls.empty());
    for (size_t i = 1; i < at.calls.size(); ++i) EXPECT_LT(at.calls[i - 1].first, at.calls[i].first);
    for (const auto& [rank, call] : at.calls) EXPECT_EQ(call->seq, at.key.seq);
  }
  EXPECT_EQ(numbers.back().calls.size(), 2u);  // #5: ranks 0 and 2 only (rank 1 made 5 calls)
}

TEST(CollectiveNumbers, LaunchesWithoutCompletionsAreNeverJudgedApart) {
  const model::CollectiveProgress p = ProgressOf(NcclApiJob(1024, 1, 3, 60 * kMs, 512));
  const std::vector<model::CallsAtNumber> numbers = model::CallsByNumber(p);
  ASSERT_EQ(numbers.size(), 5u);
  for (const model::CallsAtNumber& at : numbers) {
    EXPECT_FALSE(at.completed_apart) << at.key.seq;
    EXPECT_EQ(at.calls.size(), 3u);
  }
}

TEST(Stall, GlooBufferBytesNameASizeMismatch) {
  // gloo's buffers (createUnboundBuffer's size, entry rows of a collective_buffer probe on the thread that runs
  // the algorithm next): 4 bytes per all_reduce, but 8 on rank 1 at #2; a buffer of another thread, of the
  // algorithm itself or long before it is not taken.
  Job j = LaunchedJobWithoutCalls(2 * kS);
  j.seg.probes.push_back({"gloo::Context::createUnboundBuffer(void*, unsigned long)", "buffer",
                          ProbeKind::kCollectiveBuffer, "libgloo.so.0"});
  const uint32_t buffer_probe = static_cast<uint32_t>(j.seg.probes.size() - 1);
  for (int r = 0; r < 3; ++r) {
    j.Process(r);
    const uint32_t pid = 10 + static_cast<uint32_t>(r);
    for (int k = 0; k < 4; ++k) {
      const uint64_t t = kS + static_cast<uint64_t>(k) * 10 * kMs;
      j.seg.data.call_enters.push_back({pid + 100, pid, buffer_probe, t + 15'000, 0, r == 1 && k == 2 ? 8u : 4u});
      j.seg.data.call_enters.push_back({pid + 200, pid, buffer_probe, t + 16'000, 0, 64});  // another thread's
      // the algorithm's own scratch buffer (inside it: from entry to completion) and a buffer of an unprobed
      // path 3 ms before the next algorithm (older than kGlooBufferLeadNs): neither is the collective's size
      j.seg.data.call_enters.push_back({pid + 100, pid, buffer_probe, t + 1 * kMs, 0, 1000});
      j.seg.data.call_enters.push_back({pid + 100, pid, buffer_probe, t + 7 * kMs, 0, 1'000'000});
      j.Call(r, 0, 1, t, k < 3);  // #3 never completes: the size mismatch derailed the communicator
    }
  }
  std::stable_sort(j.seg.data.call_enters.begin(), j.seg.data.call_enters.end(),
                   [](const auto& a, const auto& b) { return a.ts_ns < b.ts_ns; });
  const DiagnosisResult r = Analyse(j);
  ASSERT_FALSE(r.findings.empty());
  const Finding& f = r.findings[0];
  EXPECT_EQ(f.cause, Cause::kCollectiveMismatch);
  ASSERT_TRUE(f.rank);
  EXPECT_EQ(*f.rank, RankNumber(1));
  const StallEvidence& e = Stall(f);
  EXPECT_EQ(e.seq, 2);
  ASSERT_EQ(e.calls.size(), 2u);
  EXPECT_EQ(e.calls[0].bytes, 4u);
  EXPECT_EQ(e.calls[0].ranks, (std::vector<int32_t>{0, 2}));
  EXPECT_EQ(e.calls[1].bytes, 8u);
  EXPECT_EQ(e.calls[1].ranks, (std::vector<int32_t>{1}));
  EXPECT_NE(f.summary.find("rank(s) 1 called all_reduce of 8 bytes"), std::string::npos) << f.summary;
}

// A recording that attached mid-run (a flight-recorder chunk, `strata record --pid`): ranks 1 and 2 missed
// the first collective rank 0 recorded, and rank 2's first recorded one completed late, nearer rank 0's next
// one. The numbers are shifted by the completions that line up over the whole run (not the first alone), so
// they are certain, and the skipped collective at the end is still a mismatch at rank 0's number.
Job AttachedJob(uint64_t rank1_lag_ns) {
  Job j;
  j.seg.launched = false;
  j.seg.end_ns = 3 * kS;
  j.seg.probes = GlooJob(1, 0, 0, {}, 0).seg.probes;
  constexpr int kCalls = 12;
  for (int r = 0; r < 3; ++r) {
    j.Process(r);
    for (int k = r == 0 ? 0 : 1; k <= kCalls; ++k) {
      const bool last = k == kCalls, odd = last && r == 1;
      uint64_t t = kS + static_cast<uint64_t>(k) * 10 * kMs + (r == 1 ? rank1_lag_ns : 0);
      if (r == 2 && k == 1) t += 6 * kMs;
      j.Call(r, odd ? 2 : 0, odd ? 3 : 1, t, !last);
    }
  }
  return j;
}

TEST(Stall, AnAttachedRecordingIsAlignedOverTheWholeRunAndJudgesMismatches) {
  const Job j = AttachedJob(0);
  RecordedRun run;
  run.segments.push_back(j.seg);
  const model::CollectiveProgress p = model::BuildCollectiveProgress(DecodeRecordedCalls(run));
  EXPECT_TRUE(p.aligned_by_time);
  EXPECT_TRUE(p.numbers_certain);
  EXPECT_EQ(p.ranks.at(2).calls.front().seq, 1) << "rank 2's first recorded call is rank 0's #1";
  const DiagnosisResult r = Analyse(j);
  ASSERT_FALSE(r.findings.empty());
  EXPECT_EQ(r.findings[0].cause, Cause::kCollectiveMismatch);
  ASSERT_TRUE(r.findings[0].rank);
  EXPECT_EQ(*r.findings[0].rank, RankNumber(1));
  EXPECT_EQ(Stall(r.findings[0]).seq, 12);
}

TEST(Stall, CallsBeforeTheProbesWereAttachedArePairedWithNoAlgorithm) {
  // The agent attached to a running job: rank 0's first c10d call was recorded but its algorithm ran before
  // libgloo's probe was attached. Paired in order, each later call took its successor's algorithm and the
  // last, which rank 0 was waiting in, looked never entered. Rows before the "attached" record are left out.
  // A step of all_reduce, all_reduce, broadcast (so a shift by one disagrees on ops and is no alignment);
  // rank 1 never makes call #5, which ranks 0 and 2 wait in.
  Job j;
  j.seg.end_ns = 31 * kS;
  j.seg.probes = GlooJob(1, 0, 0, {}, 0).seg.probes;
  for (int r = 0; r < 3; ++r) {
    j.Process(r);
    for (int k = 0; k < (r == 1 ? 5 : 6); ++k) {
      const uint32_t c10d = k % 3 == 2 ? 2 : 0;
      j.Call(r, c10d, c10d + 1, kS + static_cast<uint64_t>(k) * 100 * kMs, k < 5);
    }
  }
  std::stable_sort(j.seg.data.call_enters.begin(), j.seg.data.call_enters.end(),
                   [](const auto& a, const auto& b) { return a.ts_ns < b.ts_ns; });
  auto& rows = j.seg.data.call_enters;
  rows.erase(std::find_if(rows.begin(), rows.end(), [](const auto& e) { return e.tid == 110; }));  // rank 0's 1st
  j.seg.attached_ns = kS + 50 * kMs;
  AddStuckState(&j, 1, kS + 450 * kMs);
  const DiagnosisResult r = Analyse(j);
  ASSERT_FALSE(r.findings.empty());
  EXPECT_EQ(r.findings[0].cause, Cause::kHang);
  ASSERT_TRUE(r.findings[0].rank);
  EXPECT_EQ(*r.findings[0].rank, RankNumber(1)) << r.findings[0].summary;
  EXPECT_EQ(Stall(r.findings[0]).waiting_ranks, (std::vector<int32_t>{0, 2}));
  EXPECT_EQ(Stall(r.findings[0]).missing_ranks, (std::vector<int32_t>{1}));
}

TEST(Stall, AnAmbiguousAlignmentJudgesNoMismatch) {
  // Rank 1 completes every collective half a gap after rank 0: shifted by 0 or by one, its completions line
  // up equally badly, so its numbers are not certain and ops at one number are not compared.
  const Job j = AttachedJob(5 * kMs);
  RecordedRun run;
  run.segments.push_back(j.seg);
  EXPECT_FALSE(model::BuildCollectiveProgress(DecodeRecordedCalls(run)).numbers_certain);
  for (const Finding& f : Analyse(j).findings) EXPECT_NE(f.cause, Cause::kCollectiveMismatch) << f.summary;
}

TEST(Stall, TheWavefrontFollowsAnotherCommunicator) {
  // pg0 = ranks 0-3, pg1 = ranks 2, 3 (used second). Ranks 0, 1 wait in pg0 #1; rank 2 waits in pg1 #1 for
  // rank 3, which is stuck and entered neither.
  Job j;
  j.seg.launched = true;
  j.seg.end_ns = 30 * kS;
  j.seg.probes = GlooJob(1, 0, 0, {}, 0).seg.probes;
  for (int r = 0; r < 4; ++r) {
    j.Process(r);
    j.Call(r, 0, 1, kS, true, 0xa0);
    if (r >= 2) j.Call(r, 0, 1, kS + 10 * kMs, true, 0xb0);
  }
  j.Call(0, 0, 1, kS + 100 * kMs, false, 0xa0);
  j.Call(1, 0, 1, kS + 100 * kMs, false, 0xa0);
  j.Call(2, 0, 1, kS + 100 * kMs, false, 0xb0);
  const DiagnosisResult r = Analyse(j);
  ASSERT_FALSE(r.findings.empty());
  const StallEvidence& e = Stall(r.findings[0]);
  EXPECT_EQ(e.communicator, "pg0");
  EXPECT_EQ(e.waiting_ranks, (std::vector<int32_t>{0, 1}));
  EXPECT_EQ(e.missing_ranks, (std::vector<int32_t>{2, 3}));
  ASSERT_EQ(e.wavefront.size(), 1u);
  EXPECT_EQ(e.wavefront[0], "rank 2 waits in all_reduce (pg1 #1) for rank(s) 3");
}

TEST(Stall, NcclKernelNotStartedAndCountMismatch) {
  Job j;
  j.seg.launched = true;
  j.seg.end_ns = 30 * kS;
  j.seg.probes = {{"ncclProfiler", "all_reduce", ProbeKind::kCollectiveDeviceEnqueue, "nccl"},
                  {"ncclProfiler", "all_reduce", ProbeKind::kCollectiveDeviceStart, "nccl"},
                  {"ncclProfiler", "all_reduce", ProbeKind::kCollectiveDeviceDone, "nccl"}};
  const uint64_t comm = 0xC0FFEE0012345678ull;
  for (int r = 0; r < 3; ++r) {
    j.Process(r);
    const uint32_t pid = 10 + static_cast<uint32_t>(r);
    for (uint64_t k = 0; k < 3; ++k) {
      const uint64_t t = kS + k * 10 * kMs;
      j.seg.data.call_enters.push_back({pid, pid, 0, t, comm, 1024});
      if (k == 2 && r == 1) continue;  // rank 1's kernel #2 never starts
      j.seg.data.call_enters.push_back({pid, pid, 1, t + kMs, comm, 1024});
      if (k < 2) j.seg.data.call_enters.push_back({pid, pid, 2, t + 2 * kMs, comm, 1024});
    }
  }
  DiagnosisResult r = Analyse(j);
  ASSERT_EQ(r.findings.size(), 1u);
  EXPECT_EQ(r.findings[0].cause, Cause::kHang);
  EXPECT_EQ(*r.findings[0].rank, RankNumber(1));
  const StallEvidence& e = Stall(r.findings[0]);
  EXPECT_EQ(e.communicator, "c0ffee0012345678");
  EXPECT_EQ(e.seq, 2);
  EXPECT_EQ(e.missing[0].state.kind, RankStateKind::kKernelNotStarted) << e.missing[0].state;
  // The same job where rank 2 called #1 with 512 elements: a mismatch first.
  for (auto& row : j.seg.data.call_enters)
    if (row.tgid == 12 && row.ts_ns >= kS + 10 * kMs && row.ts_ns < kS + 20 * kMs) row.count = 512;
  r = Analyse(j);
  ASSERT_EQ(r.findings.size(), 2u);
  EXPECT_EQ(r.findings[0].cause, Cause::kCollectiveMismatch);
  EXPECT_EQ(Stall(r.findings[0]).seq, 1);
}

TEST(Stall, WithoutCompletionsOnlyARankBehindIsAStall) {
  // NCCL's API alone (calls return at launch): every rank's last call is the same one and the job then idles
  // 20 s (an evaluation, a teardown): no stall. Rank 1 one call behind the others: a stall naming it.
  Job j = NcclApiJob(0);
  EXPECT_TRUE(Analyse(j).findings.empty());
  std::erase_if(j.seg.data.call_enters, [](const auto& e) { return e.tgid == 11 && e.ts_ns == kS + 400 * kMs; });
  const DiagnosisResult r = Analyse(j);
  ASSERT_EQ(r.findings.size(), 1u);
  EXPECT_EQ(*r.findings[0].rank, RankNumber(1));
  EXPECT_EQ(Stall(r.findings[0]).seq, 4);
}

TEST(Stall, BlockedStates) {
  EXPECT_EQ(StateText(BlockedState("202", "", 1)), "blocked on a lock (futex)");
  EXPECT_EQ(StateText(BlockedState("0", "pipe_read", 1)), "waiting for I/O (read)");
  EXPECT_EQ(StateText(BlockedState("230", "", 1)), "sleeping (clock_nanosleep)");
  EXPECT_EQ(StateText(BlockedState("0", "", 2)), "in uninterruptible I/O (D state)");
  EXPECT_EQ(StateText(BlockedState("running", "futex_wait_queue", 1)), "blocked on a lock (futex)");
  EXPECT_EQ(StateText(BlockedState("", "", 1)), "sleeping (off CPU)");
}

// Serve's judgement over agents' in-flight states (issue 22): rank 1 stopped before all_reduce; ranks 2 and 3
// wait inside it; rank 0 waits in it too, but its recorder attached after it entered, so its recording saw
// none of its collectives — its main thread in torch.distributed's all_reduce says where it is. Only rank 1
// is named; a rank whose recording saw collectives and that is not inside one stays missing.
TEST(Stall, ARankWaitingInTheCollectiveApiBeforeItsRecorderAttachedIsNotMissing) {
  const RankState kLocked{RankStateKind::kLock, "futex", ""};
  auto state = [](int32_t rank, bool inside, int64_t seq, double progress, std::optional<RankState> st,
                  std::string frame) {
    RankInflight r;
    r.rank = rank;
    r.inside = inside;
    r.comm = inside ? "pg0" : "";
    r.op = inside ? "all_reduce" : "";
    r.seq = seq;
    r.since_unix = inside ? 100 : 0;
    r.last_progress_unix = progress;
    r.threshold_s = 5;
    r.world_size = 4;
    r.state = std::move(st);
    r.frame = std::move(frame);
    return r;
  };
  std::vector<RankInflight> ranks = {state(0, false, -1, 0, kLocked, "Python all_reduce (distributed_c10d.py:1472)"),
                                     state(1, false, -1, 0, kLocked, "Python rank_main (fault_job.py:60)"),
                                     state(2, true, 0, 0, std::nullopt, ""), state(3, true, 0, 0, std::nullopt, "")};
  std::vector<Finding> f = JudgeInflight(ranks, 112);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].cause, Cause::kHang);
  EXPECT_EQ(f[0].rank, RankNumber(1));
  const auto& e = std::get<StallEvidence>(f[0].evidence.kind);
  EXPECT_EQ(e.waiting_ranks, (std::vector<int32_t>{0, 2, 3}));
  EXPECT_EQ(e.missing_ranks, (std::vector<int32_t>{1}));
  // In torch.distributed's broadcast while the others wait in all_reduce: another collective, it is missing.
  ranks[0].frame = "Python broadcast (distributed_c10d.py:1400)";
  EXPECT_EQ(JudgeInflight(ranks, 112).size(), 2u);
  ranks[0].frame = "Python all_reduce (distributed_c10d.py:1472)";
  // The same rank 0, but its recording saw it complete collectives: not inside one now, it is missing too.
  ranks[0].seq = 41;
  ranks[0].last_progress_unix = 99;
  f = JudgeInflight(ranks, 112);
  ASSERT_EQ(f.size(), 2u);
  EXPECT_EQ(std::get<StallEvidence>(f[0].evidence.kind).missing_ranks, (std::vector<int32_t>{0, 1}));
}

// The layer of a missing rank's hang finding, by its state's kind, for every kind: the end of its process
// (host) and a kernel that never started (GPU) before data loading on its stack; then the OS for an I/O or
// uninterruptible wait, none when nothing was observed, else the CPU, or Python when a Python stack was seen.
TEST(Stall, TheLayerOfAMissingRankFollowsItsStatesKind) {
  using K = RankStateKind;
  const std::map<K, Layer> by_kind = {{K::kExited, Layer::kHost},        {K::kExitedNormally, Layer::kHost},
                                      {K::kKilled, Layer::kHost},        {K::kKernelNotStarted, Layer::kGpu},
                                      {K::kUninterruptible, Layer::kOs}, {K::kIoWait, Layer::kOs},
                                      {K::kNotObserved, Layer::kNone}};
  for (size_t i = 0; i < kRankStateKinds; ++i) {
    StalledRankState st;
    st.state.kind = static_cast<K>(i);
    auto it = by_kind.find(st.state.kind);
    const Layer bare = it != by_kind.end() ? it->second : Layer::kCpu;
    EXPECT_EQ(StalledRankLayer(st), bare) << st.state.kind;
    st.python_stack = {"Python train (train.py:10)"};
    EXPECT_EQ(StalledRankLayer(st), bare == Layer::kCpu ? Layer::kPython : bare) << st.state.kind << " with a stack";
    st.data_loading = true;
    const bool before_data = bare == Layer::kHost || bare == Layer::kGpu;
    EXPECT_EQ(StalledRankLayer(st), before_data ? bare : Layer::kData) << st.state.kind << " loading data";
  }
}

// Serve reports a stall across nodes once each missing rank's whereabouts arrived: not while a rank is not
// reported by any agent, or reported without where it is; a rank elsewhere (inside another collective, or with
// its agent's state) has them.
TEST(Stall, WhereaboutsArriveWithEachMissingRanksState) {
  auto rank = [](int32_t r, bool inside, std::optional<RankState> st) {
    RankInflight in;
    in.rank = r;
    in.inside = inside;
    in.comm = inside ? "pg0" : "";
    in.op = inside ? "all_reduce" : "";
    in.seq = inside ? 7 : 6;
    in.since_unix = inside ? 100 : 0;
    in.last_progress_unix = 99;
    in.threshold_s = 5;
    in.world_size = 3;
    in.state = std::move(st);
    return in;
  };
  const RankState lock{RankStateKind::kLock, "futex", ""};
  auto evidence = [](const std::vector<RankInflight>& ranks) {
    const std::vector<Finding> f = JudgeInflight(ranks, 112);
    EXPECT_FALSE(f.empty());
    return f.empty() ? StallEvidence{} : std::get<StallEvidence>(f[0].evidence.kind);
  };
  StallEvidence e = evidence({rank(0, true, std::nullopt), rank(1, true, std::nullopt), rank(2, false, lock)});
  ASSERT_EQ(e.missing.size(), 1u);
  EXPECT_EQ(e.missing[0].state, lock);
  EXPECT_EQ(e.missing[0].observed_by, Observer::kAgent);
  EXPECT_TRUE(WhereaboutsArrived(e));
  e = evidence({rank(0, true, std::nullopt), rank(1, true, std::nullopt), rank(2, false, std::nullopt)});
  EXPECT_EQ(e.missing[0].state.kind, RankStateKind::kWhereaboutsNotReported);
  EXPECT_FALSE(WhereaboutsArrived(e));
  e = evidence({rank(0, true, std::nullopt), rank(1, true, std::nullopt)});  // rank 2 of 3: no entry
  EXPECT_EQ(e.missing[0].state.kind, RankStateKind::kNotReported);
  EXPECT_FALSE(WhereaboutsArrived(e));
  RankInflight elsewhere = rank(2, true, std::nullopt);
  elsewhere.comm = "pg1";
  elsewhere.op = "broadcast";
  e = evidence({rank(0, true, std::nullopt), rank(1, true, std::nullopt), elsewhere});
  EXPECT_EQ(e.missing[0].state, (RankState{RankStateKind::kInsideAnother, "broadcast", "pg1"}));
  EXPECT_TRUE(WhereaboutsArrived(e));
}

}  // namespace
}  // namespace strata::diagnosis
