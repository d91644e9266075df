// GPU counters through NVML, loaded with dlopen("libnvidia-ml.so.1") so that the recorder neither links
// nor needs the driver: without it (or when nvmlInit fails) the reader says "NVML not available" once
// and stays off. Per GPU (index = NVML index, label = UUID): gpu.util_pct, gpu.mem_util_pct,
// gpu.sm_clock_mhz, gpu.throttle_reasons (the NVML bit mask, as a number), gpu.power_w, gpu.temp_c,
// gpu.pcie_tx_bytes_per_s / gpu.pcie_rx_bytes_per_s (read once every 10 samples: NVML samples PCIe
// throughput over ~20 ms per call), and gpu.xid_errors (cumulative, from NVML critical-XID events polled
// without waiting) with gpu.last_xid. A query a GPU does not support is dropped for that GPU, once.
// The NVML types and signatures are declared here from the public API (nvml.h is not needed to build).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "recorder/host/counter_sink.h"

namespace strata::recorder {

/// The NVML entry points used, as declared by nvml.h (return value: nvmlReturn_t, 0 = NVML_SUCCESS).
struct NvmlApi {
  using Device = struct NvmlDeviceOpaque*;
  using EventSet = struct NvmlEventSetOpaque*;
  struct Utilization {  // nvmlUtilization_t
    unsigned int gpu;
    unsigned int memory;
  };
  struct EventData {  // nvmlEventData_t
    Device device;
    unsigned long long event_type;
    unsigned long long event_data;
    unsigned int gpu_instance_id;
    unsigned int compute_instance_id;
  };
  static constexpr int kSuccess = 0;
  static constexpr int kErrorNotSupported = 3;
  static constexpr int kErrorTimeout = 10;
  static constexpr int kClockSm = 1;                            // NVML_CLOCK_SM
  static constexpr int kPcieTxBytes = 0;                        // NVML_PCIE_UTIL_TX_BYTES (KB/s)
  static constexpr int kPcieRxBytes = 1;                        // NVML_PCIE_UTIL_RX_BYTES (KB/s)
  static constexpr int kTemperatureGpu = 0;                     // NVML_TEMPERATURE_GPU
  static constexpr unsigned long long kEventXidCritical = 0x8;  // nvmlEventTypeXidCriticalError

  int (*init)() = nullptr;  // nvmlInit_v2
  int (*shutdown)() = nullptr;
  const char* (*error_string)(int) = nullptr;
  int (*device_count)(unsigned int*) = nullptr;                    // nvmlDeviceGetCount_v2
  int (*device_by_index)(unsigned int, Device*) = nullptr;         // nvmlDeviceGetHandleByIndex_v2
  int (*uuid)(Device, char*, unsigned int) = nullptr;              // nvmlDeviceGetUUID
  int (*utilization)(Device, Utilization*) = nullptr;              // nvmlDeviceGetUtilizationRates
  int (*clock)(Device, int, unsigned int*) = nullptr;              // nvmlDeviceGetClockInfo
  int (*throttle_reasons)(Device, unsigned long long*) = nullptr;  // ...CurrentClocksEventReasons / ThrottleReasons
  int (*pcie_throughput)(Device, int, unsigned int*) = nullptr;    // nvmlDeviceGetPcieThroughput
  int (*power_mw)(Device, unsigned int*) = nullptr;                // nvmlDeviceGetPowerUsage
  int (*temperature)(Device, int, unsigned int*) = nullptr;        // nvmlDeviceGetTemperature
  // Optional (XID errors): nvmlEventSetCreate, nvmlDeviceRegisterEvents, nvmlEventSetWait_v2, nvmlEventSetFree.
  int (*event_set_create)(EventSet*) = nullptr;
  int (*register_events)(Device, unsigned long long, EventSet) = nullptr;
  int (*event_set_wait)(EventSet, EventData*, unsigned int) = nullptr;
  int (*event_set_free)(EventSet) = nullptr;
};

class NvmlReader {
 public:
  /// dlopen()s `library` and resolves the API; on failure returns null and sets *why.
  static std::unique_ptr<NvmlReader> Load(const std::string& library, std::string* why);
  /// Uses an already resolved API (tests pass fakes); `library_handle` is dlclose()d on destruction.
  NvmlReader(const NvmlApi& api, void* library_handle);
  ~NvmlReader();
  NvmlReader(const NvmlReader&) = delete;
  NvmlReader& operator=(const NvmlReader&) = delete;

  /// nvmlInit and device discovery; false with *why when NVML cannot be used.
  bool Init(std::string* why);
  void Sample(CounterSink& sink);

 private:
  enum Query { kUtilization, kClock, kThrottle, kPcie, kPower, kTemperature, kQueryCount };
  struct Gpu {
    NvmlApi::Device device = nullptr;
    std::string uuid;
    bool supported[kQueryCount] = {true, true, true, true, true, true};
    uint64_t xid_errors = 0;
    double last_xid = 0;
  };
  /// True when the call succeeded; drops the query for this GPU (warned once) when it is not supported.
  bool Check(int status, Gpu& gpu, int index, Query query, CounterSink& sink);
  void PollXid();

  NvmlApi api_;
  void* handle_;
  bool initialized_ = false;
  std::vector<Gpu> gpus_;
  NvmlApi::EventSet events_ = nullptr;
  uint64_t samples_ = 0;
};

}  // namespace strata::recorder
