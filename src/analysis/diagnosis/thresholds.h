// Every threshold of the diagnosis, in one place, with what it decides and why it has its value.
// Frozen before an accuracy measurement: docs/accuracy.md names the commit its figures were measured at;
// a change here makes those figures history (measure again on a fresh suite, first attempts as run).
// Constants of a method (the 0.6745 of the MAD-based z score, HTA's definitions, convergence tolerances,
// caps on the work done) are not thresholds and stay with their method.
// The thresholds of analysis/whatif and analysis/online are here too; the model's (step rhythm, collective
// matching, recording alignment) are in src/model/model_thresholds.h, as the model may not include analysis.
#pragma once

#include <cstddef>

#include <cstdint>
#include "model/model_thresholds.h"

namespace strata::diagnosis::thresholds {

// ---- effect size -------------------------------------------------------------------------------------
/// Default --min-effect: the smallest effect reported, as a share of step time. DESIGN.md suggests 3 %:
/// below it a loaded machine's jitter alone makes ranks late.
inline constexpr double kMinEffect = 0.03;

// ---- persistence of a straggler (lateness_rule.h) ---------------------------------------------------------
/// Late in at least this share of the steps: a persistent straggler, reported with all its late steps.
inline constexpr double kPersistentShare = 0.6;
/// A late step of a rank is "clearly late" when its lateness is at least this share of the rank's worst.
inline constexpr double kClearlyLateShareOfWorst = 0.6;
/// Late in most steps but intermittent after all: the other late steps' mean lateness is under this share
/// of the clearly late steps' mean (a fault switched on in some steps, small after-effects elsewhere).
inline constexpr double kAfterEffectShare = 0.2;
/// A late step right after a clearly late step, late by under this share of it, is that step's after-effect
/// (a queue draining, a stalled rank catching up), not clearly late of its own unless near the rank's worst.
inline constexpr double kAfterEffectOfPreviousShare = 0.5;
/// Late in most steps but intermittent after all: the other late steps are hiccups when none is late by
/// kWellLateMultiple x the minimum effect nor by this share of the cluster's least step, and they are too few to
/// be persistent outside the cluster (the lab's intermittent fault on a busy 2-rank job, tuning seed 90232: 2-4 ms
/// beside steps of 11-14 ms). A rank whose lateness merely varies (steps of 3-6 % of a step) stays persistent.
inline constexpr double kHiccupShareOfCluster = 0.5;
/// An intermittent straggler needs kWellLateSteps clearly late steps late by kWellLateMultiple x the
/// minimum effect, or kVeryLateSteps late by kVeryLateMultiple x: a few moderate hiccups of one rank are
/// what a busy machine produces by itself (clean recorded 4-rank jobs: one rank 3.2 % late in 3 of 6 steps).
inline constexpr double kWellLateMultiple = 2.0;
inline constexpr size_t kWellLateSteps = 3;
inline constexpr double kVeryLateMultiple = 4.0;
inline constexpr size_t kVeryLateSteps = 2;
/// ... or kWellLateSteps clearly late steps late by this multiple of the minimum effect and by the minimum effect
/// more than the job's noise (the peers' worst step): a fault of 6 % of a step in its three steps of nine beside
/// a peer never later than 1 % (lateness_rule.h). The second condition is what keeps a busy machine's hiccups
/// out (one rank 3-4 % late in a few steps, above: its peers are as late elsewhere), and noise under twice the
/// minimum effect must name no one (generated jobs,
/// StragglerGenerated.CleanJobsWithNoiseUnderTwiceTheMinimumEffectNameNoStraggler). 1.5 until 2026-12-06: the
/// lab's intermittent slow compute at 0.08 on 2 ranks (held-out run at 90801bd, seed 32000+) was late 4.9, 3.8
/// and 3.8 % in its three steps and never over 0.4 % elsewhere, its peer never over 0.1 %, and was missed. At
/// 1.2, the 702 kept lab jobs of seeds 27000-32999 (108 clean) change in that one verdict only (bench/rejudge).
inline constexpr double kClusterAboveNoiseMultiple = 1.2;
/// An intermittent straggler must dominate the job's lateness, or the slowest rank merely rotates: most of
/// the late (step, rank) pairs are its own, or its clearly late steps carry this share of all lateness.
inline constexpr double kDominantBlameShare = 2.0 / 3.0;

/// Ranks slowed alike (straggler.h): at least this many ranks persistently late against their peers' median
/// arrival when last-arrival blame names none. One such rank alone is what blame names by itself.
inline constexpr size_t kMinSlowedAlikeRanks = 2;
/// ... each late against its peers' median by at least this multiple of the minimum effect in a step for the
/// step to count. Lateness against the median carries half the peers' arrival spread, which blame (the gap to
/// the second-latest) does not: in a clean 8-rank job on a loaded 2-core machine two ranks were 3-7 % behind
/// the median in most steps while the lab's own measure had them no later than two others.
inline constexpr double kSlowedAlikeLateMultiple = 2.0;

// ---- collectives as the unit (collective_units.h) ---------------------------------------------------------
/// With fewer than 2 steps common to every rank, the ranks are compared over the collectives of the step
/// when it holds at least this many matched on every rank. The persistence rule (60 % of the units) then
/// needs 8 late units of 12: a rank that is last by chance (1 in the rank count) gets there with probability
/// 0.3 % at 4 ranks and 0.002 % at 8 (binomial), before the min-effect floor, which filters jitter besides.
inline constexpr size_t kMinCollectiveUnits = 12;
/// ... and the units (the step up to its last collective) must cover at least this share of the step for the
/// job to be called healthy: the rest (a device wait, the optimizer) was compared with nothing. Seen: a GPU
/// job's CPU side with the device events removed, whose launches take 11 % of the step and whose host then
/// waits for the device.
inline constexpr double kMinCollectiveUnitCoverage = 0.5;

// ---- causes (cause_choice.h) ----------------------------------------------------------------------------
/// A cause is named only when its excess covers at least this share of the lateness it is given for.
inline constexpr double kMinExplainedShare = 0.5;
/// A rank's lateness can have two causes (a fault, and the machine slowing the same rank): a second cause is
/// named, as a finding of its own, when its evidence explains at least this share of the lateness beside the
/// first's (cause_choice.h, NameSecondCause). Half of kMinExplainedShare: the two together then explain at least
/// three quarters. Since 2026-12-06 (issue 47 item 5).
inline constexpr double kMinSecondCauseShare = 0.25;

// ---- data imbalance (data_imbalance.h) ------------------------------------------------------------------
/// Ranks late in turn: a late rank in at least this share of the steps (and at least kMinLateSteps).
inline constexpr double kImbalanceLateStepShare = 0.5;
inline constexpr size_t kMinLateSteps = 2;
/// At least this share of the late pairs must show their ops slower across the board ("broad").
inline constexpr double kImbalanceBroadShare = 0.5;
/// Ops whose peers' median is shorter than this many ns are left out of a rank's op scaling: they are mostly
/// launch and bookkeeping, noisy in ratio.
inline constexpr double kImbalanceMinOpNs = 10e3;

// ---- straggler evidence (straggler.h) ----------------------------------------------------------------------
/// Floor of the MAD of the ranks' KS scores (the KS distance, 0-1, between the durations of a rank's compute
/// segments between collectives and its peers') in their robust z (evidence shown, ks_robust_z): with
/// near-identical ranks the MAD is ~0, and a KS difference of a few hundredths, sampling noise, would read as
/// an outlier.
inline constexpr double kKsMadFloor = 0.02;

// ---- process groups (group_diagnosis.h) --------------------------------------------------------------------
/// A rank's transfer excess in a step is blamed on the rank (its own link) only when its transfers in every
/// group it belongs to are at least this share above the group's usual (10th percentile) transfer: a link
/// shared by one group is slow for all of that group's ranks alike.
inline constexpr double kSlowGroupRatio = 0.2;

// ---- what-if notes (whatif_notes.h) ------------------------------------------------------------------------
/// A phase replay's by_rank figure this share above S gets a note explaining it (below it, rounding and
/// transfer jitter).
inline constexpr double kNoteAboveSlowdownShare = 0.02;

// ---- op tables (op_table_diagnosis.h) --------------------------------------------------------------------
/// A worker stands out when its what-if excess has a robust z above this (DESIGN.md: flag > 3.5).
inline constexpr double kOutlierRobustZ = 3.5;
/// Floor of the MAD of workers' what-if excess (share of step), so identical workers do not all stand out.
inline constexpr double kWorkerExcessMadFloor = 0.01;
/// A stage is imbalanced (not one straggler in it) when its weakest dp rank carries this share of the
/// strongest one's excess.
inline constexpr double kStageUniformShare = 0.5;
/// A step may miss at most this share of its (node, dp rank) ops (and at least one) and still be analysed,
/// the missing ops imputed from the other dp ranks (analysis/whatif/op_table_view.h): rows skipped as bad
/// input leave such holes; more would make the replay rest on invented times.
inline constexpr double kMaxImputedShare = 0.01;
/// Tolerance of the what-if's p2p no-op tests (analysis/whatif/op_graph.h), in ns: clock jitter between the
/// op table's workers.
inline constexpr int64_t kP2pNoopToleranceNs = 50'000;

// ---- op outliers (op_outliers.h) -------------------------------------------------------------------------
/// Floors of the MAD of an op's durations: this share of the median, and this many ns (clock resolution
/// and scheduling noise make tiny MADs meaningless).
inline constexpr double kOpMadFloorShare = 0.05;
inline constexpr double kOpMadFloorNs = 10e3;

// ---- counter tracks (counter_evidence.h) -----------------------------------------------------------------
/// SM clock under this share of the peers' median: thermal_throttling.
inline constexpr double kSmClockThrottledShare = 0.92;
/// A smaller clock deficit (peers' clock / own − 1) of at least this much is thermal_throttling too when it
/// accounts for at least kSmClockExplainsShare of the rank's device slowdown (device-busy excess over the
/// peers' window before arrival, or over their device-busy time on the grouped path): the clock explains the
/// lateness, rather than one slow kernel.
inline constexpr double kSmClockMinDeficit = 0.03;
inline constexpr double kSmClockExplainsShare = 0.5;
/// PCIe bytes above this multiple of the peers' median: pcie_pressure.
inline constexpr double kPcieBusyMultiple = 1.5;
/// NIC bytes above this multiple of the peers' median during slow communication: network_contention.
inline constexpr double kNicBusyMultiple = 1.3;

// ---- recorder evidence (cross_layer.h) -------------------------------------------------------------------
/// A recorded excess over the peers' median that counts without the traces naming the rank (a link busier,
/// or a CPU wait longer, by this share of the time): the localization's minimum effect.
inline constexpr double kMinRecordedExcess = 0.03;
/// A layer metric counts as the rank's own only when it is at least this multiple of its peers' median.
inline constexpr double kRecordedOwnMultiple = 2.0;
/// A link carrying the same collectives' bytes is busy in inverse proportion to its capacity: at 1.5x its
/// peers' busy time it runs at 2/3 of their speed or less (a half-speed link reads 1.9-2x: 2x missed it).
inline constexpr double kSlowerLinkRatio = 1.5;
/// Foreign traffic on a rank's link in a recording: bytes per second (received and sent) of at least
/// kForeignTrafficBytesMultiple x its peers' median plus a floor, kMinRecordedExcess of the link's capacity in one
/// direction when known (traffic filling less of the link cannot slow it by the minimum effect), else
/// kMinForeignTrafficBytesPerS. The ranks of one collective move the same bytes: in the lab's recorded jobs
/// (tuning seeds 97900-98017) a rank the fault did not reach moved at most 1.044x its peers' median and a rank on
/// a slower link 0.98-1.04x, while a link that also carried capped foreign traffic moved 3.2-11x over the training
/// window when persistent and 1.6-5.0x when in 3 steps of 9 (diluted by the 6 without). At 2x plus 1 MB/s, 4 of
/// those intermittent links (4 and 8 ranks, 49 Mbit/s links, 2.2-3.4 MB/s above their peers') read as a slower
/// link (slow_communication), which busy for more bytes at the same capacity they cannot be.
inline constexpr double kForeignTrafficBytesMultiple = 1.5;
inline constexpr double kMinForeignTrafficBytesPerS = 1e6;
/// Lateness against the peers' median arrival that counts for ranks the recording names (arrivals against
/// a median jitter by a few ms on a busy machine): this multiple of kMinRecordedExcess of the step.
inline constexpr double kConfirmedLatenessMultiple = 2.0;
/// A link's steps come from the collectives' slow transfers (cross_layer.cc LinkStepsAndCost) only when they are
/// at least kMinTransferSlowSteps and the link's busy time beyond its peers' fits in them within this multiple of
/// their length (the recorder's 10 Hz counters blur a step's traffic past its end: 1.6-1.8x in the lab's
/// intermittent contention). A link busy for more is busy in more steps than the transfers show: persistent
/// contention whose transfers stood out in one step (held-out run at a1ff5e2: busy 91.5 % beyond its peers in 6
/// steps, the transfer of one step 60 ms above the others) lost its finding to that one step.
inline constexpr double kLinkBusyInItsStepsMultiple = 2.0;
inline constexpr size_t kMinTransferSlowSteps = 2;
/// Major faults per second beyond the peers' that make uninterruptible sleep memory_pressure, not io_stall.
inline constexpr double kMemoryFaultsPerS = 1.0;
/// A rank that waits for a CPU more than its peers, partly behind another process and partly behind its own
/// threads: the peers run the same threads, so the other process displaced them onto the rank's core and the
/// whole excess wait is contention, when the other process visibly holds at least this share of it
/// (recorder_record's lab_cpu_contention on 2026-11-27: 6.2 % of a 14.4 % excess behind the hog, 43 %; the
/// rest was counted as the job's own and the cause stayed slow_compute).
inline constexpr double kForeignShareOfDisplacedWait = 0.25;

// ---- status (status.h) -----------------------------------------------------------------------------------
/// More than this share of an input's events skipped: the result misses their work (not healthy).
inline constexpr double kMaxSkippedShare = 0.01;
/// More than this share of collective calls without counterpart: the comparison rests on too little.
inline constexpr double kMaxUnmatchedShare = 0.25;
/// Clock residual above this share of the median step: the ranks' timelines do not line up.
inline constexpr double kMaxResidualStepShare = 0.10;
/// Epoch-based clocks of two ranks this far apart (ns): two runs, not one (NTP keeps hosts within ms).
inline constexpr double kRunsApartNs = 60e9;
/// Timestamps at or above this are epoch-based and comparable across files (model_thresholds.h: the model
/// decides by it whether ranks share a clock).
inline constexpr double kEpochFloorNs = model::thresholds::kEpochFloorNs;
/// An op table is not called healthy when its what-if loses more than this share of the step (S above 1.25)
/// and no finding explains it (ST with its op types renamed was called healthy at S 1.44, issue 23). Not
/// applied to the phase replay of traces: there a clean job loses what jitter costs, each phase's maximum over
/// the ranks against its mean, which grows with the rank count (S 1.005 and 1.06 on the clean recorded 2- and
/// 4-rank jobs of tests/data, 1.50 on 1,024 generated clean ranks).
inline constexpr double kMaxUnexplainedWaste = 0.20;
/// Op types the what-if does not know carrying more than this share of an op table's time: the replay
/// models too little of the job to judge it (inconclusive, even beside findings).
inline constexpr double kMaxUnknownOpShare = 0.10;

// ---- stalls (stall.h) -------------------------------------------------------------------------------------
/// A job is stalled when no rank has completed a collective for longer than this many of its typical gaps
/// between completions (each rank's 90th percentile gap, the median over ranks: about one step for a DDP
/// job) while some rank is inside one, and for at least kStallFloorS. A DDP step that takes 10x its usual time
/// (a checkpoint save, a long evaluation) is a stall while it lasts; the floor keeps start-up skew and
/// second-long hiccups of fast jobs out. With the agent's 1 s rounds and the recorder's 1 s flushes a
/// stall is reported 5-7 s after the last completion (issue 22: within 10 s). Post-mortem, when every waiting
/// rank exited while inside the collective (the process group's timeout), the floor alone applies: a rank
/// that is gone cannot see a slow step finish.
inline constexpr double kStallGapMultiple = 10.0;
inline constexpr double kStallFloorS = 5.0;
/// Ranks whose processes ended by the same signal within this many seconds of each other were stopped
/// together (a SIGTERM to the job, a scheduler's preemption): not a hang of one rank.
inline constexpr double kStoppedTogetherS = 2.0;
/// Serve names a hang across nodes only once the same ranks have been missing for this long, and each
/// missing rank's whereabouts have arrived (or twice this long has passed): the agents' states reach serve a
/// recorder flush and a publish round (about 1 s each) apart, and a first judgment on half-arrived states
/// named a waiting rank missing (agent_nodes_hang, 2 of 3 runs failing, 2026-11-26).
inline constexpr double kInflightConfirmS = 2.0;
/// The agent keeps a job's flight-recorder chunk past its rotation period while a rank has been inside a
/// collective for longer than this (or a hang is open): a new chunk's recorder attaches to running processes
/// and never sees the entries of the collectives they are stuck in. Steps' collectives last milliseconds to
/// a few hundred; holding a rotation for a slow one costs only a longer chunk.
inline constexpr double kRotationHoldInsideS = 1.0;
/// A missing rank is "on CPU (spinning)" when the recording holds at least this many CPU samples of its
/// thread in the stalled time (rank_whereabouts.h): one sample may be the last moment before it blocked.
inline constexpr size_t kMinSpinSamples = 2;

// ---- online detection (analysis/online) -----------------------------------------------------------------
/// The online detector's minimum effect (OnlineOptions::min_effect) is kMinEffect. Every step is judged,
/// whatever the number of ranks (issue 25; until then steps of fewer than 4 ranks were not judged online).
/// From this many ranks in a group the peer score decides (a rank against the median of its peers); with
/// fewer, one or two peers are no robust reference (on a 2-rank job ordinary jitter opened findings, and
/// with 2 ranks either could be the "late" one), so the self score decides: the rank against its own recent
/// past, counted only when the rank is late against itself beyond what its peers are against themselves
/// (a change they share, a longer batch or an evaluation step, names nobody).
inline constexpr size_t kOnlinePeerMinRanks = 4;
/// A rank is late in a step when its own work (step time − collective wait) exceeds its peers' median by
/// kMinEffect of the step and by this robust z (MAD floored at kOnlineMadFloorShare of the median step).
inline constexpr double kOnlineMinZ = 3.5;
inline constexpr double kOnlineMadFloorShare = 0.005;
/// Persistence: clearly late (by kOnlineClearFactor × the minimum effect) in kOnlinePersist of the last
/// kOnlineWindow steps opens a detection (one noisy step raises nothing; with steps of a second or longer a
/// straggler from step k is detected at step k + 1, shorter steps: kOnlinePersistMinS below); a smaller lateness must
/// hold in kOnlineLongPersist of the last kOnlineLongWindow steps (on a clean 4-rank job, jitter at the minimum effect
/// made 2-of-3 runs of 2.7–3.2 ms on 80 ms steps: 2–3 false detections in 2–3 minutes, 2026-11-26); a lasting detection
/// closes after kOnlineWindow on-time steps (the other persistences hold longer: "Hysteresis" below).
inline constexpr size_t kOnlineWindow = 3;
inline constexpr size_t kOnlinePersist = 2;
inline constexpr double kOnlineClearFactor = 2.0;
inline constexpr size_t kOnlineLongWindow = 10;
inline constexpr size_t kOnlineLongPersist = 8;
/// Persistence in time as well as in steps: each rule's window spans at least this many seconds of the
/// group's usual step (as many steps as that takes, at most the 32 a rank's history keeps), and the same share
/// of its steps must be late (2 of 3, 8 of 10: at 64 ms steps, clearly late in 11 of the last 16 steps, late in
/// 26 of the last 32). Why: a clean 2-rank agent run of 420 s (2026-11-29) opened a `lasting` detection on a
/// 200 ms blip, rank 0 working 4–5 ms more in 3 steps of 64 ms (the run queue behind the test's own serve, redis
/// and Prometheus on 2 cores), against a self baseline whose spread is 0.05 ms; a 600 s run opened one too.
/// A slowdown that lasts is still named within a second or two of its start (the bound: 5 s); a blip of a
/// few steps costs the job nothing worth a page.
inline constexpr double kOnlinePersistMinS = 1.0;
inline constexpr double kOnlineLongPersistMinS = 2.0;
/// Self baseline (analysis/online/rank_history.h, as NVIDIA's "individual" straggler score): the median and
/// MAD of the rank's own work over its last kOnlineSelfWindow on-time steps (32: a median over 32 steps moves
/// only when more than 16 of them change, and 32 steps are seconds to a minute of training); the self score
/// counts from kOnlineSelfMinHistory learned steps (a job's first steps, warm-up included, are learned, not
/// judged: 8 steps give a median that a slow first step or two does not move). The rank is late against
/// itself by the same minimum effect (of its usual step: the median step time of those steps) and robust z
/// (kOnlineMinZ, MAD floored at kOnlineMadFloorShare) as against its peers.
inline constexpr size_t kOnlineSelfWindow = 32;
inline constexpr size_t kOnlineSelfMinHistory = 8;
/// A pause: late (by the deciding score) by at least this many usual steps in one step opens a detection
/// at once (persistence one_off), where other lateness must persist. One step: the rank's step at least
/// doubled, which ordinary jitter does not do (a clean 32-rank stream's one noisy step of 30 % raises
/// nothing, tests/unit/online_detector_test.cc); only once the rank has kOnlineSelfMinHistory steps of
/// history, so a slow first step (warm-up) is no pause.
inline constexpr double kOnlinePauseSteps = 1.0;
/// Recurring: clearly late in kOnlineRecurringRuns separate runs (split by at least two on-time steps), evenly
/// spaced (their starts' intervals within one step of each other), in the last kOnlineRecurringWindow steps
/// opens a detection (persistence recurring): a rank slow every 4th step is named at its fourth slow step,
/// periods up to 7 steps are seen. Four runs, not three: clearly late steps falling at random at a rate p per
/// rank and step make such a pattern about 35 p^4 times per step (p = 1 %: once in 3 million rank-steps;
/// three runs would be 15 p^3, once in 70,000), and two pauses are two one-offs.
inline constexpr size_t kOnlineRecurringRuns = 4;
inline constexpr size_t kOnlineRecurringWindow = 24;
/// Hysteresis (closing): a detection closes after this many consecutive on-time steps: kOnlineWindow for a
/// lasting one (as before issue 25), kOnlineOneOffHold for a one_off (a pause that recurs within 8 steps
/// turns the open detection recurring instead of opening a second one), kOnlineRecurringWindow for a
/// recurring one (a pattern with a period up to 24 steps stays one detection). A run of late steps of at most
/// kOnlineOneOffMaxSteps that ended is a one-off (a pause across a step boundary makes two late steps).
inline constexpr size_t kOnlineOneOffHold = 8;
inline constexpr size_t kOnlineOneOffMaxSteps = 2;
/// Onset (change point): a one-sided CUSUM per rank over the deciding score's robust z (peer z from
/// kOnlinePeerMinRanks ranks; with fewer, its lateness against itself less the median of its peers' against
/// themselves, over its own spread; alone, the self z): S = min(kOnlineCusumMax, max(0, S + min(z,
/// kOnlineCusumMaxStepZ) − kOnlineCusumDrift)). The onset is the step at which S last rose from 0 (the classic CUSUM
/// change-point estimate), or the run's first late step when that is earlier (S was already positive from noise when
/// the change began). The drift 1.5 (half a shift of 3 robust sigmas) keeps S at 0 through ordinary noise (z above 1.5
/// in ~7 % of Gaussian steps, so S rarely stays positive for two) so a change's onset is not dated earlier than it
/// began; one step adds at most 5 − 1.5 and S is capped at 10, so after a 2 s pause S is back at 0 within a few steps.
/// While S is at or above kOnlineCusumAlarm a change is in progress and the self baseline learns nothing (a slowdown
/// creeping in below the late threshold is not learned as the rank's normal).
inline constexpr double kOnlineCusumDrift = 1.5;
inline constexpr double kOnlineCusumMaxStepZ = 5.0;
inline constexpr double kOnlineCusumMax = 10.0;
inline constexpr double kOnlineCusumAlarm = 4.0;
/// Gaussian mixture (eACGM): a (rank, step) point is anomalous when even its nearest component would give
/// a squared Mahalanobis distance this unlikely (chi-square tail with d degrees of freedom): 1 in 10,000
/// normal points, i.e. about one false point per 100 steps of 100 ranks.
inline constexpr double kGmmOutlierP = 1e-4;
/// Mixture components holding less than this share of the points are not "normal" behaviour: EM gladly
/// gives a few outliers a tight component of their own, which would make them likely.
inline constexpr double kGmmMinNormalWeight = 0.05;

// ---- the communication table (analysis/communication.h) ------------------------------------------------
/// A collective instance counts as arrived last by a rank when that rank entered it at least this long after
/// the member before it (by their times in the call, whose ends are common): below it, loopback and NIC
/// jitter order the members by chance (a gloo all_reduce on loopback varies by tens of µs).
inline constexpr int64_t kCommLastArrivalLeadNs = 100'000;

// ---- run diff (analysis/diff/rank_changes.h) --------------------------------------------------------------
/// A rank's change between two runs differs from the rest when it is more than kRankChangeZ scaled MADs and
/// more than kRankChangeShare of the median base step time away from the ranks' median change; judged only
/// with at least kMinRanksToCompare ranks (with 2 there is no robust "rest").
inline constexpr double kRankChangeZ = 3.5;
inline constexpr double kRankChangeShare = 0.05;
inline constexpr size_t kMinRanksToCompare = 3;
/// With exactly 2 ranks there is no rest to compare with: a rank's change differs when, in one op or kernel
/// name (waits in collectives left out: they grow on the rank that waits, not on the one that changed), it
/// is more than kRankChangeShare of the median base step away from zero and the other rank's change in that
/// name is at most this share of it (a matmul added on rank 1 only: +10.4 ms against 0).
inline constexpr double kTwoRankOtherShare = 1.0 / 3.0;

// ---- summary's outlier ranks (analysis/summary_metrics.cc, `strata summary`) --------------------------------
/// A rank is an outlier on a metric beyond kSummaryOutlierMads scaled MADs (1.4826 MAD ~ one standard
/// deviation) of the ranks' median, and only when the difference also matters: kSummaryOutlierMinShare of the
/// median for counts and times, kSummaryOutlierMinPoints percentage points for percentages. Judged only with
/// at least kSummaryOutlierMinRanks ranks having the metric (with 2 there is no robust "rest"). With exactly
/// two ranks having a metric whose larger value is the worse one, the larger is the outlier when it is at
/// least kSummaryOutlierPairRatio times the other's and the difference matters.
inline constexpr double kSummaryOutlierMads = 3.5;
inline constexpr double kSummaryOutlierMinShare = 0.05;
inline constexpr double kSummaryOutlierMinPoints = 2.0;
inline constexpr size_t kSummaryOutlierMinRanks = 3;
inline constexpr double kSummaryOutlierPairRatio = 2.0;

// --- memory across jobs (`strata serve`, agent/node_history.h) ---------------------------------------------
/// A node keeps the record of its last kNodeHistoryJobs jobs (older ones are forgotten: bounded memory).
inline constexpr size_t kNodeHistoryJobs = 16;
/// A node is a suspect machine when a rank of it was named (an online detection opened on it) in at least
/// kSuspectNodeMinShare of its last kSuspectNodeRecentJobs jobs, and it ran at least kSuspectNodeMinJobs of
/// them: "most of its recent jobs" (the words), with too few jobs saying nothing (one slow job on a
/// new node is that job's straggler, not yet a pattern).
inline constexpr size_t kSuspectNodeRecentJobs = 8;
inline constexpr double kSuspectNodeMinShare = 0.5;
inline constexpr size_t kSuspectNodeMinJobs = 3;

}  // namespace strata::diagnosis::thresholds
