// The width the text reports wrap to: a terminal's own (COLUMNS when set, else the tty's size), and a fixed
// default for files and pipes, so what a script or a test reads does not depend on the window it ran in.
// Invariant: the result is at least 1; the report raises it to its own minimum.
#pragma once

#include <cstddef>
#include <string>

namespace strata::cli {

/// The columns for output written to `path` ("" or "-": standard output): COLUMNS or the terminal's width
/// when that output is a terminal, else `fallback`.
size_t TextWidth(const std::string& path, size_t fallback);

}  // namespace strata::cli
