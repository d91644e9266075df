// ELF symbol tables through libelf (.symtab when present, else .dynsym), build id from the
// NT_GNU_BUILD_ID note, and PT_LOAD segments for address <-> file offset.
#include "recorder/elf_symbols.h"

#include <cxxabi.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <memory>

namespace strata::recorder {

std::optional<uint64_t> ElfSymbols::ObjectAddress(const std::string& name) const {
  for (const auto& [n, address] : objects_)
    if (n == name) return address;
  return std::nullopt;
}

std::string Demangle(const std::string& name) {
  if (name.rfind("_Z", 0) != 0) return name;
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> out(abi::__cxa_demangle(name.c_str(), nullptr, nullptr, &status), std::free);
  return status == 0 && out ? std::string(out.get()) : name;
}

Expected<ElfSymbols> ElfSymbols::Load(const std::string& path, const std::vector<std::string>& objects) {
  if (elf_version(EV_CURRENT) == EV_NONE) return Status::Resource("libelf is not usable");
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Status::Resource("cannot open " + path + ": " + std::strerror(errno));
  Elf* elf = elf_begin(fd, ELF_C_READ_MMAP, nullptr);
  auto cleanup = [&] {
    if (elf) elf_end(elf);
    ::close(fd);
  };
  GElf_Ehdr ehdr;
  if (!elf || elf_kind(elf) != ELF_K_ELF || !gelf_getehdr(elf, &ehdr)) {
    cleanup();
    return Status::BadInput(path + ": not an ELF file");
  }
  ElfSymbols out;
  out.path_ = path;
  out.fixed_address_ = ehdr.e_type == ET_EXEC;
  size_t phnum = 0;
  elf_getphdrnum(elf, &phnum);
  for (size_t i = 0; i < phnum; ++i) {
    GElf_Phdr phdr;
    if (!gelf_getphdr(elf, static_cast<int>(i), &phdr)) continue;
    if (phdr.p_type == PT_LOAD) out.segments_.push_back({phdr.p_vaddr, phdr.p_offset, phdr.p_filesz});
  }
  Elf_Scn* symtab = nullptr;
  Elf_Scn* dynsym = nullptr;
  for (Elf_Scn* scn = elf_nextscn(elf, nullptr); scn; scn = elf_nextscn(elf, scn)) {
    GElf_Shdr shdr;
    if (!gelf_getshdr(scn, &shdr)) continue;
    if (shdr.sh_type == SHT_SYMTAB) symtab = scn;
    if (shdr.sh_type == SHT_DYNSYM) dynsym = scn;
    if (shdr.sh_type == SHT_NOTE && out.build_id_.empty()) {
      Elf_Data* data = elf_getdata(scn, nullptr);
      size_t offset = 0, name_offset = 0, desc_offset = 0;
      GElf_Nhdr note;
      while (data && (offset = gelf_getnote(data, offset, &note, &name_offset, &desc_offset)) > 0) {
        if (note.n_type == NT_GNU_BUILD_ID && note.n_namesz == 4 &&
            std::memcmp(static_cast<const char*>(data->d_buf) + name_offset, "GNU", 4) == 0) {
          static const char* kHex = "0123456789abcdef";
          const auto* desc = static_cast<const unsigned char*>(data->d_buf) + desc_offset;
          for (size_t b = 0; b < note.n_descsz; ++b) {
            out.build_id_ += kHex[desc[b] >> 4];
            out.build_id_ += kHex[desc[b] & 15];
          }
          break;
        }
      }
    }
  }
  for (Elf_Scn* scn : {symtab, dynsym}) {
    if (!scn) continue;
    GElf_Shdr shdr;
    gelf_getshdr(scn, &shdr);
    Elf_Data* data = elf_getdata(scn, nullptr);
    if (!data || shdr.sh_entsize == 0) continue;
    const size_t count = shdr.sh_size / shdr.sh_entsize;
    for (size_t i = 0; i < count; ++i) {
      GElf_Sym sym;
      if (!gelf_getsym(data, static_cast<int>(i), &sym)) continue;
      if (sym.st_value == 0 || sym.st_shndx == SHN_UNDEF) continue;
      const bool function = GELF_ST_TYPE(sym.st_info) == STT_FUNC;
      if (!function && (objects.empty() || GELF_ST_TYPE(sym.st_info) != STT_OBJECT)) continue;
      const char* name = elf_strptr(elf, shdr.sh_link, sym.st_name);
      if (!name || !*name) continue;
      if (!function) {
        if (std::find(objects.begin(), objects.end(), name) != objects.end())
          out.objects_.emplace_back(name, sym.st_value);
        continue;
      }
      std::string symbol_name(name);
      if (auto at = symbol_name.find('@'); at != std::string::npos) symbol_name.resize(at);  // version suffix
      out.functions_.push_back({sym.st_value, sym.st_size, symbol_name, ""});
    }
    if (!out.functions_.empty()) break;  // .symtab has everything .dynsym has
  }
  cleanup();
  // Aliases share an address (getpid/__getpid): all are kept for Find; the one with the fewest leading
  // underscores comes first and is what FunctionAt reports.
  auto underscores = [](const std::string& n) { return n.find_first_not_of('_'); };
  std::sort(out.functions_.begin(), out.functions_.end(), [&](const ElfFunction& a, const ElfFunction& b) {
    if (a.address != b.address) return a.address < b.address;
    if (underscores(a.name) != underscores(b.name)) return underscores(a.name) < underscores(b.name);
    return a.name < b.name;
  });
  out.functions_.erase(std::unique(out.functions_.begin(), out.functions_.end(),
                                   [](const ElfFunction& a, const ElfFunction& b) {
                                     return a.address == b.address && a.name == b.name;
                                   }),
                       out.functions_.end());
  for (ElfFunction& f : out.functions_) f.demangled = Demangle(f.name);
  return out;
}

std::vector<const ElfFunction*> ElfSymbols::Find(const std::function<bool(const ElfFunction&)>& match) const {
  std::vector<const ElfFunction*> found;
  for (const ElfFunction& f : functions_)
    if (match(f)) found.push_back(&f);
  return found;
}

const ElfFunction* ElfSymbols::FunctionAt(uint64_t address) const {
  auto it = std::upper_bound(functions_.begin(), functions_.end(), address,
                             [](uint64_t a, const ElfFunction& f) { return a < f.address; });
  if (it == functions_.begin()) return nullptr;
  --it;
  while (it != functions_.begin() && std::prev(it)->address == it->address) --it;  // the preferred alias
  // Symbols without a size (hand-written assembly) cover up to the next symbol.
  if (it->size != 0 && address >= it->address + it->size) return nullptr;
  return &*it;
}

std::optional<uint64_t> ElfSymbols::FileOffset(uint64_t address) const {
  for (const Segment& s : segments_)
    if (address >= s.vaddr && address < s.vaddr + s.filesz) return address - s.vaddr + s.offset;
  return std::nullopt;
}

std::optional<uint64_t> ElfSymbols::AddressOfFileOffset(uint64_t offset) const {
  for (const Segment& s : segments_)
    if (offset >= s.offset && offset < s.offset + s.filesz) return offset - s.offset + s.vaddr;
  return std::nullopt;
}

}  // namespace strata::recorder
