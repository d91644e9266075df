// DwarfLines: one offline libdwfl session per file (see dwarf_lines.h).
#include "recorder/dwarf_lines.h"

#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>

namespace strata::recorder {

namespace {
char* g_debuginfo_path = nullptr;  // libdwfl's default search path for separate debug files
const Dwfl_Callbacks kCallbacks = {
    dwfl_build_id_find_elf,
    dwfl_standard_find_debuginfo,
    dwfl_offline_section_address,
    &g_debuginfo_path,
};
// The line of `address` (a libdwfl address: link-time + bias) found by walking the module's compile units,
// for when libdwfl cannot find its unit by the .debug_aranges index: clang writes no such index (unless
// -gdwarf-aranges), and libdw before 0.191 (Debian 12 has 0.188) does not build one from the units' own
// ranges, so every address of a clang-built file came back without a line ("address out of range").
std::optional<SourceLine> LineByUnitScan(Dwfl_Module* module, Dwarf_Addr address) {
  Dwarf_Addr bias = 0;
  for (Dwarf_Die* cu = dwfl_module_nextcu(module, nullptr, &bias); cu != nullptr;
       cu = dwfl_module_nextcu(module, cu, &bias)) {
    if (dwarf_haspc(cu, address - bias) <= 0) continue;
    Dwarf_Line* line = dwarf_getsrc_die(cu, address - bias);
    int lineno = 0;
    const char* file = line ? dwarf_linesrc(line, nullptr, nullptr) : nullptr;
    if (file == nullptr || dwarf_lineno(line, &lineno) != 0 || lineno <= 0) return std::nullopt;
    return SourceLine{file, lineno};
  }
  return std::nullopt;
}

}  // namespace

struct DwarfLines::File {
  Dwfl* dwfl = nullptr;
  Dwfl_Module* module = nullptr;
  ~File() {
    if (dwfl) dwfl_end(dwfl);
  }
};

DwarfLines::DwarfLines() = default;
DwarfLines::~DwarfLines() = default;

std::optional<SourceLine> DwarfLines::Lookup(const std::string& path, uint64_t address) {
  auto it = files_.find(path);
  if (it == files_.end()) {
    auto file = std::make_unique<File>();
    file->dwfl = dwfl_begin(&kCallbacks);
    if (file->dwfl) {
      file->module = dwfl_report_offline(file->dwfl, path.c_str(), path.c_str(), -1);
      dwfl_report_end(file->dwfl, nullptr, nullptr);
    }
    it = files_.emplace(path, std::move(file)).first;
  }
  File& f = *it->second;
  if (f.module == nullptr) return std::nullopt;
  // Offline, libdwfl places the module at its link-time addresses plus a bias (0 for executables).
  Dwarf_Addr bias = 0, dwarf_bias = 0;
  if (dwfl_module_getelf(f.module, &bias) == nullptr) return std::nullopt;
  if (dwfl_module_getdwarf(f.module, &dwarf_bias) == nullptr) return std::nullopt;  // no debug info
  Dwfl_Line* line = dwfl_module_getsrc(f.module, address + bias);
  if (line == nullptr) return LineByUnitScan(f.module, address + bias);
  int lineno = 0;
  const char* file = dwfl_lineinfo(line, nullptr, &lineno, nullptr, nullptr, nullptr);
  if (file == nullptr || lineno <= 0) return std::nullopt;
  return SourceLine{file, lineno};
}

}  // namespace strata::recorder
