// The exit codes of strata's analysis commands (summary, diagnose, diff, inspect, export, synth), one table for
// all of them: an error exits with the code of its kind (core/status.h), so that scripts can tell a bad input
// from a full disk without reading the message. docs/usage.md ("Exit codes and errors") is the contract.
// Invariant: the codes documented before kinds existed keep their meaning: 1 is still what the environment
// failed at (unreadable input, failed write, memory), 2 a usage error, 3 and 4 --fail-on's verdicts.
// (record, agent and serve report their errors with their own codes: cli/messages.h.)
#pragma once

#include "core/status.h"

namespace strata::cli {

inline constexpr int kExitError = 1;         // kResource: open/read/write failed, memory or size limit
inline constexpr int kExitUsage = 2;         // kUsage: wrong arguments or options
inline constexpr int kExitFindings = 3;      // --fail-on findings, and the diagnosis has findings
inline constexpr int kExitInconclusive = 4;  // --fail-on inconclusive, and the diagnosis is inconclusive
inline constexpr int kExitBadInput = 5;      // kBadInput: an input is malformed or contradicts another
inline constexpr int kExitUnsupported = 6;   // kUnsupported or kNotATrace: an input strata does not read
inline constexpr int kExitInternal = 7;      // kInternal: a bug in strata

/// The exit code of an error of `kind`.
inline int ExitCodeFor(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::kBadInput:
      return kExitBadInput;
    case ErrorKind::kNotATrace:
    case ErrorKind::kUnsupported:
      return kExitUnsupported;
    case ErrorKind::kResource:
      return kExitError;
    case ErrorKind::kInternal:
      return kExitInternal;
    case ErrorKind::kUsage:
      return kExitUsage;
  }
  return kExitInternal;
}

}  // namespace strata::cli
