// Python frames of sampled threads, for the CPython versions whose layout strata knows (3.11, Debian 12's).
// The kernel side walks the interpreter's frame chain at each CPU sample (record.bpf.c, emit_py_stack) with
// the offsets given here, and sends each frame's code object and last instruction (prev_instr); user space
// names them while the process runs, reading co_qualname, co_filename, co_firstlineno and co_linetable from
// its memory (process_vm_readv), and turns the instruction's offset in co_code_adaptive into the line the
// frame executes (python_line_table.h): the line a traceback or py-spy gives, the call's line for a caller.
// The 3.11 offsets were measured on Debian's python3.11 (tests/unit/recorder_thread_inspection_test.cc checks
// them against a live interpreter's own objects, tests/recorder/test_record.py's python_frames through the
// kernel side). Other versions get no Python frames and a note saying so.
// Invariants: a code object is read once per process (cached), a line once per (code object, instruction
// offset); an unreadable code object is named "?" (line 0); a frame whose line cannot be told (no instruction
// read, one outside its code, an instruction with no line) is given the function's first line.
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

/// A Python function: what its code object says.
struct PythonCode {
  std::string function;  // co_qualname ("Net.forward")
  std::string file;      // co_filename
  int first_line = 0;    // co_firstlineno
};

/// A frame as the walk finds it: its code object and its last instruction (prev_instr; 0 unknown).
struct PythonFrameAddress {
  uint64_t code = 0;
  uint64_t instr = 0;
  bool operator==(const PythonFrameAddress&) const = default;
};

/// The frame-walk offsets of `process` when it runs a CPython this recorder knows, with `runtime` set to
/// where _PyRuntime is in it; nullopt otherwise (`why` says why when it is a Python of another version).
std::optional<strata_py_offsets> PythonOffsetsOf(const ProcessInfo& process, std::string* why);

/// The Python frames of thread `tid` of `pid` (innermost first), read from its memory now as the kernel
/// side's walk does (record.bpf.c, walk_py_stack): for a thread that sleeps, whose frames cannot change
/// meanwhile (a running thread's may be read half-changed). Empty when the thread never ran Python or the
/// memory cannot be read.
std::vector<PythonFrameAddress> ReadPythonStack(pid_t pid, pid_t tid, const strata_py_offsets& offsets);

/// Names code objects of traced processes, once each, and the lines their frames execute.
class PythonCodeNames {
 public:
  const PythonCode& Name(pid_t pid, uint64_t code);
  /// The line `frame` executes: that of its last instruction (its code object's first line when that cannot
  /// be told).
  int Line(pid_t pid, const PythonFrameAddress& frame);
  void Forget(pid_t pid);  // the process exited (its addresses may be reused)

 private:
  struct Code {
    PythonCode names;
    std::vector<uint8_t> line_table;  // co_linetable (empty: unread)
    int64_t code_units = 0;           // of co_code_adaptive
    std::map<int64_t, int> lines;     // instruction offset (code units) -> line
  };
  Code& Read(pid_t pid, uint64_t code);
  std::map<std::pair<pid_t, uint64_t>, Code> cache_;
};

}  // namespace strata::recorder
