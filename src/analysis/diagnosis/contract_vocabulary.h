// The closed vocabularies of a diagnosis (DESIGN.md "Cause vocabulary", spec/diagnosis.schema.json): the
// cause of a finding and the layer it sits in, as enums that analysis sets and compares; reports and the
// agent print them by name.
// Invariants: every enumerator has exactly one name, the contract's; ParseCause/ParseLayer invert the names.
#pragma once

#include <array>
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

inline std::optional<Cause> ParseCause(std::string_view name) {
  for (size_t i = 0; i < kCauseNames.size(); ++i)
    if (kCauseNames[i] == name) return static_cast<Cause>(i);
  return std::nullopt;
}
inline std::optional<Layer> ParseLayer(std::string_view name) {
  for (size_t i = 0; i < kLayerNames.size(); ++i)
    if (kLayerNames[i] == name) return static_cast<Layer>(i);
  return std::nullopt;
}

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

// For test failure messages.
inline std::ostream& operator<<(std::ostream& os, Cause c) { return os << CauseName(c); }
inline std::ostream& operator<<(std::ostream& os, Layer l) { return os << LayerName(l); }
inline std::ostream& operator<<(std::ostream& os, WhatIfModel m) { return os << WhatIfModelName(m); }

}  // namespace strata::diagnosis
