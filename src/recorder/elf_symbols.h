// Function symbols of one ELF file (executable or shared library), read with libelf: for finding probe
// points by (demangled) name and for naming sampled addresses after a run. Invariant: addresses are
// link-time virtual addresses; FileOffset/VaddrOfFileOffset convert through the PT_LOAD segments.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/status.h"

namespace strata::recorder {

struct ElfFunction {
  uint64_t address = 0;  // link-time virtual address
  uint64_t size = 0;
  std::string name;       // as in the symbol table (mangled for C++)
  std::string demangled;  // C++ demangled, or the name
};

class ElfSymbols {
 public:
  // `objects`: names of data symbols (STT_OBJECT, e.g. _PyRuntime) whose addresses to keep as well.
  static Expected<ElfSymbols> Load(const std::string& path, const std::vector<std::string>& objects = {});

  const std::string& path() const { return path_; }
  const std::string& build_id() const { return build_id_; }                 // hex, empty when the file has none
  const std::vector<ElfFunction>& functions() const { return functions_; }  // by address; aliases kept

  // Functions whose demangled name satisfies `match`.
  std::vector<const ElfFunction*> Find(const std::function<bool(const ElfFunction&)>& match) const;
  // The function containing `address` (link-time), if any.
  const ElfFunction* FunctionAt(uint64_t address) const;
  // File offset of a link-time address (what uprobes take), if it lies in a loaded segment.
  std::optional<uint64_t> FileOffset(uint64_t address) const;
  // Link-time address of a file offset (for mapping a sampled address back through /proc/PID/maps).
  std::optional<uint64_t> AddressOfFileOffset(uint64_t offset) const;
  // Link-time address of a data symbol named in Load's `objects`, if the file defines it.
  std::optional<uint64_t> ObjectAddress(const std::string& name) const;
  // True for executables not built as position independent (their addresses are absolute).
  bool fixed_address() const { return fixed_address_; }

 private:
  struct Segment {
    uint64_t vaddr, offset, filesz;
  };
  std::string path_;
  std::string build_id_;
  bool fixed_address_ = false;
  std::vector<ElfFunction> functions_;
  std::vector<std::pair<std::string, uint64_t>> objects_;
  std::vector<Segment> segments_;
};

std::string Demangle(const std::string& name);

}  // namespace strata::recorder
