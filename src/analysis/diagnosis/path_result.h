// PathResult: what one diagnosis path measured of a job — the data-parallel trace path
// (trace_diagnosis.h), the grouped trace path (group_diagnosis.h) or the op-table path
// (op_table_diagnosis.h) — returned as a value. Diagnose (diagnose.h) assembles it into the DiagnosisResult
// before the layers judged after it (counters, the recording, a stall, the status), so a path sees nothing
// of the result but its own product and no pass after it reaches back into it.
// Invariants: the fields mean what DiagnosisResult's of the same names mean (result.h); stragglers are
// sorted latest first; `lateness_vs_peers_ms` is filled by the data-parallel trace path only.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "analysis/diagnosis/result.h"

namespace strata::diagnosis {

struct PathResult {
  // How the job was modelled: its steps, clocks and collectives, as the path read them.
  std::vector<int64_t> steps;
  model::StepSource step_source = model::StepSource::kNone;
  double step_time_median_ms = 0, step_time_p90_ms = 0;
  std::map<int32_t, double> clock_offsets_us;
  double clock_residual_us = 0;
  bool host_clocks = false;
  model::CollectiveSource collective_source = model::CollectiveSource::kNone;
  size_t matched = 0;
  size_t unmatched_collective_calls = 0;
  JobLayout layout;
  // What it found and what fixing it would save.
  std::vector<Straggler> stragglers;
  std::vector<Finding> findings;
  WhatIf whatif;
  // What it could not analyse, and problems in the inputs or the comparison (result.h).
  std::vector<std::string> notes, input_problems, caveats, comparison_problems;
  // Per rank number and step, its lateness at collectives against its peers' median arrival (ms).
  std::map<int32_t, std::map<int64_t, double>> lateness_vs_peers_ms;
};

}  // namespace strata::diagnosis
