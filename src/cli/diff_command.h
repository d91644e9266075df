// `strata diff BASE TEST`: command-line glue for comparing two runs (analysis/diff/run_diff.h, rendered by
// reports/diff_report.h). AddDiffCommand registers the subcommand and its options; RunDiffCommand loads each
// run with the job loader, reads and compares them, and writes text, JSON or an HTML page.
// Exit codes as the other commands: 0 compared, 1 an input error (unreadable, no steps), 2 a usage error
// (including a --base-rank/--test-rank/--base-step/--test-step the run does not have).
#pragma once

#include <CLI/CLI.hpp>

namespace strata::cli {

/// Registers `diff` on `app`; the options live until the program ends.
CLI::App* AddDiffCommand(CLI::App& app);

/// Runs the parsed `diff`; returns the process exit code after printing any error as "strata: ...".
int RunDiffCommand();

}  // namespace strata::cli
