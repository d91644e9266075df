// Python frames: CPython 3.11 layout, _PyRuntime lookup, code object naming.
#include "recorder/python_frames.h"

#include <cstring>
#include <filesystem>
#include <vector>

#include "recorder/elf_symbols.h"
#include "recorder/process_memory.h"

namespace strata::recorder {
namespace {

// CPython 3.11 on x86-64 (Include/internal/pycore_runtime.h, pycore_interp.h, cpython/pystate.h,
// pycore_frame.h, cpython/code.h, cpython/unicodeobject.h).
constexpr strata_py_offsets kPython311 = {
    0,    // runtime: per process
    40,   // _PyRuntimeState.interpreters.head
    16,   // PyInterpreterState.threads.head
    8,    // PyThreadState.next
    160,  // PyThreadState.native_thread_id
    56,   // PyThreadState.cframe
    8,    // _PyCFrame.current_frame
    32,   // _PyInterpreterFrame.f_code
    48,   // _PyInterpreterFrame.previous
};
constexpr uint64_t kCodeFilename = 112, kCodeQualname = 128, kCodeFirstLine = 72;
// PyASCIIObject: length at 16, state bits at 32 (kind in bits 2-4, compact bit 5, ascii bit 6), and the
// characters of a compact ASCII string right after the 48-byte header.
constexpr uint64_t kStrLength = 16, kStrState = 32, kStrAsciiData = 48;
constexpr size_t kMaxName = 256;

// The Python version of a mapped file named like python3.11 or libpython3.11.so.1.0; empty otherwise.
std::string VersionOfPath(const std::string& path) {
  const std::string name = std::filesystem::path(path).filename().string();
  for (const char* prefix : {"libpython", "python"}) {
    if (name.rfind(prefix, 0) != 0) continue;
    std::string rest = name.substr(std::strlen(prefix));
    const size_t end = rest.find_first_not_of("0123456789.");
    rest = rest.substr(0, end);
    while (!rest.empty() && rest.back() == '.') rest.pop_back();
    if (rest.find('.') != std::string::npos) return rest;
  }
  return "";
}

std::string ReadAsciiString(pid_t pid, uint64_t object) {
  uint64_t length = 0;
  uint32_t state = 0;
  if (!object || !ReadProcessMemory(pid, object + kStrLength, &length, sizeof length) ||
      !ReadProcessMemory(pid, object + kStrState, &state, sizeof state))
    return "?";
  const bool compact = state & (1u << 5), ascii = state & (1u << 6);
  if (!compact || !ascii) return "?";  // a non-ASCII name (rare for code): not decoded
  std::string s(std::min<uint64_t>(length, kMaxName), '\0');
  if (!s.empty() && !ReadProcessMemory(pid, object + kStrAsciiData, s.data(), s.size())) return "?";
  return s;
}

}  // namespace

std::optional<strata_py_offsets> PythonOffsetsOf(const ProcessInfo& process, std::string* why) {
  for (const MapEntry& m : process.maps) {
    const std::string version = VersionOfPath(m.path);
    if (version.empty()) continue;
    if (version != "3.11") {
      if (why) *why = "Python " + version + " has no known frame layout (3.11 only): no Python frames";
      return std::nullopt;
    }
    auto elf = ElfSymbols::Load(m.path, {"_PyRuntime"});
    if (!elf.ok()) continue;
    const auto runtime = elf.value().ObjectAddress("_PyRuntime");
    if (!runtime) continue;  // the executable of a python linked against libpython: the library has it
    uint64_t bias = 0;
    if (!elf.value().fixed_address()) {
      const auto vaddr = elf.value().AddressOfFileOffset(m.offset);
      if (!vaddr) continue;
      bias = m.start - *vaddr;
    }
    strata_py_offsets o = kPython311;
    o.runtime = *runtime + bias;
    return o;
  }
  return std::nullopt;
}

std::vector<uint64_t> ReadPythonStack(pid_t pid, pid_t tid, const strata_py_offsets& o) {
  const uint64_t interp = ReadProcessPointer(pid, o.runtime + o.interp_head);
  uint64_t tstate = interp ? ReadProcessPointer(pid, interp + o.threads_head) : 0;
  uint64_t found = 0;
  for (int i = 0; i < STRATA_PY_MAX_THREADS && tstate; ++i) {
    if (ReadProcessPointer(pid, tstate + o.ts_native_id) == static_cast<uint64_t>(tid)) {
      found = tstate;
      break;
    }
    tstate = ReadProcessPointer(pid, tstate + o.ts_next);
  }
  const uint64_t cframe = found ? ReadProcessPointer(pid, found + o.ts_cframe) : 0;
  uint64_t frame = cframe ? ReadProcessPointer(pid, cframe + o.cframe_current) : 0;
  std::vector<uint64_t> code;
  for (int i = 0; i < STRATA_PY_MAX_DEPTH && frame; ++i) {
    const uint64_t c = ReadProcessPointer(pid, frame + o.frame_code);
    if (!c) break;
    code.push_back(c);
    frame = ReadProcessPointer(pid, frame + o.frame_previous);
  }
  return code;
}

const PythonFrame& PythonCodeNames::Name(pid_t pid, uint64_t code) {
  auto [it, inserted] = cache_.try_emplace({pid, code});
  if (!inserted) return it->second;
  PythonFrame& f = it->second;
  uint64_t qualname = 0, filename = 0;
  int32_t line = 0;
  ReadProcessMemory(pid, code + kCodeQualname, &qualname, sizeof qualname);
  ReadProcessMemory(pid, code + kCodeFilename, &filename, sizeof filename);
  ReadProcessMemory(pid, code + kCodeFirstLine, &line, sizeof line);
  f.function = ReadAsciiString(pid, qualname);
  f.file = ReadAsciiString(pid, filename);
  f.line = line;
  return f;
}

void PythonCodeNames::Forget(pid_t pid) {
  cache_.erase(cache_.lower_bound({pid, 0}), cache_.lower_bound({pid + 1, 0}));
}

}  // namespace strata::recorder
