// Cross-layer evidence (DESIGN.md § Diagnosis 8, SysOM-AI's layered differential diagnosis): with data
// from `strata record`, compares each straggler with its peers layer by layer and, when one layer's
// excess explains a real share of the straggler's lateness, names the cause from under the framework:
//   cpu    — run-queue wait while another process held the CPU (cpu_contention); runnable time on an idle
//            CPU and cgroup throttled time (cpu_throttling);
//   python — garbage-collection pauses (gc_pause);
//   os     — uninterruptible sleep with major page faults or memory-cgroup failures (memory_pressure),
//            or without them (io_stall);
//   comm   — traffic on the straggler's network interfaces well above its peers' when each rank has a
//            network namespace of its own (network_contention: someone else is using its link); its
//            link busy far longer than its peers' for the same bytes (slow_communication: a slower link).
// A slow link holds up every rank of a ring collective alike, so the traces may name no straggler at all:
// then a rank whose link was busy well beyond its peers' (kMinRecordedExcess of the time and 1.5x their
// median: a link at 2/3 of their speed or less) is reported as the straggler from the recording alone
// (evidence.from = EvidenceSource::kRecorderLink, "recorder: link"), measured over the traces' steps when
// every rank's recording can be placed on them (else over the training window, whose set-up and other
// iterations dilute what the link costs the steps diagnosed).
// Likewise ranks slowed alike (several ranks on a core another process also uses) hide each other in
// last-arrival blame: ranks whose CPU wait behind other processes or cgroup throttling exceeds their
// peers' by kMinRecordedExcess of the time (and twice their median), and whom the traces show arriving
// twice that share of the step after their peers' median (in 60 % of the steps: persistent; in three or
// more: intermittent, with those steps), are reported as stragglers ("recorder: cpu"); network_contention
// when one of them also carries far more traffic on its own link than its peers.
// Scheduling metrics are those of each process's main thread (it runs the Python training loop and the
// GC; helper threads mostly wait by design), summed over a rank's processes. Metrics are per rank (all
// processes whose RANK is that rank, DataLoader workers included) over the
// rank's training window (first to last collective call seen by the recorder; the process lifetime when
// no collective was probed), as rates per second so that ranks with windows of different length compare.
// It reads the recording only as the store's RecordedLayers (importers/recorded_layers.h decided which thread
// is a rank's main one, who held its CPU and which namespace is its own), never the segment's rows.
// The pass judges and does not edit: JudgeWithRecording reads the traces' result and returns a
// RecordingJudgement, which ApplyRecordingJudgement (recording_judgement.h) applies in one step.
// Invariants: a cause is only changed when the straggler's excess over the peers' median is at least
// kMinExplainedShare (cause_choice.h) of its measured lateness share; the evidence (straggler vs peers, per metric) is
// added to the finding either way; without recorder data the result is unchanged.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "analysis/diagnosis/recording_judgement.h"
#include "analysis/diagnosis/result.h"
#include "store/recorded_layers.h"

namespace strata::diagnosis {

// Per-rank metrics over the rank's window, as shares of the window (ns per ns), plus raw counts: RankLayerMetrics
// (evidence.h, where findings hold them).

// Which spans of a rank to measure, per segment (index in RecordedLayers::segments); nullopt = the rank's
// whole training window.
using SpanChooser = std::function<std::optional<std::vector<RecordedSpan>>(size_t segment, int32_t rank)>;

// Metrics of every rank found in the recording.
std::map<int32_t, RankLayerMetrics> MeasureRankLayers(const RecordedLayers& layers, const SpanChooser& spans = {});

/// The peers' reference of every layer metric, as the pass compares a rank with it: each field's median over
/// `peers` by the one peer rule (PeerMedian; an unknown link or traffic, -1, counts as the peers' values are),
/// gc_count rounded to a count, no top_foreign. What the HTML report's layers panel draws (DrawnFacts::layers).
RankLayerMetrics PeersMedianMetrics(const std::vector<std::pair<int32_t, RankLayerMetrics>>& peers);

// What the traces say about each rank's timeline (by rank number, on the rank's own trace clock): its
// step windows and its collectives (start, end), used to put the recording on the trace's clock; and, from the
// data-parallel trace path (DiagnosisResult::lateness_vs_peers_ms), its lateness at collectives against its
// peers' median arrival by step (ms), which confirms ranks slowed alike that last-arrival blame names none of
// (empty when the traces did not measure it).
struct RankTraceTimeline {
  std::map<int64_t, std::pair<int64_t, int64_t>> steps;  // step -> (start, end)
  std::vector<std::pair<int64_t, int64_t>> collectives;
  std::map<int64_t, double> lateness_vs_peers_ms;  // step -> ms
};

// What the recording says about the traces' path product `traces` (its stragglers and their findings, as the
// run's counters refined them), measured
// over each straggler's late steps when the recording can be aligned with every rank's trace (matching
// collectives, model/recording_alignment.h), else over the whole training window (said in the notes):
// each straggler's layer comparison and the cause it names, and the stragglers the traces did not name.
// Changes nothing; an empty judgement without recorder data.
// `transfer_ms_by_step`: the traces' transfer time of each step's collectives (model::TransferMsByStep); when a
// link is named from the recording and the transfers were slow in some steps only, those are its steps (the
// recording's link counters, sampled at 10 Hz, blur a fault of one step into its neighbours).
RecordingJudgement JudgeWithRecording(const RecordedLayers& layers,
                                      const std::map<int32_t, RankTraceTimeline>& timelines, const PathResult& traces,
                                      const std::map<int64_t, double>& transfer_ms_by_step = {});

// JudgeWithRecording, then ApplyRecordingJudgement to the same result.
void ApplyCrossLayerEvidence(const RecordedLayers& layers, const std::map<int32_t, RankTraceTimeline>& timelines,
                             DiagnosisResult* result, const std::map<int64_t, double>& transfer_ms_by_step = {});

}  // namespace strata::diagnosis
