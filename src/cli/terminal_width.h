// The width the text reports wrap to: --width when given; else, for standard output, COLUMNS when set (in the
// environment, piped or not: `COLUMNS=80 strata diagnose DIR | less`) or the terminal's own size; else a
// fixed default, so what a script, a file or a test reads does not depend on the window it ran in.
// Invariant: the result is at least 1; the report raises it to its own minimum.
#pragma once

#include <cstddef>
#include <optional>
#include <string>

#include <CLI/CLI.hpp>

namespace strata::cli {

/// COLUMNS as a width: a whole number from 1 to 9999, else nullopt (unset, empty, "abc", "0").
std::optional<size_t> ColumnsVariable(const char* value);

/// --width N on `cmd` into `width` (0 when not given): the text report's columns, at least the reports' minimum.
void AddWidthOption(CLI::App* cmd, size_t& width);

/// The columns for output written to `path` ("" or "-": standard output): `requested` (--width) when not 0;
/// for standard output COLUMNS when set, else the terminal's width when it is a terminal; else `fallback`.
size_t TextWidth(const std::string& path, size_t requested, size_t fallback);

}  // namespace strata::cli
