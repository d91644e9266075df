// Rounding of reported numbers to a fixed number of decimals (reports keep outputs stable and readable).
#pragma once

#include <cmath>

namespace strata {

inline double RoundTo(double v, int digits) {
  const double scale = std::pow(10.0, digits);
  return std::round(v * scale) / scale;
}

}  // namespace strata
