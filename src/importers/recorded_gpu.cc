// Which GPU a recorded rank ran on (see recorded_gpu.h).
#include "importers/recorded_gpu.h"

#include <charconv>
#include <set>
#include <string>
#include <string_view>

namespace strata {
namespace {

std::vector<std::string_view> SplitCommas(std::string_view s) {
  std::vector<std::string_view> out;
  while (!s.empty()) {
    const size_t comma = s.find(',');
    std::string_view item = s.substr(0, comma);
    while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
    while (!item.empty() && item.back() == ' ') item.remove_suffix(1);
    out.push_back(item);
    if (comma == std::string_view::npos) break;
    s.remove_prefix(comma + 1);
  }
  return out;
}

std::optional<int> ParseIndex(std::string_view s) {
  int v = -1;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || ptr != s.data() + s.size() || v < 0) return std::nullopt;
  return v;
}

}  // namespace

std::optional<int> NvmlIndexOfProcess(const RecordedProcess& process, const std::vector<RecordedSeries>& series) {
  std::set<int> indexes;
  for (const RecordedSeries& s : series)
    if (s.name.rfind("gpu.", 0) == 0 && s.index >= 0) indexes.insert(s.index);
  if (indexes.empty()) return std::nullopt;
  auto known = [&](std::optional<int> i) { return i && indexes.count(*i) ? i : std::nullopt; };
  if (process.visible_devices) {
    const std::vector<std::string_view> seen = SplitCommas(*process.visible_devices);
    std::string_view device;
    if (process.local_rank && *process.local_rank >= 0 && static_cast<size_t>(*process.local_rank) < seen.size())
      device = seen[static_cast<size_t>(*process.local_rank)];
    else if (seen.size() == 1)
      device = seen[0];
    if (device.empty()) return std::nullopt;
    if (auto i = ParseIndex(device)) return known(i);
    for (const RecordedSeries& s : series)
      if (s.name.rfind("gpu.", 0) == 0 && s.index >= 0 && !s.label.empty() && s.label.rfind(device, 0) == 0)
        return s.index;  // CUDA accepts a UUID's unique prefix
    return std::nullopt;
  }
  if (process.local_rank) return known(process.local_rank);
  return indexes.size() == 1 ? std::optional<int>(*indexes.begin()) : std::nullopt;
}

}  // namespace strata
