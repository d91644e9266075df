// HostCounterSampler: the recorder's host counters without BPF, read from /proc, /sys and NVML a few
// times a second (10 Hz by default) on the recorder's own thread. Each Sample() reads every source once
// and appends one value per series; series are discovered as they appear (a new thread, interface, GPU)
// and get the next id. Sources (one reader each, see their headers): /proc/stat per CPU, per traced
// process summed over its threads (schedstat, faults, context switches, RSS), the process' cgroups (v1
// and v2), /proc/pressure, network interfaces per network namespace (bytes, link capacity, qdisc queue),
// /proc/diskstats, InfiniBand ports, NVML when a driver is there. Invariants: a file that vanishes (the process exited)
// or does not parse is skipped and counted in stats(), never fatal; each distinct problem is warned once through
// TakeWarnings(); cumulative series never decrease. Not thread-safe except SetPids(), which may be called from any
// thread.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "recorder/host/counter_sink.h"

namespace strata::recorder {

class CpuStatReader;
class PressureReader;
class ProcessReader;
class CgroupReader;
class NetDevReader;
class DiskstatsReader;
class InfinibandReader;
class NvmlReader;

class HostCounterSampler {
 public:
  struct Options {
    std::string proc_root = "/proc";
    std::string sys_root = "/sys";
    bool nvml = true;
    std::string nvml_library = "libnvidia-ml.so.1";
    /// Per-thread /proc status (context switches) is read every this many samples: it costs ~15x schedstat.
    int thread_status_every = 10;
    /// Link capacity and qdisc statistics per network namespace (rtnetlink, ethtool; see link_reader.h).
    bool links = true;
  };

  explicit HostCounterSampler(Options options);
  ~HostCounterSampler();
  HostCounterSampler(const HostCounterSampler&) = delete;
  HostCounterSampler& operator=(const HostCounterSampler&) = delete;

  /// The traced processes (tgids); may change between samples.
  void SetPids(const std::vector<int>& pids);
  /// Reads everything once and appends the values, stamped `ts_ns` (CLOCK_MONOTONIC), to *out.
  void Sample(uint64_t ts_ns, std::vector<CounterSample>* out);
  /// Reads the network interfaces' byte counters only (net.{rx,tx}_bytes; no packets, capacity or queues) of
  /// the namespaces the last Sample() read, for the recorder's faster link sampling between full samples
  /// (RecordOptions::link_hz): one /proc/PID/net/dev read per network namespace. Nothing before a Sample().
  void SampleLinks(uint64_t ts_ns, std::vector<CounterSample>* out);
  /// All series seen so far; a sample's `series` is an index into this.
  const std::vector<CounterSeries>& series() const { return table_.series(); }
  /// Warnings since the last call, each distinct one once per sampler (e.g. "NVML not available: ...").
  std::vector<std::string> TakeWarnings() { return diag_.Take(); }
  const HostCounterStats& stats() const { return diag_.stats; }

 private:
  Options options_;
  SeriesTable table_;
  Diagnostics diag_;
  std::mutex pids_mutex_;
  std::vector<int> pids_;
  std::vector<int> sampled_pids_;
  std::unique_ptr<CpuStatReader> cpu_;
  std::unique_ptr<PressureReader> pressure_;
  std::unique_ptr<ProcessReader> processes_;
  std::unique_ptr<CgroupReader> cgroups_;
  std::unique_ptr<NetDevReader> net_;
  std::unique_ptr<DiskstatsReader> disks_;
  std::unique_ptr<InfinibandReader> infiniband_;
  std::unique_ptr<NvmlReader> nvml_;
  bool nvml_tried_ = false;

  void TakePids();  // the pids SetPids gave last, for this sample
};

}  // namespace strata::recorder
