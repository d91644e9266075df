// `strata export`: command-line glue for writing a job as one merged, clock-aligned timeline
// (reports/perfetto_export.h). AddExportCommand registers the subcommand and its own options (main.cc adds
// the input options shared with `strata diagnose`); RunExportCommand diagnoses the loaded job exactly as
// `strata diagnose` does and writes the timeline with the findings drawn on it.
#pragma once

#include <CLI/CLI.hpp>

#include "importers/job_loader.h"

namespace strata::cli {

/// Registers `export` on `app`; the options live until the program ends.
CLI::App* AddExportCommand(CLI::App& app);

/// Exports `job` as the parsed options say; returns the process exit code (0, or 1 after printing why).
int RunExportCommand(LoadedJob& job);

}  // namespace strata::cli
