// NVML GPU counters through dlopen (see nvml_reader.h).
#include "recorder/host/nvml_reader.h"

#include <dlfcn.h>

namespace strata::recorder {
namespace {

template <typename Fn>
bool Resolve(void* handle, const char* name, Fn* out) {
  *out = reinterpret_cast<Fn>(::dlsym(handle, name));
  return *out != nullptr;
}

constexpr const char* kQueryNames[] = {"utilization",     "SM clock", "throttle reasons",
                                       "PCIe throughput", "power",    "temperature"};

// PCIe throughput calls take ~20 ms each inside NVML: read them every this many samples.
constexpr uint64_t kPcieEvery = 10;

}  // namespace

std::unique_ptr<NvmlReader> NvmlReader::Load(const std::string& library, std::string* why) {
  void* handle = ::dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* error = ::dlerror();
    *why = "cannot load " + library + " (no NVIDIA driver?)" + (error ? std::string(": ") + error : "");
    return nullptr;
  }
  NvmlApi api;
  const bool ok = Resolve(handle, "nvmlInit_v2", &api.init) && Resolve(handle, "nvmlShutdown", &api.shutdown) &&
                  Resolve(handle, "nvmlErrorString", &api.error_string) &&
                  Resolve(handle, "nvmlDeviceGetCount_v2", &api.device_count) &&
                  Resolve(handle, "nvmlDeviceGetHandleByIndex_v2", &api.device_by_index);
  if (!ok) {
    *why = library + " lacks nvmlInit_v2 or the device calls (driver too old?)";
    ::dlclose(handle);
    return nullptr;
  }
  // Per-metric calls are optional: a missing one is the same as a query the GPU does not support.
  Resolve(handle, "nvmlDeviceGetUUID", &api.uuid);
  Resolve(handle, "nvmlDeviceGetUtilizationRates", &api.utilization);
  Resolve(handle, "nvmlDeviceGetClockInfo", &api.clock);
  if (!Resolve(handle, "nvmlDeviceGetCurrentClocksEventReasons", &api.throttle_reasons)) {
    Resolve(handle, "nvmlDeviceGetCurrentClocksThrottleReasons", &api.throttle_reasons);
  }
  Resolve(handle, "nvmlDeviceGetPcieThroughput", &api.pcie_throughput);
  Resolve(handle, "nvmlDeviceGetPowerUsage", &api.power_mw);
  Resolve(handle, "nvmlDeviceGetTemperature", &api.temperature);
  Resolve(handle, "nvmlEventSetCreate", &api.event_set_create);
  Resolve(handle, "nvmlDeviceRegisterEvents", &api.register_events);
  Resolve(handle, "nvmlEventSetWait_v2", &api.event_set_wait);
  Resolve(handle, "nvmlEventSetFree", &api.event_set_free);
  return std::make_unique<NvmlReader>(api, handle);
}

NvmlReader::NvmlReader(const NvmlApi& api, void* library_handle) : api_(api), handle_(library_handle) {}

NvmlReader::~NvmlReader() {
  if (events_ != nullptr && api_.event_set_free != nullptr) api_.event_set_free(events_);
  if (initialized_) api_.shutdown();
  if (handle_ != nullptr) ::dlclose(handle_);
}

bool NvmlReader::Init(std::string* why) {
  const int status = api_.init();
  if (status != NvmlApi::kSuccess) {
    *why = std::string("nvmlInit failed: ") + (api_.error_string ? api_.error_string(status) : "unknown error");
    return false;
  }
  initialized_ = true;
  unsigned int count = 0;
  if (api_.device_count(&count) != NvmlApi::kSuccess) count = 0;
  const bool xid = api_.event_set_create && api_.register_events && api_.event_set_wait && api_.event_set_free &&
                   api_.event_set_create(&events_) == NvmlApi::kSuccess;
  for (unsigned int i = 0; i < count; ++i) {
    Gpu gpu;
    if (api_.device_by_index(i, &gpu.device) != NvmlApi::kSuccess) continue;
    char uuid[96] = {};
    if (api_.uuid && api_.uuid(gpu.device, uuid, sizeof(uuid) - 1) == NvmlApi::kSuccess) gpu.uuid = uuid;
    if (xid) api_.register_events(gpu.device, NvmlApi::kEventXidCritical, events_);  // unsupported: no events
    gpus_.push_back(std::move(gpu));
  }
  return true;
}

bool NvmlReader::Check(int status, Gpu& gpu, int index, Query query, CounterSink& sink) {
  if (status == NvmlApi::kSuccess) return true;
  if (status == NvmlApi::kErrorNotSupported) {
    gpu.supported[query] = false;
    sink.diag().WarnOnce("nvml:" + std::to_string(index) + ":" + kQueryNames[query],
                         "host counters: GPU " + std::to_string(index) + " does not report " + kQueryNames[query]);
  }
  return false;
}

void NvmlReader::PollXid() {
  if (events_ == nullptr) return;
  NvmlApi::EventData data{};
  // Timeout 0: take what is queued, never wait.
  for (int i = 0; i < 64 && api_.event_set_wait(events_, &data, 0) == NvmlApi::kSuccess; ++i) {
    if ((data.event_type & NvmlApi::kEventXidCritical) == 0) continue;
    for (Gpu& gpu : gpus_) {
      if (gpu.device == data.device) {
        ++gpu.xid_errors;
        gpu.last_xid = static_cast<double>(data.event_data);
      }
    }
  }
}

void NvmlReader::Sample(CounterSink& sink) {
  if (!initialized_) return;
  PollXid();
  const bool pcie_now = samples_++ % kPcieEvery == 0;
  for (size_t i = 0; i < gpus_.size(); ++i) {
    Gpu& gpu = gpus_[i];
    const int index = static_cast<int>(i);
    auto emit = [&](std::string_view name, std::string_view unit, bool cumulative, double value) {
      sink.Emit({.name = name, .index = index, .label = gpu.uuid, .unit = unit, .cumulative = cumulative}, value);
    };
    unsigned int value = 0;
    if (api_.utilization && gpu.supported[kUtilization]) {
      NvmlApi::Utilization util{};
      if (Check(api_.utilization(gpu.device, &util), gpu, index, kUtilization, sink)) {
        emit("gpu.util_pct", "%", false, util.gpu);
        emit("gpu.mem_util_pct", "%", false, util.memory);
      }
    }
    if (api_.clock && gpu.supported[kClock] &&
        Check(api_.clock(gpu.device, NvmlApi::kClockSm, &value), gpu, index, kClock, sink)) {
      emit("gpu.sm_clock_mhz", "MHz", false, value);
    }
    unsigned long long reasons = 0;
    if (api_.throttle_reasons && gpu.supported[kThrottle] &&
        Check(api_.throttle_reasons(gpu.device, &reasons), gpu, index, kThrottle, sink)) {
      emit("gpu.throttle_reasons", "mask", false, static_cast<double>(reasons));
    }
    if (pcie_now && api_.pcie_throughput && gpu.supported[kPcie]) {
      unsigned int tx = 0, rx = 0;
      if (Check(api_.pcie_throughput(gpu.device, NvmlApi::kPcieTxBytes, &tx), gpu, index, kPcie, sink) &&
          Check(api_.pcie_throughput(gpu.device, NvmlApi::kPcieRxBytes, &rx), gpu, index, kPcie, sink)) {
        emit("gpu.pcie_tx_bytes_per_s", "bytes/s", false, tx * 1024.0);
        emit("gpu.pcie_rx_bytes_per_s", "bytes/s", false, rx * 1024.0);
      }
    }
    if (api_.power_mw && gpu.supported[kPower] && Check(api_.power_mw(gpu.device, &value), gpu, index, kPower, sink)) {
      emit("gpu.power_w", "W", false, value / 1000.0);
    }
    if (api_.temperature && gpu.supported[kTemperature] &&
        Check(api_.temperature(gpu.device, NvmlApi::kTemperatureGpu, &value), gpu, index, kTemperature, sink)) {
      emit("gpu.temp_c", "C", false, value);
    }
    if (events_ != nullptr) {
      emit("gpu.xid_errors", "count", true, static_cast<double>(gpu.xid_errors));
      if (gpu.xid_errors > 0) emit("gpu.last_xid", "xid", false, gpu.last_xid);
    }
  }
}

}  // namespace strata::recorder
