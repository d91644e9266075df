// Python frames: CPython 3.11 layout, _PyRuntime lookup, code object naming, executing lines.
#include "recorder/python_frames.h"

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <vector>

#include "recorder/elf_symbols.h"
#include "recorder/process_memory.h"
#include "recorder/python_line_table.h"

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
    56,   // _PyInterpreterFrame.prev_instr
};
// PyCodeObject: ob_size (the code units of co_code_adaptive) at 16, co_firstlineno, co_filename, co_qualname,
// co_linetable (a bytes object), then co_code_adaptive itself inline from 184, in 2-byte code units.
constexpr uint64_t kCodeUnits = 16, kCodeFilename = 112, kCodeQualname = 128, kCodeFirstLine = 72;
constexpr uint64_t kCodeLineTable = 136, kCodeAdaptive = 184, kCodeUnitBytes = 2;
// PyBytesObject: ob_size at 16, the bytes from 32.
constexpr uint64_t kBytesSize = 16, kBytesData = 32;
// A larger table (or code) is not a code object's: its frames keep their first line.
constexpr int64_t kMaxLineTable = 1 << 20, kMaxCodeUnits = 1 << 24;
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

std::vector<PythonFrameAddress> ReadPythonStack(pid_t pid, pid_t tid, const strata_py_offsets& o) {
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
  std::vector<PythonFrameAddress> frames;
  for (int i = 0; i < STRATA_PY_MAX_DEPTH && frame; ++i) {
    const uint64_t c = ReadProcessPointer(pid, frame + o.frame_code);
    if (!c) break;
    frames.push_back({c, ReadProcessPointer(pid, frame + o.frame_instr)});
    frame = ReadProcessPointer(pid, frame + o.frame_previous);
  }
  return frames;
}

PythonCodeNames::Code& PythonCodeNames::Read(pid_t pid, uint64_t code) {
  auto [it, inserted] = cache_.try_emplace({pid, code});
  Code& c = it->second;
  if (!inserted) return c;
  uint64_t qualname = 0, filename = 0, line_table = 0;
  int32_t first_line = 0;
  int64_t units = 0, table_size = 0;
  ReadProcessMemory(pid, code + kCodeQualname, &qualname, sizeof qualname);
  ReadProcessMemory(pid, code + kCodeFilename, &filename, sizeof filename);
  ReadProcessMemory(pid, code + kCodeFirstLine, &first_line, sizeof first_line);
  c.names.function = ReadAsciiString(pid, qualname);
  c.names.file = ReadAsciiString(pid, filename);
  // Neither name readable: no code object there (a frame read half-built, at a sample): no line either.
  if (c.names.function == "?" && c.names.file == "?") return c;
  c.names.first_line = first_line;
  // The location table, read whole once: every line of this code object is decoded from it.
  if (ReadProcessMemory(pid, code + kCodeUnits, &units, sizeof units) && units > 0 && units <= kMaxCodeUnits &&
      ReadProcessMemory(pid, code + kCodeLineTable, &line_table, sizeof line_table) && line_table &&
      ReadProcessMemory(pid, line_table + kBytesSize, &table_size, sizeof table_size) && table_size > 0 &&
      table_size <= kMaxLineTable) {
    c.line_table.resize(static_cast<size_t>(table_size));
    if (ReadProcessMemory(pid, line_table + kBytesData, c.line_table.data(), c.line_table.size()))
      c.code_units = units;
    else
      c.line_table.clear();
  }
  return c;
}

const PythonCode& PythonCodeNames::Name(pid_t pid, uint64_t code) { return Read(pid, code).names; }

int PythonCodeNames::Line(pid_t pid, const PythonFrameAddress& frame) {
  Code& c = Read(pid, frame.code);
  // prev_instr is one code unit before the first instruction in a frame that has not started (offset -1:
  // the first line, as CPython says), else in co_code_adaptive.
  const uint64_t start = frame.code + kCodeAdaptive;
  if (c.code_units == 0 || frame.instr + kCodeUnitBytes < start) return c.names.first_line;
  const int64_t offset = static_cast<int64_t>((frame.instr + kCodeUnitBytes - start) / kCodeUnitBytes) - 1;
  if (offset >= c.code_units) return c.names.first_line;
  auto [it, inserted] = c.lines.try_emplace(offset, c.names.first_line);
  if (inserted) {
    const int line = PythonLineOfCodeUnit(c.line_table, c.names.first_line, offset);
    if (line > 0) it->second = line;
  }
  return it->second;
}

void PythonCodeNames::Forget(pid_t pid) {
  cache_.erase(cache_.lower_bound({pid, 0}), cache_.lower_bound({pid + 1, 0}));
}

}  // namespace strata::recorder
