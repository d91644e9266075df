// What `strata record` probes in user space, and where: collective entry points (c10d process groups,
// gloo algorithms, the NCCL API), CUDA runtime synchronization and launch calls, and the libraries that
// hold them. Probe points are found by demangled symbol name at attach time, so no PyTorch, gloo, NCCL
// or CUDA version is hard-wired.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "recorder/elf_symbols.h"
#include "store/probe_kind.h"

namespace strata::recorder {

// What a probe is: strata::ProbeKind (store/probe_kind.h), one enum for the recorder, the segment format and
// every reader.

struct ProbeSpec {
  std::vector<std::string_view> libraries;  // library base-name prefixes searched, e.g. "libgloo.so"
  std::string_view function;                // demangled name (before the parameter list)
  std::string_view op;                      // collective or call name reported, e.g. "all_reduce"
  ProbeKind kind;
  int count_arg = 0;  // which integer argument (1-based: 2, 3 or 4) is the count (elements; gloo: bytes); 0 none
};
const std::vector<ProbeSpec>& DefaultProbeSpecs();

// One resolved probe point.
struct ProbePoint {
  std::string library;  // resolved path
  std::string symbol;   // demangled name
  std::string op;
  ProbeKind kind;
  uint64_t file_offset = 0;
  bool emit = true;   // one event per call (else counted only)
  int count_arg = 0;  // the element count's argument (ProbeSpec::count_arg)
  // A return probe too. Off for gloo's algorithms when c10d's completion is probed (kCollectiveDone): a C++
  // exception (gloo's timeout) cannot unwind through a return probe's trampoline, and the rank would abort
  // (SIGABRT) instead of raising the error to Python.
  bool returns = true;
};

// Libraries that may hold probe points: the ldconfig cache, `extra` paths (files or directories) and
// the libraries mapped by `pids`. Returns real paths, one per file.
std::vector<std::string> FindProbeLibraries(const std::vector<std::string>& extra, const std::vector<int>& pids);

// Resolves the specs against the libraries; `notes` gets one line per library searched. When c10d's gloo
// completion (kCollectiveDone) is found, gloo's algorithms get no return probe (see ProbePoint::returns): the
// gloo they probe is then c10d's (PyTorch links its own, or Debian's libgloo serves only c10d).
std::vector<ProbePoint> ResolveProbes(const std::vector<std::string>& libraries, const std::vector<ProbeSpec>& specs,
                                      std::vector<std::string>* notes);

}  // namespace strata::recorder
