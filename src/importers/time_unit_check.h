// The plausibility of an op table's time unit: an op table's times carry no unit, so one read in the wrong
// unit (--time-unit-ns) gives steps of hours or of nanoseconds and every figure after it is off by powers of
// ten. This check looks at the steps the table's rows make (per rank and step: first start to last end) and,
// when their median lies outside what a training step can take, returns a warning that names the option and
// the units that would give plausible steps. It never changes the data.
// Invariant: O(rows) time, one entry per (rank, step) of memory; no warning for a table without complete steps.
#pragma once

#include <optional>
#include <string>

#include "store/trace_store.h"

namespace strata {

/// A training step shorter than this is not plausible (shorter than one kernel launch and its collective).
inline constexpr double kMinPlausibleStepNs = 10e3;  // 10 µs
/// A training step longer than this is not plausible (the steps of the public op tables: 0.1-50 s).
inline constexpr double kMaxPlausibleStepNs = 600e9;  // 10 min

/// The median step of an op-table store (every rank's steps), in ns, or nullopt without one.
std::optional<double> MedianOpTableStepNs(const TraceStore& store);

/// A warning for `path` when the median step read with `time_unit_ns` is implausible, else nullopt.
std::optional<std::string> TimeUnitWarning(const std::string& path, double median_step_ns, double time_unit_ns);

}  // namespace strata
