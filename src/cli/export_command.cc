// `strata export` command-line glue (see export_command.h).
#include "cli/export_command.h"

#include <cstdio>
#include <string>
#include <string_view>

#include "analysis/diagnosis/diagnose.h"
#include "analysis/diagnosis/thresholds.h"
#include "cli/output.h"
#include "cli/validators.h"
#include "core/text_escape.h"
#include "reports/perfetto_export.h"

namespace strata::cli {

namespace {

struct ExportOptions {
  std::string format = "perfetto";
  std::string out;
  double min_effect_pct = 100.0 * diagnosis::thresholds::kMinEffect;
};

ExportOptions& Options() {
  static ExportOptions options;
  return options;
}

}  // namespace

CLI::App* AddExportCommand(CLI::App& app) {
  ExportOptions& o = Options();
  CLI::App* cmd = app.add_subcommand(
      "export",
      "write all ranks of a job on one clock-aligned timeline (Chrome trace-event JSON that ui.perfetto.dev and "
      "chrome://tracing open): a process per rank, threads and GPU streams as in the traces, the recorder's "
      "layers beside them, the diagnosis' findings as instant events and its blame edges as flow arrows");
  cmd->add_option("--format", o.format, "output format")->check(CLI::IsMember({"perfetto"}))->capture_default_str();
  cmd->add_option("-o,--output", o.out, "FILE to write (replaced atomically), or - for standard output")->required();
  cmd->add_option("--min-effect", o.min_effect_pct, "smallest effect of a finding drawn, in % of step time")
      ->check(Finite() & CLI::Range(0.0, 100.0))
      ->capture_default_str();
  return cmd;
}

int RunExportCommand(LoadedJob& job) {
  const ExportOptions& o = Options();
  diagnosis::DiagnoseOptions options;
  options.min_effect = o.min_effect_pct / 100.0;
  for (const auto& bad : job.unreadable) options.left_out.push_back({bad.path, bad.error});
  const diagnosis::DiagnosisResult result = diagnosis::Diagnose(job.store, options, &job.recorded);
  // Written as it is made: the output of a large job is hundreds of MB, held nowhere in memory.
  OutputFile out;
  Status st = out.Open(o.out, job.files);
  if (st.ok())
    st =
        WritePerfettoJson(job.store, job.recorded, result, [&out](std::string_view bytes) { return out.Write(bytes); });
  if (st.ok()) st = out.Commit();
  if (!st.ok()) {
    std::fprintf(stderr, "strata: %s\n", TerminalSafe(st.message()).c_str());
    return 1;
  }
  return 0;
}

}  // namespace strata::cli
