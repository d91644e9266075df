// /proc/stat reader (see cpu_stat_reader.h). Times in /proc/stat are in USER_HZ ticks.
#include "recorder/host/cpu_stat_reader.h"

#include <unistd.h>

#include <array>

namespace strata::recorder {
namespace {

// Columns of a "cpu" line after its name, in kernel order; guest times are already inside user/nice.
constexpr std::array<const char*, 8> kCpuColumns = {"cpu.user_ns",   "cpu.nice_ns", "cpu.system_ns",  "cpu.idle_ns",
                                                    "cpu.iowait_ns", "cpu.irq_ns",  "cpu.softirq_ns", "cpu.steal_ns"};

}  // namespace

CpuStatReader::CpuStatReader(const std::string& proc_root) : path_(proc_root + "/stat") {
  const long ticks = ::sysconf(_SC_CLK_TCK);
  ns_per_tick_ = 1e9 / static_cast<double>(ticks > 0 ? ticks : 100);
}

void CpuStatReader::Sample(CounterSink& sink) {
  if (!sink.Read(&file_, path_, /*warn_if_missing=*/true)) return;
  ForEachLine(file_.text(), [&](std::string_view line) {
    SplitFields(line, &fields_);
    if (fields_.empty()) return;
    const std::string_view key = fields_[0];
    if (key.substr(0, 3) == "cpu") {
      int index = -1;
      if (key.size() > 3) {
        const auto n = ParseU64(key.substr(3));
        if (!n || *n > 1u << 20) return sink.Malformed(path_, "cpu name");
        index = static_cast<int>(*n);
      }
      // user nice system idle are in every kernel; later columns appeared over time.
      if (fields_.size() < 5) return sink.Malformed(path_, "short cpu line");
      std::array<uint64_t, kCpuColumns.size()> ticks{};
      const size_t columns = std::min(kCpuColumns.size(), fields_.size() - 1);
      for (size_t c = 0; c < columns; ++c) {
        const auto v = ParseU64(fields_[c + 1]);
        if (!v) return sink.Malformed(path_, "cpu column");
        ticks[c] = *v;
      }
      for (size_t c = 0; c < columns; ++c) {
        sink.Emit({.name = kCpuColumns[c], .index = index, .unit = "ns", .cumulative = true},
                  static_cast<double>(ticks[c]) * ns_per_tick_);
      }
      const uint64_t idle = ticks[3] + ticks[4];
      const uint64_t busy = ticks[0] + ticks[1] + ticks[2] + ticks[5] + ticks[6];
      const uint64_t total = busy + idle + ticks[7];
      auto [it, first] = previous_.try_emplace(index);
      Previous& prev = it->second;
      if (!first && total > prev.total && busy >= prev.busy) {
        sink.Emit({.name = "cpu.busy_pct", .index = index, .unit = "%"},
                  100.0 * static_cast<double>(busy - prev.busy) / static_cast<double>(total - prev.total));
      }
      prev = Previous{busy, total};
    } else if (key == "ctxt" || key == "procs_running" || key == "procs_blocked") {
      const auto v = fields_.size() == 2 ? ParseU64(fields_[1]) : std::nullopt;
      if (!v) return sink.Malformed(path_, key);
      if (key == "ctxt") {
        sink.Emit({.name = "host.ctxt_switches", .unit = "count", .cumulative = true}, static_cast<double>(*v));
      } else {
        sink.Emit({.name = key == "procs_running" ? "host.procs_running" : "host.procs_blocked", .unit = "tasks"},
                  static_cast<double>(*v));
      }
    }
  });
}

}  // namespace strata::recorder
