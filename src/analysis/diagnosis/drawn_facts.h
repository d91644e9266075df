// DrawnFacts: what the reports draw beside the diagnosis, measured by the analysis for them (issue 50: reports
// render the values they are given and compute nothing a diagnosis could disagree with). Diagnose fills it once
// (report_facts.h: MeasureDrawnFacts) from the job's model when DiagnoseOptions::drawn_facts asks for it (else it
// stays empty); the Perfetto export and the HTML view, its only readers, ask for it and only read it.
// Not in the JSON contract.
// Invariants: a rank index is an index of TraceStore::ranks, a step index one of the job model's steps
// (model::StepModel::steps), a matched index one of model::CollectiveModel::matched of the job's model
// (model::BuildJobModel of the same store); every peer figure is the peers' median by the one peer rule
// (PeerMedian, peer_difference.h) over the peers it counts.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "analysis/diagnosis/evidence.h"

namespace strata::diagnosis {

// The HTML timeline's rows at most (the late rank and its peers); the KS matrix's groups at most (one stage:
// stages may add a group each), and the most peers a KS score is a mean of pairwise distances over
// (ks_divergence.h).
inline constexpr size_t kMaxTimelineRows = 16;
inline constexpr size_t kMaxKsGroups = 64;

/// One quantity of the timeline's late rank against its peers' median of it.
struct PeerComparison {
  double late_ns = 0, peers_median_ns = 0;
  size_t peer_count = 0;
};

/// Whom an op table's late rank is drawn beside: a slow stage's ranks (the top finding names ranks but no
/// single rank) against the ranks of the other stages, else a rank against the other dp ranks of its pipeline
/// stage, else against all other ranks.
enum class TimelinePeers { kOtherStages, kSameStage, kAllOthers };

/// The culprit op's instance (its order within the step) on the late rank that exceeds its peers' median of
/// the same instance most, with its duration against that median.
struct OpChain {
  size_t index = 0;
  PeerComparison duration;
};

/// The step the HTML timeline draws and the late rank's story in it.
struct TimelineFacts {
  // The step whose busy time (op tables: compute time) spreads most over the ranks (max − median).
  size_t step_index = 0;
  // The top finding's rank, else the first straggler, else the busiest in the step of the top finding's ranks;
  // none when the diagnosis names no rank (timeline_facts.h).
  std::optional<size_t> late_rank;
  // Traces: the collective of the step the late rank arrived latest at (DrawnFacts::latest_arrival), and its
  // time outside collectives in the step against the other ranks of its stage (stages known) or all others.
  std::optional<size_t> chain_collective;
  std::optional<PeerComparison> busy_vs_peers;
  // Op tables: the peers drawn beside the late rank (all of them up to the timeline's rows for a stage's peers,
  // else the fastest, median and slowest by compute time in the step), the culprit op type (the top finding's
  // op when it names a known op type, else the compute op type the late rank exceeds those peers' median most
  // by in the step) and its chain instance.
  TimelinePeers peer_kind = TimelinePeers::kAllOthers;
  std::vector<size_t> peers;
  std::optional<std::string> culprit_op;
  std::optional<OpChain> chain_op;
};

/// The samples KAIR's KS divergence compares, per rank: op tables: its compute op durations; traces of the
/// data-parallel path: its own-work phases between and after its collective calls, the samples the straggler
/// localization scores (straggler.h, OwnWorkSamples); traces compared with role peers: its time outside
/// collectives per step (busy_ns).
enum class KsSample { kComputeOpDurations, kOwnWorkPhases, kStepBusy };

/// Whom a rank's KS score compares it with (ks_divergence.h): all ranks, or the ranks of its pipeline stage.
enum class KsPeers { kAllRanks, kStagePeers };

/// KAIR's KS divergence between ranks (ks_divergence.h has the rules): each rank's score, the KS distance
/// between groups of ranks (of at most ceil(ranks / kMaxKsGroups) ranks of one stage), each group's lead and
/// the groups ranked by their lead's score.
struct KsDivergence {
  KsSample of = KsSample::kComputeOpDurations;
  KsPeers peers = KsPeers::kAllRanks;
  bool pooled = false;                      // some rank had more than kMaxKsGroups peers: scored against the pool
  std::vector<std::vector<size_t>> groups;  // rank indices per group, ascending
  std::vector<std::vector<double>> matrix;  // [group][group]
  std::vector<double> score;                // per rank index
  std::vector<size_t> lead;                 // per group: a rank index of the group
  std::vector<size_t> ranking;              // group indices, highest lead score first
};

/// The layers panel: the first finding with a recording's layer comparison (FindingEvidence::cross_layer), and
/// its peers' median of every layer metric (cross_layer.h, PeersMedianMetrics), what the rank was compared with.
struct LayersFacts {
  size_t finding = 0;  // index in DiagnosisResult::findings
  RankLayerMetrics peers_median;
};

struct DrawnFacts {
  // Per rank number (the findings' ranks and the stragglers) and step: the matched collective at which the rank
  // arrived latest against its peers' median arrival, on the diagnosis's clock offsets (clock_offsets_us).
  std::map<int32_t, std::map<int64_t, size_t>> latest_arrival;
  // Per rank index and step index: traces: the rank's time in the step outside its collective calls; op tables:
  // its compute time (compute ops only). NaN where it lacks the step; empty when not measured.
  std::vector<std::vector<double>> busy_ns;
  bool busy_is_compute = false;  // busy_ns holds op-table compute times
  // Pipeline stage per rank index when the job has several (op-table column, else send/recv chains), else empty.
  std::vector<int32_t> stages;
  std::optional<TimelineFacts> timeline;
  std::optional<KsDivergence> ks;
  std::optional<LayersFacts> layers;
};

}  // namespace strata::diagnosis
