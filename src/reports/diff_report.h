// Renders a RunDiff (`strata diff BASE TEST`): text for people (the step time before → after first, then
// the change by kind and the top changes by total time, ≤ 100 columns), JSON for machines (schema
// "strata.diff/1": each side's inputs and selection, the kinds, the names new and gone, and every name with
// base/test counts and total µs and their differences, HTA's compare_traces columns), and one self-contained
// HTML page (no script, no network) drawing the top changes as bars.
// Invariant: the JSON's "names" hold every name of the diff (the parity test reads them all); text and HTML
// show the largest changes and say how many are left out.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "analysis/diff/run_diff.h"
#include "reports/text_format.h"
#include "store/trace_store.h"

namespace strata {

/// The two runs as loaded: their stores (for the inputs and skipped counts) and how the user named them.
struct DiffSides {
  const TraceStore& base;
  const TraceStore& test;
  std::string base_label;  // the BASE argument as given
  std::string test_label;
};

nlohmann::ordered_json DiffToJson(const DiffSides& sides, const diff::RunDiff& diff);

/// `top`: rows of the top-changes table (ProfilerStep rows are left out: the headline states them); `width`:
/// the columns the table's names and the skipped-event lines fit in (at least kMinTextWidth).
std::string DiffToText(const DiffSides& sides, const diff::RunDiff& diff, size_t top = 20,
                       size_t width = kDefaultTextWidth);

std::string DiffToHtml(const DiffSides& sides, const diff::RunDiff& diff, size_t top = 30);

}  // namespace strata
