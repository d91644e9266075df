// Names the instruction pointers of sampled stacks after a run: user addresses through the process's
// recorded memory map and the ELF symbols of the mapped file (cached per file), kernel addresses through
// /proc/kallsyms. Frames of the CPython interpreter loop are marked, since the Python function they run
// is not visible at this level.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "recorder/dwarf_lines.h"
#include "recorder/elf_symbols.h"
#include "recorder/process_info.h"

namespace strata::recorder {

struct Frame {
  std::string function;  // "?" when unknown
  std::string module;    // file path, or "[kernel]"
  uint64_t offset = 0;   // from the function start (or the address when unknown)
  bool interpreter = false;
  std::string file;  // source file and line from the library's DWARF, when it has debug info
  int line = 0;
  nlohmann::json ToJson() const;
};

class StackSymbolizer {
 public:
  explicit StackSymbolizer(std::string kallsyms_path = "/proc/kallsyms");
  std::vector<Frame> User(const std::vector<MapEntry>& maps, const std::vector<uint64_t>& ips);
  std::vector<Frame> Kernel(const std::vector<uint64_t>& ips);
  static bool IsInterpreterFrame(const std::string& function);

 private:
  const ElfSymbols* Symbols(const std::string& path);
  void LoadKallsyms();

  std::string kallsyms_path_;
  bool kallsyms_loaded_ = false;
  std::vector<std::pair<uint64_t, std::string>> kallsyms_;
  std::map<std::string, std::unique_ptr<ElfSymbols>> files_;  // null when unreadable
  DwarfLines lines_;
};

}  // namespace strata::recorder
