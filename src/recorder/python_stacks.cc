// The Python stacks of a recording (see python_stacks.h).
#include "recorder/python_stacks.h"

namespace strata::recorder {

const strata_py_offsets* PythonStacks::OffsetsOf(int pid) const {
  const auto it = offsets_.find(pid);
  return it == offsets_.end() ? nullptr : &it->second;
}

void PythonStacks::Forget(int pid) {
  names_.Forget(static_cast<pid_t>(pid));
  offsets_.erase(pid);
  const auto tgid = static_cast<uint32_t>(pid);
  ids_.erase(ids_.lower_bound({tgid, {}}), ids_.lower_bound({tgid + 1, {}}));
}

PythonStacks::Interned PythonStacks::Intern(uint32_t tgid, const std::vector<PythonFrameAddress>& frames) {
  if (frames.empty()) return {};
  const auto pid = static_cast<pid_t>(tgid);
  std::vector<std::pair<uint64_t, int>> lines;
  lines.reserve(frames.size());
  for (const PythonFrameAddress& f : frames) lines.emplace_back(f.code, names_.Line(pid, f));
  auto [it, inserted] = ids_.try_emplace({tgid, std::move(lines)}, next_id_);
  if (!inserted) return {it->second, std::nullopt};
  ++next_id_;
  nlohmann::json named = nlohmann::json::array();
  for (const auto& [code, line] : it->first.second) {
    const PythonCode& c = names_.Name(pid, code);
    named.push_back({{"fn", c.function}, {"file", c.file}, {"line", line}, {"first_line", c.first_line}});
  }
  return {it->second, nlohmann::json{{"type", "py_stack"}, {"pid", tgid}, {"id", it->second}, {"frames", named}}};
}

PythonStacks::Interned PythonStacks::ReadNow(int pid, long tid) {
  const strata_py_offsets* offsets = OffsetsOf(pid);
  if (offsets == nullptr) return {};
  return Intern(static_cast<uint32_t>(pid), ReadPythonStack(pid, static_cast<pid_t>(tid), *offsets));
}

}  // namespace strata::recorder
