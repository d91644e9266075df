// Stack frames of a recording (see stack_frames.h).
#include "store/stack_frames.h"

#include <string_view>

namespace strata {
namespace {

std::string_view ModuleBaseName(std::string_view path) {
  const size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

bool ModuleStartsWith(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

bool Unnamed(const StackFrame& f) { return f.function.empty() || f.function == "?"; }

// Frames that are not the program's own work: the C library and loader, OpenMP's worker spin, the
// kernel, addresses in no known file and the interpreter's evaluation loop. A frame in a known library
// whose symbol table does not name it (a stripped or static function) is the library's work: kept.
bool Skipped(const StackFrame& f) {
  const std::string_view module = ModuleBaseName(f.module);
  if (f.interpreter || f.module.empty() || f.module == "?" || f.module == "[kernel]") return true;
  if (Unnamed(f) && (ModuleStartsWith(module, "python3") || ModuleStartsWith(module, "libpython"))) return true;
  for (std::string_view lib :
       {"libc.so", "libc-", "libpthread", "ld-linux", "libgomp", "libm.so", "linux-vdso", "libstdc++", "libgcc_s"})
    if (ModuleStartsWith(module, lib)) return true;
  return false;
}

std::string Name(const StackFrame& f) {
  if (Unnamed(f)) return "[" + std::string(ModuleBaseName(f.module)) + "]";
  std::string fn = f.function;
  if (const size_t paren = fn.find('('); paren != std::string::npos && paren > 0) fn.resize(paren);
  if (fn.size() > 100) fn = fn.substr(0, 97) + "...";
  const std::string source =
      f.file.empty() ? std::string() : " (" + std::string(ModuleBaseName(f.file)) + ":" + std::to_string(f.line) + ")";
  return fn + source + " [" + std::string(ModuleBaseName(f.module)) + "]";
}

}  // namespace

std::string PythonFrameName(const PythonFrameRef& frame) {
  std::string fn = frame.function.size() > 100 ? frame.function.substr(0, 97) + "..." : frame.function;
  return "Python " + fn + " (" + std::string(ModuleBaseName(frame.file)) + ":" + std::to_string(frame.line) + ")";
}

bool InDataLoading(const std::vector<PythonFrameRef>& frames) {
  for (const PythonFrameRef& f : frames)
    if (f.file.find("/torch/utils/data/") != std::string::npos) return true;
  return false;
}

std::string SampleName(const std::vector<StackFrame>& native, const std::vector<PythonFrameRef>* python) {
  const StackFrame* own = nullptr;
  for (const StackFrame& f : native)
    if (!Skipped(f)) {
      own = &f;
      break;
    }
  if (python == nullptr || python->empty()) return CulpritFrame(native);
  const bool data_loading = InDataLoading(*python);
  const std::string py = PythonFrameName(python->front());
  const bool interpreter_only = own == nullptr || ModuleStartsWith(ModuleBaseName(own->module), "python3") ||
                                ModuleStartsWith(ModuleBaseName(own->module), "libpython");
  std::string name = interpreter_only ? py : Name(*own) + " in " + py;
  return data_loading ? "DataLoader: " + name : name;
}

std::string CulpritFrame(const std::vector<StackFrame>& frames) {
  if (frames.empty()) return "?";
  for (const StackFrame& f : frames)
    if (!Skipped(f)) return Name(f);
  return Name(frames.front());
}

}  // namespace strata
