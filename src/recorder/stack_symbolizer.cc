// Stack symbolization (see stack_symbolizer.h).
#include "recorder/stack_symbolizer.h"

#include <algorithm>
#include <cstdio>
#include <fstream>

namespace strata::recorder {

nlohmann::json Frame::ToJson() const {
  nlohmann::json j = {{"fn", function}, {"module", module}, {"offset", offset}};
  if (interpreter) j["interpreter"] = true;
  if (!file.empty()) {
    j["file"] = file;
    j["line"] = line;
  }
  return j;
}

StackSymbolizer::StackSymbolizer(std::string kallsyms_path) : kallsyms_path_(std::move(kallsyms_path)) {}

bool StackSymbolizer::IsInterpreterFrame(const std::string& function) {
  for (const char* name : {"_PyEval_EvalFrameDefault", "_PyEval_EvalFrame", "PyEval_EvalCode", "_PyEval_Vector",
                           "_PyFunction_Vectorcall", "method_vectorcall", "_PyObject_Call", "PyObject_Call",
                           "_PyObject_MakeTpCall", "slot_tp_call", "cfunction_call", "_PyObject_VectorcallTstate"})
    if (function.rfind(name, 0) == 0) return true;
  return false;
}

const ElfSymbols* StackSymbolizer::Symbols(const std::string& path) {
  auto it = files_.find(path);
  if (it == files_.end()) {
    auto loaded = ElfSymbols::Load(path);
    it = files_.emplace(path, loaded.ok() ? std::make_unique<ElfSymbols>(std::move(loaded).value()) : nullptr).first;
  }
  return it->second.get();
}

std::vector<Frame> StackSymbolizer::User(const std::vector<MapEntry>& maps, const std::vector<uint64_t>& ips) {
  std::vector<Frame> frames;
  for (size_t i = 0; i < ips.size(); ++i) {
    const uint64_t ip = ips[i];
    Frame frame{"?", "?", ip, false, "", 0};
    auto m = std::find_if(maps.begin(), maps.end(), [&](const MapEntry& e) { return ip >= e.start && ip < e.end; });
    if (m != maps.end()) {
      frame.module = m->path;
      const uint64_t file_offset = ip - m->start + m->offset;
      frame.offset = file_offset;
      if (const ElfSymbols* symbols = Symbols(m->path)) {
        const auto address =
            symbols->fixed_address() ? std::optional<uint64_t>(ip) : symbols->AddressOfFileOffset(file_offset);
        if (address)
          if (const ElfFunction* f = symbols->FunctionAt(*address)) {
            frame.function = f->demangled;
            frame.offset = *address - f->address;
            frame.interpreter = IsInterpreterFrame(f->name);
            // Callers' addresses are return addresses: the call is the instruction before.
            if (auto source = lines_.Lookup(m->path, i > 0 ? *address - 1 : *address)) {
              frame.file = source->file;
              frame.line = source->line;
            }
          }
      }
    }
    frames.push_back(std::move(frame));
  }
  return frames;
}

void StackSymbolizer::LoadKallsyms() {
  kallsyms_loaded_ = true;
  std::ifstream in(kallsyms_path_);
  std::string line;
  while (std::getline(in, line)) {
    unsigned long long address = 0;
    char type = 0;
    char name[256] = {};
    if (std::sscanf(line.c_str(), "%llx %c %255s", &address, &type, name) != 3 || address == 0) continue;
    if (type != 't' && type != 'T' && type != 'W' && type != 'w') continue;
    kallsyms_.emplace_back(address, name);
  }
  std::sort(kallsyms_.begin(), kallsyms_.end());
}

std::vector<Frame> StackSymbolizer::Kernel(const std::vector<uint64_t>& ips) {
  if (!kallsyms_loaded_) LoadKallsyms();
  std::vector<Frame> frames;
  for (uint64_t ip : ips) {
    Frame frame{"?", "[kernel]", ip, false};
    auto it = std::upper_bound(kallsyms_.begin(), kallsyms_.end(), ip,
                               [](uint64_t a, const std::pair<uint64_t, std::string>& s) { return a < s.first; });
    if (it != kallsyms_.begin()) {
      --it;
      frame.function = it->second;
      frame.offset = ip - it->first;
    }
    frames.push_back(std::move(frame));
  }
  return frames;
}

}  // namespace strata::recorder
