// Python frames of sampled threads, for the CPython versions whose layout strata knows (3.11, Debian 12's).
// The kernel side walks the interpreter's frame chain at each CPU sample (record.bpf.c, emit_py_stack) with
// the offsets given here, and sends the code objects' addresses; user space names them while the process
// runs, reading co_qualname, co_filename and co_firstlineno from its memory (process_vm_readv).
// The 3.11 offsets were measured on Debian's python3.11 (tests/recorder: test_python_frames checks them
// against a live interpreter's own objects). Other versions get no Python frames and a note saying so.
// Invariants: a code object is read once per process (cached); an unreadable one is named "?".
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "recorder/bpf/record_events.h"
#include "recorder/process_info.h"

namespace strata::recorder {

struct PythonFrame {
  std::string function;  // co_qualname ("Net.forward")
  std::string file;      // co_filename
  int line = 0;          // co_firstlineno
};

/// The frame-walk offsets of `process` when it runs a CPython this recorder knows, with `runtime` set to
/// where _PyRuntime is in it; nullopt otherwise (`why` says why when it is a Python of another version).
std::optional<strata_py_offsets> PythonOffsetsOf(const ProcessInfo& process, std::string* why);

/// The Python frames of thread `tid` of `pid` (code objects, innermost first), read from its memory now by
/// the kernel side's walk (record.bpf.c, walk_py_stack): for a thread that sleeps, whose frames cannot
/// change meanwhile (a running thread's may be read half-changed). Empty when the thread never ran Python
/// or the memory cannot be read.
std::vector<uint64_t> ReadPythonStack(pid_t pid, pid_t tid, const strata_py_offsets& offsets);

/// Names code objects of traced processes, once each.
class PythonCodeNames {
 public:
  const PythonFrame& Name(pid_t pid, uint64_t code);
  void Forget(pid_t pid);  // the process exited (its addresses may be reused)

 private:
  std::map<std::pair<pid_t, uint64_t>, PythonFrame> cache_;
};

}  // namespace strata::recorder
