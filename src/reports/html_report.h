// `strata diagnose --format html`: one self-contained HTML page (no network; CSS and JS inline) drawing a
// diagnosis: verdict, status and saving; a rank × step heatmap; KAIR-style rank × rank KS divergence and how
// often each rank was the slowest; the top finding's blame chain over the worst step's timeline; the what-if
// attribution as bars; recorder layers; evidence tables with units.
// The page is the template html_report_template.html (embedded at build time) with two JSON documents
// inserted as <script type="application/json">: the diagnosis exactly as `--format json` writes it, and the
// per-rank view (html_view.h). The page's script draws everything from them.
// Invariants: the inserted JSON cannot close its <script> element (every '<' is written as \u003c); the
// output does not depend on anything but its arguments (same result, same bytes).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace strata {

/// The page for `diagnosis` (DiagnosisToJson) and `view` (BuildReportView).
std::string RenderHtmlReport(const nlohmann::ordered_json& diagnosis, const nlohmann::ordered_json& view);

}  // namespace strata
