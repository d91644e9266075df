// Indexing a recording's stacks (see stack_index.h).
#include "store/stack_index.h"

namespace strata {

UserStacks IndexUserStacks(const std::vector<nlohmann::json>& meta) {
  UserStacks out;
  for (const auto& m : meta) {
    if (!m.is_object()) continue;
    const auto type = m.find("type"), kernel = m.find("kernel");
    if (type == m.end() || *type != "stack" || kernel == m.end() || *kernel != false) continue;
    const auto pid = m.find("pid"), id = m.find("id"), frames = m.find("frames");
    if (pid == m.end() || id == m.end() || frames == m.end() || !pid->is_number_integer() || !id->is_number_integer() ||
        !frames->is_array())
      continue;
    std::vector<StackFrame> stack;
    for (const auto& f : *frames) {
      if (!f.is_object()) continue;
      StackFrame frame;
      if (auto fn = f.find("fn"); fn != f.end() && fn->is_string()) frame.function = fn->get<std::string>();
      if (auto mod = f.find("module"); mod != f.end() && mod->is_string()) frame.module = mod->get<std::string>();
      if (auto in = f.find("interpreter"); in != f.end() && in->is_boolean()) frame.interpreter = in->get<bool>();
      if (auto file = f.find("file"); file != f.end() && file->is_string()) frame.file = file->get<std::string>();
      if (auto line = f.find("line"); line != f.end() && line->is_number_integer()) frame.line = line->get<int>();
      stack.push_back(std::move(frame));
    }
    out[{pid->get<uint32_t>(), id->get<int32_t>()}] = std::move(stack);
  }
  return out;
}

PythonStacks IndexPythonStacks(const std::vector<nlohmann::json>& meta) {
  PythonStacks out;
  for (const auto& m : meta) {
    if (!m.is_object()) continue;
    const auto type = m.find("type"), pid = m.find("pid"), id = m.find("id"), frames = m.find("frames");
    if (type == m.end() || *type != "py_stack" || pid == m.end() || id == m.end() || frames == m.end() ||
        !pid->is_number_integer() || !id->is_number_integer() || !frames->is_array())
      continue;
    std::vector<PythonFrameRef> stack;
    for (const auto& f : *frames) {
      if (!f.is_object()) continue;
      PythonFrameRef frame;
      if (auto fn = f.find("fn"); fn != f.end() && fn->is_string()) frame.function = fn->get<std::string>();
      if (auto file = f.find("file"); file != f.end() && file->is_string()) frame.file = file->get<std::string>();
      if (auto line = f.find("line"); line != f.end() && line->is_number_integer()) frame.line = line->get<int>();
      // An older recording's frames say only the first line, as their "line".
      const auto first = f.find("first_line");
      frame.first_line = first != f.end() && first->is_number_integer() ? first->get<int>() : frame.line;
      stack.push_back(std::move(frame));
    }
    out[{pid->get<uint32_t>(), id->get<int32_t>()}] = std::move(stack);
  }
  return out;
}

}  // namespace strata
