// `strata agent` on the command line: options (CLI11) -> agent::AgentOptions -> agent::RunAgent.
#pragma once

#include <CLI/CLI.hpp>

namespace strata::cli {

CLI::App* AddAgentCommand(CLI::App& app);
int RunAgentCommand();

}  // namespace strata::cli
