// Pressure stall information (PSI): /proc/pressure/{cpu,memory,io} host-wide, and the same format in a
// cgroup v2 directory's cpu.pressure / memory.pressure / io.pressure. Each "some"/"full" line gives
// avg10 (a gauge, % of the last 10 s stalled) and total (cumulative stalled time, us in the file, ns here).
// A kernel without PSI (no /proc/pressure, or psi=0 so reads fail) is reported once and skipped.
#pragma once

#include <string>
#include <vector>

#include "recorder/host/counter_sink.h"

namespace strata::recorder {

struct PressureLine {
  std::string_view kind;  // "some" or "full"
  double avg10 = 0;       // %
  uint64_t total_us = 0;
};

/// Parses PSI text ("some avg10=0.12 avg60=0.00 avg300=0.00 total=1234" lines); false when malformed.
bool ParsePressure(std::string_view text, std::vector<PressureLine>* lines);

class PressureReader {
 public:
  explicit PressureReader(const std::string& proc_root);
  void Sample(CounterSink& sink);

 private:
  std::string dir_;
  bool available_ = true;
  FileReader file_;
  std::vector<PressureLine> lines_;
  std::string name_;
};

}  // namespace strata::recorder
