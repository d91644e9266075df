// DwarfLines: one offline libdwfl session per file (see dwarf_lines.h).
#include "recorder/dwarf_lines.h"

#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>

#include <algorithm>
#include <vector>

namespace strata::recorder {

namespace {
char* g_debuginfo_path = nullptr;  // libdwfl's default search path for separate debug files
const Dwfl_Callbacks kCallbacks = {
    dwfl_build_id_find_elf,
    dwfl_standard_find_debuginfo,
    dwfl_offline_section_address,
    &g_debuginfo_path,
};
// An address range of one compile unit, in libdwfl addresses (link-time + bias).
struct UnitRange {
  Dwarf_Addr low = 0, high = 0;  // [low, high)
  Dwarf_Die unit{};
  Dwarf_Addr bias = 0;
};

// Every compile unit's address ranges, sorted by their start: the index libdwfl finds units by is
// .debug_aranges, which clang does not write (unless -gdwarf-aranges), and libdw before 0.191 (Debian 12 has
// 0.188) does not build one from the units' own ranges, so every address of a clang-built file came back
// without a line ("address out of range"). Built once per file, on its first such miss.
std::vector<UnitRange> UnitRanges(Dwfl_Module* module) {
  std::vector<UnitRange> out;
  Dwarf_Addr bias = 0;
  for (Dwarf_Die* cu = dwfl_module_nextcu(module, nullptr, &bias); cu != nullptr;
       cu = dwfl_module_nextcu(module, cu, &bias)) {
    Dwarf_Addr base = 0, start = 0, end = 0;
    for (ptrdiff_t at = dwarf_ranges(cu, 0, &base, &start, &end); at > 0;
         at = dwarf_ranges(cu, at, &base, &start, &end))
      if (end > start) out.push_back(UnitRange{start + bias, end + bias, *cu, bias});
  }
  std::sort(out.begin(), out.end(), [](const UnitRange& a, const UnitRange& b) { return a.low < b.low; });
  return out;
}

// The line of `address` (a libdwfl address) by the unit whose range holds it: the last range starting at or
// before it (`units` sorted by start; a file's units do not overlap).
std::optional<SourceLine> LineByUnitRanges(std::vector<UnitRange>& units, Dwarf_Addr address) {
  auto after =
      std::upper_bound(units.begin(), units.end(), address, [](Dwarf_Addr a, const UnitRange& u) { return a < u.low; });
  if (after == units.begin() || address >= (after - 1)->high) return std::nullopt;
  UnitRange& u = *(after - 1);
  Dwarf_Line* line = dwarf_getsrc_die(&u.unit, address - u.bias);
  int lineno = 0;
  const char* file = line ? dwarf_linesrc(line, nullptr, nullptr) : nullptr;
  if (file == nullptr || dwarf_lineno(line, &lineno) != 0 || lineno <= 0) return std::nullopt;
  return SourceLine{file, lineno};
}

}  // namespace

struct DwarfLines::File {
  Dwfl* dwfl = nullptr;
  Dwfl_Module* module = nullptr;
  std::optional<std::vector<UnitRange>> units;  // UnitRanges, once libdwfl's own index missed
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
  if (line == nullptr) {
    if (!f.units) f.units = UnitRanges(f.module);
    return LineByUnitRanges(*f.units, address + bias);
  }
  int lineno = 0;
  const char* file = dwfl_lineinfo(line, nullptr, &lineno, nullptr, nullptr, nullptr);
  if (file == nullptr || lineno <= 0) return std::nullopt;
  return SourceLine{file, lineno};
}

}  // namespace strata::recorder
