// `strata synth`: command-line glue for the synthetic trace generator (src/synth). AddSynthCommand
// registers the subcommand and its options; RunSynthCommand runs it once the command line is parsed.
#pragma once

#include <CLI/CLI.hpp>

namespace strata::cli {

/// Registers `synth` on `app`; the options live until the program ends.
CLI::App* AddSynthCommand(CLI::App& app);

/// Generates the job described by the parsed options; returns the process exit code.
int RunSynthCommand();

}  // namespace strata::cli
