// InfiniBand port counters (see infiniband_reader.h).
#include "recorder/host/infiniband_reader.h"

#include <algorithm>
#include <array>

namespace strata::recorder {
namespace {

struct Counter {
  const char* file;
  const char* name;
  const char* unit;
  double scale;
};
constexpr std::array<Counter, 9> kCounters = {{
    {"port_xmit_data", "ib.xmit_bytes", "bytes", 4},
    {"port_rcv_data", "ib.rcv_bytes", "bytes", 4},
    {"port_xmit_packets", "ib.xmit_packets", "packets", 1},
    {"port_rcv_packets", "ib.rcv_packets", "packets", 1},
    {"port_xmit_wait", "ib.xmit_wait", "ticks", 1},
    {"port_xmit_discards", "ib.xmit_discards", "packets", 1},
    {"port_rcv_errors", "ib.rcv_errors", "packets", 1},
    {"symbol_error", "ib.symbol_errors", "count", 1},
    {"link_downed", "ib.link_downed", "count", 1},
}};

}  // namespace

void InfinibandReader::Discover() {
  ports_.clear();
  std::vector<std::string> devices = ListDirectory(root_);
  std::sort(devices.begin(), devices.end());
  for (const std::string& device : devices) {
    std::vector<std::string> ports = ListDirectory(root_ + "/" + device + "/ports");
    std::sort(ports.begin(), ports.end());
    for (const std::string& port : ports) {
      const auto number = ParseU64(port);
      if (!number || *number > 1024) continue;
      ports_.push_back(Port{device, static_cast<int>(*number), root_ + "/" + device + "/ports/" + port + "/counters/"});
    }
  }
}

void InfinibandReader::Sample(CounterSink& sink) {
  if (samples_++ % 100 == 0) Discover();
  for (const Port& port : ports_) {
    for (const Counter& counter : kCounters) {
      const std::string path = port.counters_dir + counter.file;
      const ReadResult result = file_.Read(path);
      if (result == ReadResult::kMissing) {
        ++sink.diag().stats.files_missing;  // not every driver has every counter
        continue;
      }
      if (result != ReadResult::kOk) {
        sink.Read(&file_, path, true);  // counts and warns once
        continue;
      }
      const auto v = ParseU64(Trim(file_.text()));
      if (!v) {
        sink.Malformed(path, "not a number");
        continue;
      }
      sink.Emit(
          {.name = counter.name, .index = port.port, .label = port.device, .unit = counter.unit, .cumulative = true},
          static_cast<double>(*v) * counter.scale);
    }
  }
}

}  // namespace strata::recorder
