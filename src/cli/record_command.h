// `strata record` on the command line: options (CLI11) → recorder::RecordOptions → recorder::Record.
#pragma once

#include <CLI/CLI.hpp>

namespace strata::cli {

// Adds the subcommand to `app`; RunRecordCommand runs it when it was parsed and returns the exit code.
CLI::App* AddRecordCommand(CLI::App& app);
int RunRecordCommand();

}  // namespace strata::cli
