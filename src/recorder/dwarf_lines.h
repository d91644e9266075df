// DwarfLines: source file and line of an address in an ELF file, from its DWARF line table (elfutils libdw,
// offline: the file as on disk, or its separate debug file found the standard ways — build-id under
// /usr/lib/debug, .gnu_debuglink). Used to name sampled native frames "function (file:line)" where the
// library has debug info; most distribution libraries have none, and then nothing is added.
// Invariants: each file is opened once (cached, also when it has no line table); addresses are link-time.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>

namespace strata::recorder {

struct SourceLine {
  std::string file;
  int line = 0;
};

class DwarfLines {
 public:
  DwarfLines();
  ~DwarfLines();
  DwarfLines(const DwarfLines&) = delete;
  DwarfLines& operator=(const DwarfLines&) = delete;

  /// The source line of link-time address `address` in the ELF file `path`, if its DWARF says.
  std::optional<SourceLine> Lookup(const std::string& path, uint64_t address);

 private:
  struct File;
  std::map<std::string, std::unique_ptr<File>> files_;
};

}  // namespace strata::recorder
