// How the CLI renders what a long-running command says while it runs (the library's on_message callback)
// and the error that stops it: one line each on stderr, "strata COMMAND: ...". The one place for that format.
#pragma once

#include <cstdio>
#include <functional>
#include <string>

#include "core/status.h"

namespace strata::cli {

/// An on_message callback printing each line as "strata COMMAND: LINE" on stderr.
inline std::function<void(const std::string&)> StderrMessages(const char* command) {
  return [command](const std::string& line) { std::fprintf(stderr, "strata %s: %s\n", command, line.c_str()); };
}

/// Prints "strata COMMAND: MESSAGE" on stderr and returns `exit_code`.
inline int ReportError(const char* command, const std::string& message, int exit_code = 2) {
  std::fprintf(stderr, "strata %s: %s\n", command, message.c_str());
  return exit_code;
}

}  // namespace strata::cli
