// Checks of numeric command-line values beyond what CLI11's Range does (Range lets NaN and inf through,
// since every comparison with NaN is false). Each failure is a usage error naming the option and why.
#pragma once

#include <CLI/CLI.hpp>

#include <cmath>
#include <string>

namespace strata::cli {

/// A finite number (not nan, not inf).
inline CLI::Validator Finite() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        try {
          size_t used = 0;
          const double v = std::stod(text, &used);
          if (used != text.size()) return "'" + text + "' is not a number";
          if (!std::isfinite(v)) return "'" + text + "' is not a finite number";
        } catch (const std::exception&) {
          return "'" + text + "' is not a number";
        }
        return "";
      },
      "FINITE");
}

/// A power of ten from `lo` to `hi` (op-table time units: 1 = ns ... 1e9 = s).
inline CLI::Validator PowerOfTen(double lo, double hi) {
  return CLI::Validator(
      [lo, hi](std::string& text) -> std::string {
        double v = 0;
        try {
          size_t used = 0;
          v = std::stod(text, &used);
          if (used != text.size()) return "'" + text + "' is not a number";
        } catch (const std::exception&) {
          return "'" + text + "' is not a number";
        }
        const double exponent = std::log10(v);
        if (!std::isfinite(v) || v < lo || v > hi || std::fabs(exponent - std::round(exponent)) > 1e-9)
          return "'" + text + "' is not a power of ten from " + CLI::detail::to_string(lo) + " to " +
                 CLI::detail::to_string(hi) + " (1e9 = seconds, 1e6 = ms, 1e3 = us, 1 = ns)";
        return "";
      },
      "POWER-OF-TEN");
}

}  // namespace strata::cli
