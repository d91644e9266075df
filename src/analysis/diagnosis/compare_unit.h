// CompareUnit: what the ranks of a job were compared over — its steps, or, when it has one step, the
// collectives of that step (collective_units.h) — and how a count of them is said. Every output that
// speaks of "late steps" says it through UnitSpan, so a collective is never called a step.
// Invariant: the names are the JSON contract's `job.unit` values.
#pragma once

#include <cstddef>
#include <string>

#include <fmt/format.h>

namespace strata::diagnosis {

enum class CompareUnit { kStep, kCollective };

inline const char* CompareUnitName(CompareUnit u) { return u == CompareUnit::kStep ? "step" : "collective"; }

/// "in every step", "in 3 of 8 steps", "at every collective", "at 49 of 85 collectives".
inline std::string UnitSpan(CompareUnit u, size_t late, size_t total) {
  const bool step = u == CompareUnit::kStep;
  if (late == total) return step ? "in every step" : "at every collective";
  return fmt::format("{} {} of {} {}", step ? "in" : "at", late, total, step ? "steps" : "collectives");
}

}  // namespace strata::diagnosis
