// Exact decimal-text to scaled-integer conversion, e.g. "1682725898236567.125" µs -> ns, without the
// precision loss of going through double. Used by every importer for timestamps and durations.
#pragma once

#include <cstdint>
#include <string_view>

namespace strata {

enum class NumberParse { kOk, kNotNumber, kOutOfRange };

/// Parses a JSON/CSV number token and multiplies it by 10^scale (0..9), rounding half away from zero.
/// Plain decimals are converted exactly; exponent forms go through long double. Surrounding spaces and
/// one pair of double quotes are accepted.
NumberParse ParseScaledDecimal(std::string_view token, int scale, int64_t* out);

/// Parses a base-10 integer token (or a decimal with only zeros after the point) into int64.
NumberParse ParseInt64(std::string_view token, int64_t* out);

/// Parses any number token into a double.
NumberParse ParseDouble(std::string_view token, double* out);

}  // namespace strata
