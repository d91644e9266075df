// CollectiveTracker: turns the NCCL profiler plugin's callbacks into the life of each collective, independently
// of the plugin ABI version (plugin.cc adapts v5/v3): its three states (enqueued when NCCL starts the
// collective event, kernel started at its first kernel channel, done when it completed on the device) and, when
// done, one record with the time its kernel ran on the device.
// A collective (ncclProfileColl) is done when NCCL has stopped it (NCCL does so on the host right after
// enqueueing it, usually before its kernel starts), every kernel channel (ncclProfileKernelCh, its children)
// that started has stopped, and at least as many channels as the collective said it would use (nChannels)
// have stopped, in whatever order NCCL calls them. Its device span is [earliest channel start, latest channel
// stop]. That span is the rank's arrival (the kernel cannot finish before every peer has arrived, so on a late
// peer's GPU the kernel starts last and waits least).
// Each collective gets `seq`, its index among its communicator's collectives (0, 1, ...; NCCL runs a
// communicator's collectives in order, so #k is the same collective on every rank). Point-to-point events
// (ncclProfileP2p) are counted apart: they never take a collective's seq and are never reported.
// Invariants: every handle returned is freed exactly once, when its event is done (or with the tracker); each
// collective goes through the states in order, each state at most once (done exactly once unless the process
// stops first); a collective whose channels never reported a time is done but counted (without_device_time),
// never reported with a made-up span. Thread-safe: NCCL calls from the user's and its proxy threads; the sinks are
// called outside the tracker's lock.
#pragma once

#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

namespace strata::nccl_profiler {

struct CompletedCollective {
  std::string op;         // "all_reduce", ... (NCCL's "AllReduce" in snake case)
  uint64_t comm = 0;      // the communicator's key (NCCL's commHash: equal on every rank)
  uint64_t seq = 0;       // index among the collectives of `comm` in this process (0-based)
  uint64_t nccl_seq = 0;  // NCCL's own seqNumber (per communicator and collective function)
  uint64_t count = 0;
  uint32_t tid = 0;            // the host thread that issued it
  uint64_t host_start_ns = 0;  // CLOCK_MONOTONIC when NCCL started the collective event
  uint64_t start_ns = 0;       // earliest kernel channel start
  uint64_t end_ns = 0;         // latest kernel channel stop
  bool device_clock = false;   // start/end are GPU globaltimer ns (v4+), else CLOCK_MONOTONIC (v3)
};

// What StartCollective needs from NCCL's collective event.
struct CollectiveStart {
  uint64_t comm = 0;
  std::string_view func;  // NCCL's "AllReduce", ...
  uint64_t nccl_seq = 0, count = 0;
  uint32_t tid = 0;
  uint64_t host_ns = 0;
  int channels = 0;  // kernel channels NCCL will report (coll.nChannels); 0 = not known
  bool device_clock = false;
};

enum class CollectiveState { kEnqueued, kKernelStarted, kDone };

struct TrackerStats {
  uint64_t started = 0;              // collectives enqueued
  uint64_t completed = 0;            // done with a device span (reported to the sink)
  uint64_t without_device_time = 0;  // done, but no channel reported both a start and a stop
  uint64_t p2p = 0;                  // point-to-point events (not collectives)
  uint64_t orphan_channels = 0;      // a channel whose parent was not an event this tracker started
};

/// "AllReduce" -> "all_reduce"; empty or non-letter input -> "unknown".
std::string SnakeCaseOp(std::string_view func);

class CollectiveTracker {
 public:
  using Sink = std::function<void(const CompletedCollective&)>;
  // A collective changed state; the record's span fields are final only at kDone.
  using StateSink = std::function<void(CollectiveState, const CompletedCollective&)>;
  explicit CollectiveTracker(Sink sink, StateSink state_sink = nullptr)
      : sink_(std::move(sink)), state_sink_(std::move(state_sink)) {}
  ~CollectiveTracker();  // frees the events still in flight
  CollectiveTracker(const CollectiveTracker&) = delete;
  CollectiveTracker& operator=(const CollectiveTracker&) = delete;

  /// A collective was enqueued; the handle is NCCL's eHandle (and the parentObj of its channels).
  void* StartCollective(const CollectiveStart& start);
  /// A point-to-point operation of `comm` with `channels` kernel channels (0 = not known).
  void* StartP2p(uint64_t comm, int channels);
  /// A kernel channel of `parent` started at `start_ns` (0 = not known yet). Null when `parent` is not an
  /// event of this tracker.
  void* StartChannel(void* parent, uint64_t start_ns);
  /// ncclProfilerKernelChStop on a channel handle.
  void ChannelStopped(void* channel, uint64_t stop_ns);
  /// stopEvent on any handle this tracker returned (null is ignored). `host_stop_ns` (v3, whose channels
  /// carry no device time) is the channel's stop when ChannelStopped gave none; 0 = none.
  void Stop(void* handle, uint64_t host_stop_ns = 0);

  TrackerStats stats() const;

 private:
  struct Event;
  struct CommCounters {
    uint64_t collectives = 0, p2p = 0;
  };
  Event* NewParentLocked(bool collective, uint64_t comm, int channels);
  void StopChannelLocked(Event* channel, uint64_t host_stop_ns, std::unique_lock<std::mutex>& lock);
  void MaybeDoneLocked(Event* parent, std::unique_lock<std::mutex>& lock);
  void Notify(CollectiveState state, const CompletedCollective& record) const;

  mutable std::mutex mutex_;
  Sink sink_;
  StateSink state_sink_;
  TrackerStats stats_;
  std::unordered_map<uint64_t, CommCounters> comms_;
  std::unordered_set<const Event*> live_;  // every event not yet freed: the handles NCCL may still use
};

}  // namespace strata::nccl_profiler
