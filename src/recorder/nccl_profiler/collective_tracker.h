// CollectiveTracker: turns the NCCL profiler plugin's callbacks into one record per collective with the
// time its kernel ran on the device, independently of the plugin ABI version (plugin.cc adapts v5/v3).
// A collective (ncclProfileColl) is reported when it has been stopped and every kernel channel
// (ncclProfileKernelCh, its children) has stopped too, in whatever order NCCL calls them; its device span
// is [earliest channel start, latest channel stop]. That span is the rank's arrival (the kernel cannot
// finish before every peer has arrived, so on a late peer's GPU the kernel starts last and waits least).
// Invariants: every handle returned is freed exactly once, when its collective is reported or dropped;
// a collective whose channels never reported a time is counted (without_device_time), never reported
// with a made-up span. Thread-safe: NCCL calls from the user's and its proxy threads.
#pragma once

#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <string_view>

namespace strata::nccl_profiler {

struct CompletedCollective {
  std::string op;  // "all_reduce", ... (NCCL's "AllReduce" in snake case)
  uint64_t seq = 0;
  uint64_t count = 0;
  uint32_t tid = 0;            // the host thread that issued it
  uint64_t host_start_ns = 0;  // CLOCK_MONOTONIC when NCCL started the collective event
  uint64_t start_ns = 0;       // earliest kernel channel start
  uint64_t end_ns = 0;         // latest kernel channel stop
  bool device_clock = false;   // start/end are GPU globaltimer ns (v4+), else CLOCK_MONOTONIC (v3)
};

struct TrackerStats {
  uint64_t completed = 0;
  uint64_t without_device_time = 0;  // no channel reported both a start and a stop
  uint64_t orphan_channels = 0;      // a channel whose parent was not a collective this tracker started
};

/// "AllReduce" -> "all_reduce"; empty or non-letter input -> "unknown".
std::string SnakeCaseOp(std::string_view func);

class CollectiveTracker {
 public:
  using Sink = std::function<void(const CompletedCollective&)>;
  explicit CollectiveTracker(Sink sink) : sink_(std::move(sink)) {}
  CollectiveTracker(const CollectiveTracker&) = delete;
  CollectiveTracker& operator=(const CollectiveTracker&) = delete;

  /// A collective started; the handle is NCCL's eHandle (and the parentObj of its channels).
  void* StartCollective(std::string_view func, uint64_t seq, uint64_t count, uint32_t tid, uint64_t host_ns,
                        bool device_clock);
  /// A kernel channel of `parent` started at `start_ns` (0 = not known yet). Null when `parent` is not a
  /// collective of this tracker.
  void* StartChannel(void* parent, uint64_t start_ns);
  /// ncclProfilerKernelChStop on a channel handle.
  void ChannelStopped(void* channel, uint64_t stop_ns);
  /// stopEvent on any handle this tracker returned (null is ignored). `host_stop_ns` (v3, whose channels
  /// carry no device time) is the channel's stop when ChannelStopped gave none; 0 = none.
  void Stop(void* handle, uint64_t host_stop_ns = 0);

  TrackerStats stats() const;

 private:
  struct Event;
  void ReleaseLocked(Event* coll, std::unique_lock<std::mutex>& lock);

  mutable std::mutex mutex_;
  Sink sink_;
  TrackerStats stats_;
};

}  // namespace strata::nccl_profiler
