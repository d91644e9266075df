// InfiniBand / RoCE port counters from sys_root/class/infiniband/DEVICE/ports/PORT/counters/ when present
// (label = "DEVICE", index = port number). port_xmit_data / port_rcv_data count 4-byte words and are
// emitted as bytes; the rest as the kernel gives them. All cumulative. Devices and ports are listed again
// every 100 samples (10 s at the default rate), so a late-registered device shows up.
#pragma once

#include <string>
#include <vector>

#include "recorder/host/counter_sink.h"

namespace strata::recorder {

class InfinibandReader {
 public:
  explicit InfinibandReader(const std::string& sys_root) : root_(sys_root + "/class/infiniband") {}
  void Sample(CounterSink& sink);

 private:
  struct Port {
    std::string device;
    int port;
    std::string counters_dir;
  };
  void Discover();

  std::string root_;
  std::vector<Port> ports_;
  uint64_t samples_ = 0;
  FileReader file_;
};

}  // namespace strata::recorder
