// /proc/diskstats reader (see diskstats_reader.h).
#include "recorder/host/diskstats_reader.h"

#include <unistd.h>

#include <array>

namespace strata::recorder {
namespace {

// Fields after "major minor name" (Documentation/admin-guide/iostats.rst): 0 reads completed, 1 reads
// merged, 2 sectors read, 3 ms reading, 4 writes completed, 5 writes merged, 6 sectors written, 7 ms
// writing, 8 I/Os in flight, 9 ms doing I/O, 10 weighted ms doing I/O; later kernels add discard/flush.
struct DiskstatsColumn {
  size_t index;
  const char* name;
  const char* unit;
  double scale;
  bool cumulative;
};
constexpr std::array<DiskstatsColumn, 9> kDiskstatsColumns = {{
    {0, "disk.reads", "count", 1, true},
    {2, "disk.read_bytes", "bytes", 512, true},
    {3, "disk.read_time_ns", "ns", 1e6, true},
    {4, "disk.writes", "count", 1, true},
    {6, "disk.write_bytes", "bytes", 512, true},
    {7, "disk.write_time_ns", "ns", 1e6, true},
    {8, "disk.in_flight", "count", 1, false},
    {9, "disk.io_time_ns", "ns", 1e6, true},
    {10, "disk.weighted_io_time_ns", "ns", 1e6, true},
}};

}  // namespace

bool DiskstatsReader::Skip(std::string_view device) {
  auto [it, inserted] = skip_.try_emplace(std::string(device), false);
  if (inserted) {
    it->second = device.starts_with("loop") || device.starts_with("ram") ||
                 ::access((sys_root_ + "/class/block/" + it->first + "/partition").c_str(), F_OK) == 0;
  }
  return it->second;
}

void DiskstatsReader::Sample(CounterSink& sink) {
  if (!sink.Read(&file_, path_, /*warn_if_missing=*/true)) return;
  ForEachLine(file_.text(), [&](std::string_view line) {
    if (SplitFields(line, &fields_) < 3 + 11) return sink.Malformed(path_, "short device line");
    const std::string_view device = fields_[2];
    if (Skip(device)) return;
    std::array<uint64_t, kDiskstatsColumns.size()> values{};
    for (size_t c = 0; c < kDiskstatsColumns.size(); ++c) {
      const auto v = ParseU64(fields_[3 + kDiskstatsColumns[c].index]);
      if (!v) return sink.Malformed(path_, "non-numeric counter");
      values[c] = *v;
    }
    for (size_t c = 0; c < kDiskstatsColumns.size(); ++c) {
      sink.Emit({.name = kDiskstatsColumns[c].name,
                 .label = device,
                 .unit = kDiskstatsColumns[c].unit,
                 .cumulative = kDiskstatsColumns[c].cumulative},
                static_cast<double>(values[c]) * kDiskstatsColumns[c].scale);
    }
  });
}

}  // namespace strata::recorder
