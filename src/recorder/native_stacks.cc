// The native stacks of a recording (see native_stacks.h).
#include "recorder/native_stacks.h"

#include <algorithm>
#include <utility>

namespace strata::recorder {

nlohmann::json StackRecord(StackSymbolizer& symbolizer, bool kernel, uint32_t tgid, int32_t id,
                           const std::vector<MapEntry>& maps, const std::vector<uint64_t>& ips) {
  nlohmann::json frames = nlohmann::json::array();
  for (const Frame& f : kernel ? symbolizer.Kernel(ips) : symbolizer.User(maps, ips)) frames.push_back(f.ToJson());
  if (kernel) return {{"type", "stack"}, {"kernel", true}, {"id", id}, {"frames", frames}};
  return {{"type", "stack"}, {"kernel", false}, {"pid", tgid}, {"id", id}, {"frames", frames}};
}

NativeStacks::NativeStacks(StackReader stack, MapsReader maps, std::string kallsyms_path)
    : stack_(std::move(stack)), maps_(std::move(maps)), kallsyms_path_(std::move(kallsyms_path)) {}

bool NativeStacks::Sampled(uint32_t tgid, int32_t user_stack, int32_t kernel_stack) {
  if (kernel_stack >= 0) kernel_.insert(kernel_stack);
  return user_stack >= 0 && user_.insert({tgid, user_stack}).second;
}

void NativeStacks::CoverNewStack(int32_t user_stack, ProcessInfo& process, uint64_t now_ns) {
  const std::vector<uint64_t> ips = stack_(user_stack);
  if (ips.empty()) return;
  const auto& maps = process.maps;
  if (std::any_of(maps.begin(), maps.end(), [&](const MapEntry& m) { return ips[0] >= m.start && ips[0] < m.end; }))
    return;
  const auto [last, first] = maps_read_ns_.try_emplace(process.pid, now_ns);
  if (!first && now_ns - last->second < kMinMapsInterval) return;
  last->second = now_ns;
  ++maps_reads_;
  auto fresh = maps_(process.pid);
  if (!fresh.empty()) process.maps = std::move(fresh);
}

std::optional<nlohmann::json> NativeStacks::RecordNow(uint32_t tgid, int32_t id, bool kernel,
                                                      const ProcessInfo* process) {
  if (id < 0 || (!kernel && process == nullptr)) return std::nullopt;
  if (!live_) live_ = std::make_unique<StackSymbolizer>(kallsyms_path_);
  const std::vector<MapEntry> no_maps;
  return StackRecord(*live_, kernel, tgid, id, kernel ? no_maps : process->maps, stack_(id));
}

std::vector<nlohmann::json> NativeStacks::FinalRecords(const std::map<int, ProcessInfo>& processes) const {
  StackSymbolizer symbolizer(kallsyms_path_);
  const std::vector<MapEntry> no_maps;
  std::vector<nlohmann::json> out;
  out.reserve(user_.size() + kernel_.size());
  for (const auto& [tgid, id] : user_) {
    auto it = processes.find(static_cast<int>(tgid));
    out.push_back(
        StackRecord(symbolizer, false, tgid, id, it == processes.end() ? no_maps : it->second.maps, stack_(id)));
  }
  for (int32_t id : kernel_) out.push_back(StackRecord(symbolizer, true, 0, id, no_maps, stack_(id)));
  return out;
}

}  // namespace strata::recorder
