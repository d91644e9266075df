// Stack frames of a recording: the user stacks `strata record` symbolized (its "stack" meta records,
// docs/segment-format.md), indexed by (pid, stack id), and the rule that names a stack by its culprit
// frame — the frame nearest the leaf that is the program's own work rather than the C library, the
// dynamic loader, the OpenMP runtime's spinning or the interpreter's evaluation loop.
// Invariants: frames are leaf first, as recorded; a culprit name is "function [module file name]" with a
// C++ argument list dropped; a stack of only skipped frames is named by its leaf.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace strata {

struct StackFrame {
  std::string function;  // "?" when unknown
  std::string module;    // file path, or "[kernel]"
  bool interpreter = false;
};

using UserStacks = std::map<std::pair<uint32_t, int32_t>, std::vector<StackFrame>>;  // (pid, id) -> frames

/// The user stacks among a segment's meta records (malformed records are ignored).
UserStacks IndexUserStacks(const std::vector<nlohmann::json>& meta);

/// The culprit frame's name (see above); "?" for an empty stack.
std::string CulpritFrame(const std::vector<StackFrame>& frames);

}  // namespace strata
