// Indexing a recording's stacks from its meta records ("stack" and "py_stack", docs/segment-format.md):
// done once per segment by the recording's index (store/recorded_run.h), so that the analysis reads the
// indexed frames (store/stack_frames.h) and never the JSON records.
// Invariants: malformed records are ignored; the last record of a (pid, id) wins.
#pragma once

#include <vector>

#include <nlohmann/json.hpp>

#include "store/stack_frames.h"

namespace strata {

/// The user stacks among a segment's meta records.
UserStacks IndexUserStacks(const std::vector<nlohmann::json>& meta);

/// The Python stacks among a segment's meta records.
PythonStacks IndexPythonStacks(const std::vector<nlohmann::json>& meta);

}  // namespace strata
