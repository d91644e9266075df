// `strata serve` on the command line: options (CLI11) -> agent::ServeOptions -> agent::RunServe.
#pragma once

#include <CLI/CLI.hpp>

namespace strata::cli {

CLI::App* AddServeCommand(CLI::App& app);
int RunServeCommand();

}  // namespace strata::cli
