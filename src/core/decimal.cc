// Exact decimal parsing (see decimal.h).
#include "core/decimal.h"

#include <cmath>
#include <cstdlib>
#include <limits>
#include <string>

namespace strata {

namespace {

std::string_view Trim(std::string_view t) {
  while (!t.empty() && (t.front() == ' ' || t.front() == '\t' || t.front() == '\n' || t.front() == '\r'))
    t.remove_prefix(1);
  while (!t.empty() && (t.back() == ' ' || t.back() == '\t' || t.back() == '\n' || t.back() == '\r'))
    t.remove_suffix(1);
  if (t.size() >= 2 && t.front() == '"' && t.back() == '"') t = t.substr(1, t.size() - 2);
  return t;
}

constexpr int64_t kPow10[] = {1, 10, 100, 1000, 10000, 100000, 1000000, 10000000, 100000000, 1000000000};

// Digits a plain token may have in all (after scaling) to take the fast paths: below 10^18 nothing can
// overflow int64.
constexpr int kPlainMaxDigits = 18;

bool IsDigit(char c) { return static_cast<unsigned char>(c - '0') < 10; }

// The token almost every trace writes: digits, then optionally '.' and at most `scale` fractional digits, at
// most kPlainMaxDigits digits once scaled. Such a token is exact and needs no trimming, rounding or range
// check; anything else (a sign, spaces, quotes, an exponent, more digits) returns false and takes the
// general path, which gives the same value for these tokens.
bool ParsePlainScaled(std::string_view t, int scale, int64_t* out) {
  const char* p = t.data();
  const char* const end = p + t.size();
  uint64_t value = 0;
  int digits = 0;
  for (; p < end && IsDigit(*p); ++p, ++digits) value = value * 10 + static_cast<unsigned>(*p - '0');
  if (digits == 0) return false;
  int frac = 0;
  if (p < end && *p == '.') {
    for (++p; p < end && IsDigit(*p); ++p, ++frac) {
      if (frac == scale) return false;  // a digit to round on
      value = value * 10 + static_cast<unsigned>(*p - '0');
    }
  }
  if (p != end || digits + scale > kPlainMaxDigits) return false;
  *out = static_cast<int64_t>(value) * kPow10[scale - frac];
  return true;
}

}  // namespace

NumberParse ParseScaledDecimal(std::string_view token, int scale, int64_t* out) {
  if (scale >= 0 && scale <= 9 && ParsePlainScaled(token, scale, out)) return NumberParse::kOk;
  std::string_view t = Trim(token);
  if (t.empty() || scale < 0 || scale > 9) return NumberParse::kNotNumber;
  size_t i = 0;
  bool negative = false;
  if (t[0] == '-' || t[0] == '+') {
    negative = t[0] == '-';
    ++i;
  }
  const size_t int_start = i;
  constexpr uint64_t kLimit = (UINT64_MAX - 9) / 10;  // value * 10 + digit cannot overflow below this
  uint64_t value = 0;
  while (i < t.size() && t[i] >= '0' && t[i] <= '9') {
    if (value > kLimit) return NumberParse::kOutOfRange;
    value = value * 10 + static_cast<unsigned>(t[i] - '0');
    ++i;
  }
  size_t int_digits = i - int_start;
  int frac_used = 0;
  int round_digit = 0;
  size_t frac_digits = 0;
  if (i < t.size() && t[i] == '.') {
    ++i;
    while (i < t.size() && t[i] >= '0' && t[i] <= '9') {
      if (frac_used < scale) {
        if (value > kLimit) return NumberParse::kOutOfRange;
        value = value * 10 + static_cast<unsigned>(t[i] - '0');
        ++frac_used;
      } else if (frac_digits == static_cast<size_t>(scale)) {
        round_digit = t[i] - '0';
      }
      ++frac_digits;
      ++i;
    }
  }
  if (int_digits + frac_digits == 0) return NumberParse::kNotNumber;
  if (i < t.size() && (t[i] == 'e' || t[i] == 'E')) {
    // Exponent form: rare in traces; fall back to long double (64-bit mantissa).
    std::string copy(t);
    char* end = nullptr;
    const long double v = std::strtold(copy.c_str(), &end);
    if (end != copy.c_str() + copy.size() || !std::isfinite(static_cast<double>(v))) return NumberParse::kNotNumber;
    const long double scaled = std::roundl(v * static_cast<long double>(kPow10[scale]));
    if (scaled >= 9.2e18L || scaled <= -9.2e18L) return NumberParse::kOutOfRange;
    *out = static_cast<int64_t>(scaled);
    return NumberParse::kOk;
  }
  if (i != t.size()) return NumberParse::kNotNumber;
  for (; frac_used < scale; ++frac_used) {
    if (value > kLimit) return NumberParse::kOutOfRange;
    value *= 10;
  }
  if (round_digit >= 5) value += 1;
  if (value > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) return NumberParse::kOutOfRange;
  *out = negative ? -static_cast<int64_t>(value) : static_cast<int64_t>(value);
  return NumberParse::kOk;
}

NumberParse ParseInt64(std::string_view token, int64_t* out) {
  // Plain digits, possibly negative (pids, tids, correlation ids): no trimming or fraction to look for.
  const bool negative = !token.empty() && token[0] == '-';
  if (int64_t v; ParsePlainScaled(token.substr(negative ? 1 : 0), 0, &v)) {
    *out = negative ? -v : v;
    return NumberParse::kOk;
  }
  std::string_view t = Trim(token);
  const size_t dot = t.find('.');
  if (dot != std::string_view::npos) {
    for (size_t k = dot + 1; k < t.size(); ++k)
      if (t[k] != '0') return NumberParse::kNotNumber;
    t = t.substr(0, dot);
  }
  return ParseScaledDecimal(t, 0, out);
}

NumberParse ParseDouble(std::string_view token, double* out) {
  std::string_view t = Trim(token);
  if (t.empty()) return NumberParse::kNotNumber;
  std::string copy(t);
  char* end = nullptr;
  const double v = std::strtod(copy.c_str(), &end);
  if (end != copy.c_str() + copy.size()) return NumberParse::kNotNumber;
  if (!std::isfinite(v)) return NumberParse::kOutOfRange;
  *out = v;
  return NumberParse::kOk;
}

}  // namespace strata
