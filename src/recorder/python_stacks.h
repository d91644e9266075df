// The Python stacks of a recording: which traced processes run a CPython whose frames the recorder can walk
// (their frame-walk offsets, python_frames.h), and each distinct stack of a process given an id once, with the
// "py_stack" meta record that names it (docs/segment-format.md). The recorder writes the record; this class
// decides ids and names them, so the recording loop keeps no Python state of its own (issue 50: values, not a
// blackboard).
// Invariants: ids are dense from 0 in the order stacks are first seen, across processes, and never reused;
// frame lists of one process whose frames execute the same lines (of the same code objects) share an id, and
// a record is returned only the first time; an empty frame list has id -1 and no record; a forgotten
// (exited) process has no offsets and no stacks: if its pid comes back (another process), its code objects are
// read again and its stacks get new ids and records.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <optional>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "recorder/bpf/record_events.h"
#include "recorder/python_frames.h"

namespace strata::recorder {

/// See the file comment.
class PythonStacks {
 public:
  /// A stack's id and, the first time it is seen, the "py_stack" meta record naming its frames.
  struct Interned {
    int32_t id = -1;
    std::optional<nlohmann::json> record;
  };

  /// From now on `pid`'s frames can be walked with `offsets`.
  void Watch(int pid, const strata_py_offsets& offsets) { offsets_[pid] = offsets; }
  /// The offsets of a watched process; nullptr otherwise.
  const strata_py_offsets* OffsetsOf(int pid) const;
  /// The process exited: its offsets, cached code objects and stacks go (its pid and addresses may be reused).
  void Forget(int pid);

  /// The id of `frames` (innermost first) of process `tgid`, each frame named by its code object and the line
  /// its last instruction is on, read from the process while it runs.
  Interned Intern(uint32_t tgid, const std::vector<PythonFrameAddress>& frames);
  /// The stack of thread `tid` of a watched process, read from its memory now (for a sleeping thread, whose
  /// frames cannot change meanwhile); id -1 when `pid` is not watched or the thread has no Python frames.
  Interned ReadNow(int pid, long tid);

 private:
  PythonCodeNames names_;
  std::map<int, strata_py_offsets> offsets_;  // pid -> its CPython's frame-walk offsets
  // (tgid, [(code object, line)]) -> id
  std::map<std::pair<uint32_t, std::vector<std::pair<uint64_t, int>>>, int32_t> ids_;
  int32_t next_id_ = 0;
};

}  // namespace strata::recorder
