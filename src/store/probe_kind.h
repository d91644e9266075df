// ProbeKind: what a probed call is, as the recorder and the NCCL profiler plugin write it in a segment's
// "probe" meta records (docs/segment-format.md) and as every reader compares it: one enum, one name each.
// In the store because a recording's index (store/recorded_run.h) keeps each probe's kind; segments/ (above
// the store) writes the names.
// Invariants: names never change meaning once written (they are the file format); ParseProbeKind inverts
// ProbeKindName and maps a name this build does not know to kUnknown (a newer writer's kind is kept apart,
// never mistaken for a known one).
#pragma once

#include <array>
#include <string_view>
#include <utility>

namespace strata {

enum class ProbeKind {
  kCollective,               // a blocking collective algorithm (gloo): entry = arrival, return = completion
  kCollectiveDone,           // c10d's gloo work finished (finishWorkGloo): the completion of the thread's algorithm
  kCollectiveEnqueue,        // a process group's collective call (c10d, NCCL API): host-side cost, issue time
  kGroup,                    // NCCL group start/end
  kCudaSync,                 // a CUDA call that blocks the host until the device catches up
  kCudaLaunch,               // a CUDA launch/copy call: counted only (high rate)
  kCollectiveDevice,         // NCCL profiler plugin: a collective's span on the device
  kCollectiveDeviceEnqueue,  // NCCL profiler plugin, in flight: the collective was enqueued
  kCollectiveDeviceStart,    // NCCL profiler plugin, in flight: its kernel started
  kCollectiveDeviceDone,     // NCCL profiler plugin, in flight: it completed
  kCollectiveBuffer,         // gloo's Context::createUnboundBuffer: a buffer (its byte size the entry's count) that
                             // the thread's next gloo algorithm will move (entry rows only)
  kUnknown,                  // a kind this build does not know
};

inline constexpr std::array<std::pair<ProbeKind, std::string_view>, 12> kProbeKindNames = {{
    {ProbeKind::kCollective, "collective"},
    {ProbeKind::kCollectiveDone, "collective_done"},
    {ProbeKind::kCollectiveEnqueue, "collective_enqueue"},
    {ProbeKind::kGroup, "group"},
    {ProbeKind::kCudaSync, "cuda_sync"},
    {ProbeKind::kCudaLaunch, "cuda_launch"},
    {ProbeKind::kCollectiveDevice, "collective_device"},
    {ProbeKind::kCollectiveDeviceEnqueue, "collective_device_enqueue"},
    {ProbeKind::kCollectiveDeviceStart, "collective_device_start"},
    {ProbeKind::kCollectiveDeviceDone, "collective_device_done"},
    {ProbeKind::kCollectiveBuffer, "collective_buffer"},
    {ProbeKind::kUnknown, "unknown"},
}};

inline constexpr std::string_view ProbeKindName(ProbeKind kind) {
  for (const auto& [k, name] : kProbeKindNames)
    if (k == kind) return name;
  return "unknown";
}

inline constexpr ProbeKind ParseProbeKind(std::string_view name) {
  for (const auto& [k, n] : kProbeKindNames)
    if (n == name) return k;
  return ProbeKind::kUnknown;
}

/// A host-side collective call (a blocking gloo algorithm, or a process group's / NCCL API's enqueue).
inline constexpr bool IsCollectiveCall(ProbeKind kind) {
  return kind == ProbeKind::kCollective || kind == ProbeKind::kCollectiveEnqueue;
}

/// The in-flight states of a device collective (the plugin's call_enter rows).
inline constexpr bool IsDeviceState(ProbeKind kind) {
  return kind == ProbeKind::kCollectiveDeviceEnqueue || kind == ProbeKind::kCollectiveDeviceStart ||
         kind == ProbeKind::kCollectiveDeviceDone;
}

}  // namespace strata
