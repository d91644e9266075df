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
  kHostStall,       // uncovered host-side gap, cause not known
  kLaunchOverhead,  // device idle waiting for the host
  kStageImbalance,  // a pipeline stage is slower
  kDataImbalance,   // per-step load varies across ranks, no single bad worker
  kUnknown,
};

// Where a finding sits; kNone (rendered null) when no cause was named.
enum class Layer { kNone, kGpu, kComm, kCpu, kPython, kOs, kData, kHost };

inline constexpr std::array<std::string_view, 16> kCauseNames = {
    "slow_compute",       "slow_communication", "network_contention", "pcie_pressure",
    "thermal_throttling", "cpu_contention",     "cpu_throttling",     "memory_pressure",
    "io_stall",           "dataloader_stall",   "gc_pause",           "host_stall",
    "launch_overhead",    "stage_imbalance",    "data_imbalance",     "unknown"};
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

// For test failure messages.
inline std::ostream& operator<<(std::ostream& os, Cause c) { return os << CauseName(c); }
inline std::ostream& operator<<(std::ostream& os, Layer l) { return os << LayerName(l); }

}  // namespace strata::diagnosis
