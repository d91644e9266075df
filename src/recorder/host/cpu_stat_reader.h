// /proc/stat: per-CPU time by kind (user, nice, system, idle, iowait, irq, softirq, steal) as cumulative
// ns, a busy percentage per CPU over the last interval, and the host's running/blocked task counts and
// context switches. Index -1 is the all-CPU "cpu" line; index N is "cpuN".
#pragma once

#include <string>
#include <unordered_map>
#include <vector>

#include "recorder/host/counter_sink.h"

namespace strata::recorder {

class CpuStatReader {
 public:
  explicit CpuStatReader(const std::string& proc_root);
  void Sample(CounterSink& sink);

 private:
  std::string path_;
  double ns_per_tick_;
  struct Previous {
    uint64_t busy = 0;
    uint64_t total = 0;
  };
  std::unordered_map<int, Previous> previous_;  // by cpu index
  FileReader file_;
  std::vector<std::string_view> fields_;
};

}  // namespace strata::recorder
