// Stack frames of a recording: the user stacks `strata record` symbolized (its "stack" meta records,
// docs/segment-format.md), indexed by (pid, stack id) once per segment (store/stack_index.h, called by the
// recording's index), and the rule that names a stack by its culprit
// frame — the frame nearest the leaf that is the program's own work rather than the C library, the
// dynamic loader, the OpenMP runtime's spinning or the interpreter's evaluation loop.
// Invariants: frames are leaf first, as recorded; a culprit name is "function [module file name]" with a
// C++ argument list dropped, "function (source.c:line) [module]" when the library had DWARF line info, and
// "[module]" for an address in a library whose symbols do not name it (stripped); a stack of only skipped
// frames is named by its leaf.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace strata {

struct StackFrame {
  std::string function;  // "?" when unknown
  std::string module;    // file path, or "[kernel]"
  bool interpreter = false;
  std::string file;  // source file and line (DWARF), when the library had debug info
  int line = 0;
};

using UserStacks = std::map<std::pair<uint32_t, int32_t>, std::vector<StackFrame>>;  // (pid, id) -> frames

/// The culprit frame's name (see above); "?" for an empty stack.
std::string CulpritFrame(const std::vector<StackFrame>& frames);

/// A Python function on a sampled thread's stack ("py_stack" meta records), innermost first.
struct PythonFrameRef {
  std::string function;  // co_qualname
  std::string file;      // co_filename, as the interpreter has it
  // The line the frame executes (of its last instruction: the call it is in, for a caller), as a traceback
  // or py-spy gives it. Recordings made before the recorder read it (no first_line in their records) hold
  // the function's first line here.
  int line = 0;
  int first_line = 0;  // the function's first line (co_firstlineno: its def, or its first decorator)
};
using PythonStacks = std::map<std::pair<uint32_t, int32_t>, std::vector<PythonFrameRef>>;  // (pid, id) -> frames

/// "Python Net.forward (train.py:42)": the function and the line it executes.
std::string PythonFrameName(const PythonFrameRef& frame);

/// True when the frames run PyTorch's data loading code (torch/utils/data/): the time is data loading
/// wherever it runs (a worker process, or the main thread with num_workers=0).
bool InDataLoading(const std::vector<PythonFrameRef>& frames);

/// What a CPU sample is named by, saying which frame is native and which Python:
///  - "at::native::addmm_out [libtorch_cpu.so] in Python Net.forward (train.py:42)" when the culprit native
///    frame is the program's own work and the Python function that called it is known;
///  - "Python Net.forward (train.py:42)" when the native stack is only the interpreter (pure Python time);
///  - the native culprit alone when no Python frames were recorded.
/// Time under PyTorch's data loading code (torch/utils/data/) is prefixed "DataLoader: " (it is data
/// loading wherever it runs: a worker process, or the main thread with num_workers=0).
std::string SampleName(const std::vector<StackFrame>& native, const std::vector<PythonFrameRef>* python);

}  // namespace strata
