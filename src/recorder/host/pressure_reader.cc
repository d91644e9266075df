// PSI parsing and the host-wide /proc/pressure reader (see pressure_reader.h).
#include "recorder/host/pressure_reader.h"

#include <cstring>

namespace strata::recorder {

bool ParsePressure(std::string_view text, std::vector<PressureLine>* lines) {
  lines->clear();
  std::vector<std::string_view> fields;
  bool ok = true;
  ForEachLine(text, [&](std::string_view line) {
    SplitFields(line, &fields);
    if (!ok || fields.size() < 5 || (fields[0] != "some" && fields[0] != "full")) {
      ok = false;
      return;
    }
    std::optional<double> avg10;
    std::optional<uint64_t> total;
    for (size_t i = 1; i < fields.size(); ++i) {
      if (fields[i].substr(0, 6) == "avg10=") avg10 = ParseDouble(fields[i].substr(6));
      if (fields[i].substr(0, 6) == "total=") total = ParseU64(fields[i].substr(6));
    }
    if (!avg10 || !total) {
      ok = false;
      return;
    }
    lines->push_back(PressureLine{fields[0], *avg10, *total});
  });
  return ok && !lines->empty();
}

PressureReader::PressureReader(const std::string& proc_root) : dir_(proc_root + "/pressure/") {}

void PressureReader::Sample(CounterSink& sink) {
  if (!available_) return;
  for (const char* resource : {"cpu", "memory", "io"}) {
    const std::string path = dir_ + resource;
    const ReadResult result = file_.Read(path);
    if (result != ReadResult::kOk) {
      if (std::strcmp(resource, "cpu") == 0) {
        // No PSI in this kernel (or disabled with psi=0): say so once and stop asking.
        available_ = false;
        ++sink.diag().stats.files_missing;
        sink.diag().WarnOnce("psi", "host counters: pressure stall information not available (" + path + ": " +
                                        std::strerror(file_.error()) + "); PSI counters are off");
        return;
      }
      sink.Read(&file_, path, /*warn_if_missing=*/true);  // counts and warns once
      continue;
    }
    if (!ParsePressure(file_.text(), &lines_)) {
      sink.Malformed(path, "PSI line");
      continue;
    }
    for (const PressureLine& line : lines_) {
      name_.assign("psi.").append(resource).append(".").append(line.kind);
      const size_t base = name_.size();
      sink.Emit({.name = name_.append(".avg10"), .unit = "%"}, line.avg10);
      name_.resize(base);
      sink.Emit({.name = name_.append(".total_ns"), .unit = "ns", .cumulative = true},
                static_cast<double>(line.total_us) * 1e3);
    }
  }
}

}  // namespace strata::recorder
