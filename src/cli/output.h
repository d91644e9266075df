// Writing command output: to stdout, or atomically to a file (temp file + rename, so a reader never sees
// a half-written report).
#pragma once

#include <string>

#include "core/status.h"

namespace strata {

Status WriteOutput(const std::string& path, const std::string& content);

}  // namespace strata
