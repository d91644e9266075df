// The closed vocabularies of a diagnosis (DESIGN.md "Cause vocabulary" and "Output contract",
// spec/diagnosis.schema.json): the cause of a finding, the layer it sits in, the verdict (status) of the
// result, the source of a finding's evidence ("from"), a live detection's deciding score and persistence, as
// enums that analysis sets and compares; reports, the CLI and the agent print them by name.
// Invariants: every enumerator has exactly one name, the contract's; each Parse* inverts its names
// (tests/unit/contract_vocabulary_test.cc checks both against the schema's enums).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <ostream>
#include <string_view>

namespace strata::diagnosis {

enum class Cause {
  kSlowCompute,
  kSlowCommunication,
  kNetworkContention,
  kPciePressure,
  kThermalThrottling,
  kCpuContention,
  kCpuThrottling,
  kMemoryPressure,
  kIoStall,
  kDataloaderStall,
  kGcPause,
  kHostStall,           // uncovered host-side gap, cause not known
  kLaunchOverhead,      // device idle waiting for the host
  kStageImbalance,      // a pipeline stage is slower
  kDataImbalance,       // per-step load varies across ranks, no single bad worker
  kHang,                // a rank stopped: its peers wait in a collective it never entered
  kCollectiveMismatch,  // ranks at the same sequence number of a communicator called different ops or sizes
  kUnknown,
};

// Where a finding sits; kNone (rendered null) when no cause was named.
enum class Layer { kNone, kGpu, kComm, kCpu, kPython, kOs, kData, kHost };

inline constexpr std::array<std::string_view, 18> kCauseNames = {"slow_compute",
                                                                 "slow_communication",
                                                                 "network_contention",
                                                                 "pcie_pressure",
                                                                 "thermal_throttling",
                                                                 "cpu_contention",
                                                                 "cpu_throttling",
                                                                 "memory_pressure",
                                                                 "io_stall",
                                                                 "dataloader_stall",
                                                                 "gc_pause",
                                                                 "host_stall",
                                                                 "launch_overhead",
                                                                 "stage_imbalance",
                                                                 "data_imbalance",
                                                                 "hang",
                                                                 "collective_mismatch",
                                                                 "unknown"};
inline constexpr std::array<std::string_view, 8> kLayerNames = {"",       "gpu", "comm", "cpu",
                                                                "python", "os",  "data", "host"};

inline std::string_view CauseName(Cause c) { return kCauseNames[static_cast<size_t>(c)]; }
// "" for Layer::kNone.
inline std::string_view LayerName(Layer l) { return kLayerNames[static_cast<size_t>(l)]; }

/// The enumerator whose name (in `names`, indexed by the enumerator's value) is `name`, or none: the one
/// inverse of every name table of a closed vocabulary.
template <typename Enum, size_t N>
std::optional<Enum> ParseByName(const std::array<std::string_view, N>& names, std::string_view name) {
  for (size_t i = 0; i < N; ++i)
    if (names[i] == name) return static_cast<Enum>(i);
  return std::nullopt;
}

inline std::optional<Cause> ParseCause(std::string_view name) { return ParseByName<Cause>(kCauseNames, name); }
inline std::optional<Layer> ParseLayer(std::string_view name) { return ParseByName<Layer>(kLayerNames, name); }

// What a diagnosis means, its `status` (verdict.h says when each is given):
//  - kFindings "findings": at least one straggler or finding;
//  - kHealthy "healthy": nothing found and the job was examined;
//  - kInconclusive "inconclusive": everything else (also a result no verdict was given yet).
enum class Verdict { kInconclusive, kFindings, kHealthy };
inline constexpr std::array<std::string_view, 3> kVerdictNames = {"inconclusive", "findings", "healthy"};
inline std::string_view VerdictName(Verdict v) { return kVerdictNames[static_cast<size_t>(v)]; }
inline std::optional<Verdict> ParseVerdict(std::string_view name) { return ParseByName<Verdict>(kVerdictNames, name); }

// How the what-if figures were made; each is named for what it does, as the JSON's whatif.model writes it:
//  - kOpGraphReplay "op-table-dependency-graph": the op table's dependency graph replayed per step with ops
//    restored to their typical time (the OSDI'25 method);
//  - kPhaseReplay "collective-phases": each step replayed in closed form from its compute phases between
//    matched collectives and their transfers;
//  - kBlameSubtraction "blame-subtraction": no replay; the ideal step is the step minus the largest per-rank
//    blame of that step (pipeline / grouped jobs);
//  - kNone "none": too few steps or ranks to estimate anything.
enum class WhatIfModel { kNone, kOpGraphReplay, kPhaseReplay, kBlameSubtraction };
inline constexpr std::array<std::string_view, 4> kWhatIfModelNames = {"none", "op-table-dependency-graph",
                                                                      "collective-phases", "blame-subtraction"};
inline std::string_view WhatIfModelName(WhatIfModel m) { return kWhatIfModelNames[static_cast<size_t>(m)]; }
inline std::optional<WhatIfModel> ParseWhatIfModel(std::string_view name) {
  return ParseByName<WhatIfModel>(kWhatIfModelNames, name);
}

// Which source a straggler's or finding's lateness came from (the evidence's "from"): set on every straggler
// and finding by the pass that found it or, for the rest, by the job's inputs (diagnose.cc); kNone (not
// rendered) until then.
enum class EvidenceSource {
  kNone,
  kProfilerTrace,
  kOpTable,
  kRecorderCollectives,        // the recording's collective calls, timed on the host
  kRecorderDeviceCollectives,  // timed on the device by the NCCL profiler plugin
  kRecorderLink,               // found from the recording alone: a link busier than its peers'
  kRecorderCpu,                // found from the recording alone: CPU wait or throttling beyond its peers'
  kFlightRecorderDumps,
};
inline constexpr std::array<std::string_view, 8> kEvidenceSourceNames = {
    "",
    "profiler trace",
    "op table",
    "recorder: collectives",
    "recorder: collectives on the device (NCCL profiler plugin)",
    "recorder: link",
    "recorder: cpu",
    "Flight Recorder dumps"};
// "" for EvidenceSource::kNone.
inline std::string_view EvidenceSourceName(EvidenceSource s) { return kEvidenceSourceNames[static_cast<size_t>(s)]; }
inline std::optional<EvidenceSource> ParseEvidenceSource(std::string_view name) {
  return ParseByName<EvidenceSource>(kEvidenceSourceNames, name);
}

// A live detection of `strata agent` (analysis/online; the evidence's "score" and "persistence"):
//  - which score decided it: its peers' ("peers") or its own past ("self");
//  - how its lateness behaves over time, from the late steps since its onset (rank_history.h decides it):
//    kLasting "lasting" one run of late steps, still going (or longer than kOnlineOneOffMaxSteps),
//    kRecurring "recurring" late, on time, late again (two or more runs), kOneOff "one_off" one run of at
//    most kOnlineOneOffMaxSteps steps (a pause).
enum class DecidingScore : uint8_t { kPeers, kSelf };
inline constexpr std::array<std::string_view, 2> kDecidingScoreNames = {"peers", "self"};
inline std::string_view DecidingScoreName(DecidingScore s) { return kDecidingScoreNames[static_cast<size_t>(s)]; }
inline std::optional<DecidingScore> ParseDecidingScore(std::string_view name) {
  return ParseByName<DecidingScore>(kDecidingScoreNames, name);
}
enum class Persistence : uint8_t { kLasting, kRecurring, kOneOff };
inline constexpr std::array<std::string_view, 3> kPersistenceNames = {"lasting", "recurring", "one_off"};
inline std::string_view PersistenceName(Persistence p) { return kPersistenceNames[static_cast<size_t>(p)]; }
inline std::optional<Persistence> ParsePersistence(std::string_view name) {
  return ParseByName<Persistence>(kPersistenceNames, name);
}

// For test failure messages.
inline std::ostream& operator<<(std::ostream& os, Cause c) { return os << CauseName(c); }
inline std::ostream& operator<<(std::ostream& os, Layer l) { return os << LayerName(l); }
inline std::ostream& operator<<(std::ostream& os, WhatIfModel m) { return os << WhatIfModelName(m); }
inline std::ostream& operator<<(std::ostream& os, Verdict v) { return os << VerdictName(v); }
inline std::ostream& operator<<(std::ostream& os, EvidenceSource s) { return os << EvidenceSourceName(s); }
inline std::ostream& operator<<(std::ostream& os, DecidingScore s) { return os << DecidingScoreName(s); }
inline std::ostream& operator<<(std::ostream& os, Persistence p) { return os << PersistenceName(p); }

}  // namespace strata::diagnosis
