// HostCounterSampler: runs every reader once per sample (see host_counters.h).
#include "recorder/host/host_counters.h"

#include "recorder/host/cgroup_reader.h"
#include "recorder/host/cpu_stat_reader.h"
#include "recorder/host/diskstats_reader.h"
#include "recorder/host/infiniband_reader.h"
#include "recorder/host/net_dev_reader.h"
#include "recorder/host/nvml_reader.h"
#include "recorder/host/pressure_reader.h"
#include "recorder/host/process_reader.h"

namespace strata::recorder {

HostCounterSampler::HostCounterSampler(Options options)
    : options_(std::move(options)),
      cpu_(std::make_unique<CpuStatReader>(options_.proc_root)),
      pressure_(std::make_unique<PressureReader>(options_.proc_root)),
      processes_(std::make_unique<ProcessReader>(options_.proc_root, options_.thread_status_every)),
      cgroups_(std::make_unique<CgroupReader>(options_.proc_root, options_.sys_root)),
      net_(std::make_unique<NetDevReader>(options_.proc_root, options_.links)),
      disks_(std::make_unique<DiskstatsReader>(options_.proc_root, options_.sys_root)),
      infiniband_(std::make_unique<InfinibandReader>(options_.sys_root)) {}

HostCounterSampler::~HostCounterSampler() = default;

void HostCounterSampler::SetPids(const std::vector<int>& pids) {
  std::lock_guard<std::mutex> lock(pids_mutex_);
  pids_ = pids;
}

void HostCounterSampler::TakePids() {
  std::lock_guard<std::mutex> lock(pids_mutex_);
  if (sampled_pids_ != pids_) {
    sampled_pids_ = pids_;
    processes_->Retain(sampled_pids_);
  }
}

void HostCounterSampler::SampleLinks(uint64_t ts_ns, std::vector<CounterSample>* out) {
  CounterSink sink(&table_, &diag_, ts_ns, out);
  net_->SampleBytes(sink);
}

void HostCounterSampler::Sample(uint64_t ts_ns, std::vector<CounterSample>* out) {
  TakePids();
  ++diag_.stats.samples;
  CounterSink sink(&table_, &diag_, ts_ns, out);
  cpu_->Sample(sink);
  pressure_->Sample(sink);
  cgroups_->BeginSample();
  for (const int pid : sampled_pids_) {
    if (processes_->Sample(pid, sink)) cgroups_->Sample(pid, sink);
  }
  net_->Sample(sampled_pids_, sink);
  disks_->Sample(sink);
  infiniband_->Sample(sink);
  if (options_.nvml && !nvml_tried_) {
    nvml_tried_ = true;
    std::string why;
    nvml_ = NvmlReader::Load(options_.nvml_library, &why);
    if (nvml_ && !nvml_->Init(&why)) nvml_.reset();
    if (!nvml_) diag_.WarnOnce("nvml", "NVML not available: " + why + "; GPU counters are off");
  }
  if (nvml_) nvml_->Sample(sink);
}

}  // namespace strata::recorder
