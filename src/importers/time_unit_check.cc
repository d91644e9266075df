// The op table's time-unit plausibility check (time_unit_check.h).
#include "importers/time_unit_check.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/robust_stats.h"

namespace strata {

namespace {

// The unit a user would name, by nanoseconds per unit.
struct Unit {
  double ns;
  const char* name;
};
constexpr Unit kUnits[] = {{1, "nanoseconds"}, {1e3, "microseconds"}, {1e6, "milliseconds"}, {1e9, "seconds"}};

std::string UnitName(double ns) {
  for (const Unit& u : kUnits)
    if (u.ns == ns) return u.name;
  return fmt::format("units of {:g} ns", ns);
}

// "2213 s", "2.21 ms", "750 ns": the importers' own short form (reports/text_format.h is above them).
std::string FormatDurationNs(double ns) {
  if (ns >= 1e9) return fmt::format("{:.4g} s", ns / 1e9);
  if (ns >= 1e6) return fmt::format("{:.3g} ms", ns / 1e6);
  if (ns >= 1e3) return fmt::format("{:.3g} µs", ns / 1e3);
  return fmt::format("{:.3g} ns", ns);
}

// The option's value as a user types it: "1", "1e3", "1e9" (--time-unit-ns is a power of ten).
std::string UnitArg(double ns) {
  const long exponent = std::lround(std::log10(ns));
  return exponent == 0 ? "1" : fmt::format("1e{}", exponent);
}

bool Plausible(double step_ns) { return step_ns >= kMinPlausibleStepNs && step_ns <= kMaxPlausibleStepNs; }

}  // namespace

std::optional<double> MedianOpTableStepNs(const TraceStore& store) {
  // (rank, step) packed in one key; first start and last end of its rows.
  std::unordered_map<uint64_t, std::pair<int64_t, int64_t>> span;
  const SliceTable& s = store.slices;
  for (size_t i = 0; i < s.size(); ++i) {
    const uint64_t key = uint64_t{store.track(s.track[i]).rank} << 32 | static_cast<uint32_t>(s.step[i]);
    const int64_t end = s.ts_ns[i] + s.dur_ns[i];
    auto [it, inserted] = span.try_emplace(key, s.ts_ns[i], end);
    if (inserted) continue;
    it->second.first = std::min(it->second.first, s.ts_ns[i]);
    it->second.second = std::max(it->second.second, end);
  }
  std::vector<double> steps;
  steps.reserve(span.size());
  for (const auto& [key, first_last] : span)
    if (first_last.second > first_last.first)
      steps.push_back(static_cast<double>(first_last.second - first_last.first));
  if (steps.empty()) return std::nullopt;
  return Median(std::move(steps));
}

std::optional<std::string> TimeUnitWarning(const std::string& path, double median_step_ns, double time_unit_ns) {
  if (Plausible(median_step_ns)) return std::nullopt;
  // The units that give plausible steps, the most typical step (about a second) first.
  std::vector<std::pair<double, const Unit*>> candidates;
  for (const Unit& u : kUnits) {
    const double step = median_step_ns / time_unit_ns * u.ns;
    if (u.ns != time_unit_ns && Plausible(step)) candidates.emplace_back(std::abs(std::log10(step / 1e9)), &u);
  }
  std::sort(candidates.begin(), candidates.end());
  std::string better;
  for (const auto& [distance, u] : candidates)
    better += fmt::format("{}--time-unit-ns {} if they are in {} (steps of {})", better.empty() ? "" : ", or ",
                          UnitArg(u->ns), u->name, FormatDurationNs(median_step_ns / time_unit_ns * u->ns));
  return fmt::format(
      "{}: implausible time unit: the op table's steps last {} (median) with its times read in {} (--time-unit-ns "
      "{}); a training step takes between {} and {}{}",
      path, FormatDurationNs(median_step_ns), UnitName(time_unit_ns), UnitArg(time_unit_ns),
      FormatDurationNs(kMinPlausibleStepNs), FormatDurationNs(kMaxPlausibleStepNs),
      better.empty() ? "" : ": pass " + better);
}

}  // namespace strata
