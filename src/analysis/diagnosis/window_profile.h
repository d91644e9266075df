// WindowProfile: what one rank did during a time window, for comparing a straggler with its peers
// (KAIR's blame and SysOM-AI's layered differential diagnosis, from traces alone).
//  - On the training loop's thread (the ProfilerStep's track) time is split by self time: data loading
//    (ops named like DataLoader / __next__, counted whole), communication ops (gloo:/nccl:/c10d::, whole),
//    compute (self time of framework ops), waiting for the device (CUDA synchronization calls such as
//    cudaStreamSynchronize, whole: the host blocked, not working; left out of the per-op totals), and host gap (self
//    time of annotations such as ProfilerStep or user record_function ranges, plus time covered by nothing) — time the
//    host spent outside any op.
//  - On GPU streams: device busy (union of kernels) and device idle within the window.
//  - Per op name: total duration of that name's slices in the window (all depths).
// Invariant: compute + data + comm + wait + host_gap == window length (main thread).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "analysis/diagnosis/contract_vocabulary.h"
#include "store/trace_store.h"

namespace strata::diagnosis {

struct WindowProfile {
  double compute_ns = 0, data_ns = 0, comm_ns = 0, wait_ns = 0, host_gap_ns = 0;
  double device_busy_ns = 0, device_idle_ns = 0, launch_ns = 0;
  std::map<StringId, double> op_ns;  // name -> total duration in the window
};

/// True for a host op that is the rank's own work by the split above (framework compute: not data
/// loading, communication, device waits or annotations).
bool IsHostComputeOp(std::string_view name, std::string_view category);

/// The culprit op of a finding of `cause`: the op with the largest excess over the peers (`op_excess`,
/// largest first) whose class is the cause's: data-loading ops for a dataloader_stall, none for a host_stall
/// (its time is outside any op), else the rank's own work (not data loading, communication or device waits:
/// a slow-compute finding never names a DataLoader wait). Container slices (whole steps, on-CPU intervals)
/// are never culprits. The one rule for every pass that names a culprit op.
std::optional<StringId> CulpritOp(const StringPool& strings, const std::vector<std::pair<StringId, double>>& op_excess,
                                  Cause cause);

/// Per-rank track index: slices of each track sorted by start (longer first on ties).
class TrackIndex {
 public:
  TrackIndex(const TraceStore& store, const std::vector<SliceRows>& rows_by_rank);
  const SliceRows& Rows(TrackId track) const;
  const std::vector<TrackId>& DeviceTracks(size_t rank) const { return device_tracks_[rank]; }

 private:
  std::vector<SliceRows> rows_;  // by track
  std::vector<std::vector<TrackId>> device_tracks_;
};

/// Profiles [start, end) (rank clock) of `rank` with `main_track` as the training loop's thread.
WindowProfile ProfileWindow(const TraceStore& store, const TrackIndex& index, size_t rank, TrackId main_track,
                            int64_t start, int64_t end);

}  // namespace strata::diagnosis
