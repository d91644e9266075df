// ParseScaledDecimal / ParseInt64 / ParseDouble: exact scaling, rounding, exponents, errors.
#include "core/decimal.h"

#include <gtest/gtest.h>

#include <limits>
#include <random>
#include <string>

namespace strata {
namespace {

int64_t Scaled(std::string_view token, int scale) {
  int64_t v = -777;
  EXPECT_EQ(ParseScaledDecimal(token, scale, &v), NumberParse::kOk) << "token '" << token << "'";
  return v;
}

NumberParse ScaledStatus(std::string_view token, int scale) {
  int64_t v = 0;
  return ParseScaledDecimal(token, scale, &v);
}

TEST(Decimal, MicrosecondsToNanosecondsExactly) {
  // Beyond double's 53-bit mantissa: a double round trip would lose the last digits.
  EXPECT_EQ(Scaled("1682725898236567.125", 3), 1682725898236567125LL);
  EXPECT_EQ(Scaled("1682725898236567", 3), 1682725898236567000LL);
  EXPECT_EQ(Scaled("1682725898236567.999", 3), 1682725898236567999LL);
  EXPECT_EQ(Scaled("1682725898236567.001", 3), 1682725898236567001LL);
  EXPECT_EQ(Scaled("68.0", 3), 68000);
  EXPECT_EQ(Scaled("0", 3), 0);
  EXPECT_EQ(Scaled("0.5", 3), 500);
  EXPECT_EQ(Scaled(".5", 3), 500);
  EXPECT_EQ(Scaled("5.", 3), 5000);
  EXPECT_EQ(Scaled("+5", 3), 5000);
}

TEST(Decimal, RoundsOnTheDigitAfterTheScale) {
  EXPECT_EQ(Scaled("1.2344", 3), 1234);
  EXPECT_EQ(Scaled("1.2345", 3), 1235);  // half away from zero
  EXPECT_EQ(Scaled("1.2349", 3), 1235);
  EXPECT_EQ(Scaled("1.23449999", 3), 1234);  // only the 4th fractional digit decides
  EXPECT_EQ(Scaled("1.23450001", 3), 1235);
  EXPECT_EQ(Scaled("0.9995", 3), 1000);  // carry into the integer part
  EXPECT_EQ(Scaled("2.5", 0), 3);
  EXPECT_EQ(Scaled("2.4", 0), 2);
  // seconds -> ns (op tables)
  EXPECT_EQ(Scaled("2.6883304119110107", 9), 2688330412LL);
  EXPECT_EQ(Scaled("0.8543476462364197", 9), 854347646LL);
}

TEST(Decimal, Negatives) {
  EXPECT_EQ(Scaled("-5", 3), -5000);
  EXPECT_EQ(Scaled("-1.2345", 3), -1235);  // away from zero
  EXPECT_EQ(Scaled("-1.2344", 3), -1234);
  EXPECT_EQ(Scaled("-0.0004", 3), 0);
  EXPECT_EQ(Scaled("-0", 3), 0);
  EXPECT_EQ(Scaled("-1682725898236567.125", 3), -1682725898236567125LL);
}

TEST(Decimal, ExponentForms) {
  EXPECT_EQ(Scaled("1e3", 3), 1000000);
  EXPECT_EQ(Scaled("1E3", 0), 1000);
  EXPECT_EQ(Scaled("2.5e2", 3), 250000);
  EXPECT_EQ(Scaled("3.75e-1", 1), 4);  // 3.75 (exact in binary) rounds half away from zero
  EXPECT_EQ(Scaled("-3.75e-1", 1), -4);
  EXPECT_EQ(Scaled("1.25e-1", 1), 1);
  EXPECT_EQ(Scaled("1.682725898e+15", 3), 1682725898000000000LL);
  EXPECT_EQ(ScaledStatus("1e30", 3), NumberParse::kOutOfRange);
  EXPECT_EQ(ScaledStatus("-1e30", 3), NumberParse::kOutOfRange);
  EXPECT_EQ(ScaledStatus("1e", 3), NumberParse::kNotNumber);
  EXPECT_EQ(ScaledStatus("1e+", 3), NumberParse::kNotNumber);
  EXPECT_EQ(ScaledStatus("1e3x", 3), NumberParse::kNotNumber);
}

TEST(Decimal, NotNumbers) {
  for (std::string_view bad : {"abc", "", " ", "-", "+", ".", "-.", "1.2.3", "1,5", "0x10", "12abc", "nan", "inf",
                               "-inf", "\"\"", "true", "null", "1 2", "--1"}) {
    EXPECT_EQ(ScaledStatus(bad, 3), NumberParse::kNotNumber) << "token '" << bad << "'";
  }
}

TEST(Decimal, OutOfRangeBeyondInt64) {
  int64_t v = 0;
  ASSERT_EQ(ParseScaledDecimal("9223372036854775807", 0, &v), NumberParse::kOk);
  EXPECT_EQ(v, std::numeric_limits<int64_t>::max());
  EXPECT_EQ(ScaledStatus("9223372036854775808", 0), NumberParse::kOutOfRange);
  EXPECT_EQ(ScaledStatus("99999999999999999999", 0), NumberParse::kOutOfRange);
  EXPECT_EQ(ScaledStatus("99999999999999999999999999999999999999", 3), NumberParse::kOutOfRange);
  EXPECT_EQ(ScaledStatus("-99999999999999999999", 3), NumberParse::kOutOfRange);
  // In range as µs, out of range once scaled to ns.
  ASSERT_EQ(ParseScaledDecimal("9223372036854775.807", 3, &v), NumberParse::kOk);
  EXPECT_EQ(v, std::numeric_limits<int64_t>::max());
  EXPECT_EQ(ScaledStatus("9223372036854775.808", 3), NumberParse::kOutOfRange);
  EXPECT_EQ(ScaledStatus("9223372036854776", 3), NumberParse::kOutOfRange);
  // Rounding up past the maximum.
  EXPECT_EQ(ScaledStatus("9223372036854775.8075", 3), NumberParse::kOutOfRange);
}

TEST(Decimal, QuotedAndSpacedNumbers) {
  EXPECT_EQ(Scaled("\"12.5\"", 3), 12500);
  EXPECT_EQ(Scaled("  42 ", 3), 42000);
  EXPECT_EQ(Scaled("\t7\r\n", 0), 7);
  EXPECT_EQ(Scaled(" \"-3\" ", 0), -3);
  EXPECT_EQ(ScaledStatus("\"12.5", 3), NumberParse::kNotNumber);
  EXPECT_EQ(ScaledStatus("\"abc\"", 3), NumberParse::kNotNumber);
}

TEST(Decimal, BadScale) {
  EXPECT_EQ(ScaledStatus("1", -1), NumberParse::kNotNumber);
  EXPECT_EQ(ScaledStatus("1", 10), NumberParse::kNotNumber);
  EXPECT_EQ(Scaled("1", 9), 1000000000);
}

TEST(Decimal, ParseInt64) {
  int64_t v = 0;
  ASSERT_EQ(ParseInt64("3", &v), NumberParse::kOk);
  EXPECT_EQ(v, 3);
  ASSERT_EQ(ParseInt64("3.0", &v), NumberParse::kOk);
  EXPECT_EQ(v, 3);
  ASSERT_EQ(ParseInt64("3.000", &v), NumberParse::kOk);
  EXPECT_EQ(v, 3);
  ASSERT_EQ(ParseInt64("-12", &v), NumberParse::kOk);
  EXPECT_EQ(v, -12);
  ASSERT_EQ(ParseInt64("\"17\"", &v), NumberParse::kOk);
  EXPECT_EQ(v, 17);
  ASSERT_EQ(ParseInt64("9223372036854775807", &v), NumberParse::kOk);
  EXPECT_EQ(v, std::numeric_limits<int64_t>::max());
  v = 99;
  EXPECT_EQ(ParseInt64("3.5", &v), NumberParse::kNotNumber);
  EXPECT_EQ(ParseInt64("3.01", &v), NumberParse::kNotNumber);
  EXPECT_EQ(ParseInt64("abc", &v), NumberParse::kNotNumber);
  EXPECT_EQ(ParseInt64("", &v), NumberParse::kNotNumber);
  EXPECT_EQ(ParseInt64(".", &v), NumberParse::kNotNumber);
  EXPECT_EQ(v, 99) << "a failed parse must not write its output";
  EXPECT_EQ(ParseInt64("9223372036854775808", &v), NumberParse::kOutOfRange);
  EXPECT_EQ(ParseInt64("123456789012345678901234567890", &v), NumberParse::kOutOfRange);
}

// Plain tokens (digits, '.', digits) take a fast path up to 18 digits once scaled and the general one beyond:
// both must agree with exact arithmetic at every length, scale and rounding digit.
__extension__ using Wide = __int128;  // exact reference arithmetic beyond int64

TEST(Decimal, PlainTokensMatchExactArithmeticOnBothPaths) {
  std::mt19937_64 rng(13);
  for (int n = 0; n < 200000; ++n) {
    const int scale = static_cast<int>(rng() % 10);
    const int int_digits = static_cast<int>(rng() % 21);
    const int frac_digits = static_cast<int>(rng() % 12);
    const bool dot = frac_digits > 0 || rng() % 2;
    if (int_digits + frac_digits == 0) continue;
    std::string token;
    for (int k = 0; k < int_digits; ++k) token.push_back(static_cast<char>('0' + rng() % 10));
    if (dot) token.push_back('.');
    for (int k = 0; k < frac_digits; ++k) token.push_back(static_cast<char>('0' + rng() % 10));
    // Exact value * 10^scale, rounded half away from zero on the first dropped digit.
    Wide exact = 0;
    bool too_big = false;
    for (char c : token.substr(0, int_digits)) {
      exact = exact * 10 + (c - '0');
      too_big |= exact > std::numeric_limits<int64_t>::max();
    }
    const std::string frac = dot ? token.substr(int_digits + 1) : std::string();
    for (int k = 0; k < scale; ++k) {
      exact = exact * 10 + (k < static_cast<int>(frac.size()) ? frac[k] - '0' : 0);
      too_big |= exact > std::numeric_limits<int64_t>::max();
    }
    if (static_cast<int>(frac.size()) > scale && frac[scale] >= '5') ++exact;
    too_big |= exact > std::numeric_limits<int64_t>::max();
    int64_t v = -1;
    const NumberParse got = ParseScaledDecimal(token, scale, &v);
    if (too_big) {
      EXPECT_EQ(got, NumberParse::kOutOfRange) << token << " scale " << scale;
    } else {
      ASSERT_EQ(got, NumberParse::kOk) << token << " scale " << scale;
      EXPECT_EQ(v, static_cast<int64_t>(exact)) << token << " scale " << scale;
      ASSERT_EQ(ParseScaledDecimal("-" + token, scale, &v), NumberParse::kOk) << token;
      EXPECT_EQ(v, -static_cast<int64_t>(exact)) << "-" << token << " scale " << scale;
    }
  }
}

TEST(Decimal, PlainTokensAtTheFastPathLimit) {
  EXPECT_EQ(Scaled("999999999999999.999", 3), 999999999999999999LL);    // 18 digits scaled: fast path
  EXPECT_EQ(Scaled("1234567890123456.789", 3), 1234567890123456789LL);  // 19: general path
  EXPECT_EQ(ScaledStatus("9999999999999999.999", 3), NumberParse::kOutOfRange);
  EXPECT_EQ(Scaled("5.", 3), 5000);
  EXPECT_EQ(Scaled("007.5", 3), 7500);
  EXPECT_EQ(Scaled("1.2345", 3), 1235);  // a digit past the scale: rounded on the general path
  int64_t v = 0;
  ASSERT_EQ(ParseInt64("-123", &v), NumberParse::kOk);
  EXPECT_EQ(v, -123);
  ASSERT_EQ(ParseInt64("12.", &v), NumberParse::kOk);
  EXPECT_EQ(v, 12);
  ASSERT_EQ(ParseInt64("-0", &v), NumberParse::kOk);
  EXPECT_EQ(v, 0);
  ASSERT_EQ(ParseInt64("999999999999999999", &v), NumberParse::kOk);
  EXPECT_EQ(v, 999999999999999999LL);
  ASSERT_EQ(ParseInt64("-9223372036854775807", &v), NumberParse::kOk);
  EXPECT_EQ(v, -9223372036854775807LL);
  EXPECT_EQ(ParseInt64("-", &v), NumberParse::kNotNumber);
  EXPECT_EQ(ParseInt64("--1", &v), NumberParse::kNotNumber);
  EXPECT_EQ(ParseInt64("-12.5", &v), NumberParse::kNotNumber);
}

TEST(Decimal, ParseDouble) {
  double d = 0;
  ASSERT_EQ(ParseDouble("1.5", &d), NumberParse::kOk);
  EXPECT_DOUBLE_EQ(d, 1.5);
  ASSERT_EQ(ParseDouble(" \"-2e3\" ", &d), NumberParse::kOk);
  EXPECT_DOUBLE_EQ(d, -2000.0);
  EXPECT_EQ(ParseDouble("x", &d), NumberParse::kNotNumber);
  EXPECT_EQ(ParseDouble("", &d), NumberParse::kNotNumber);
  EXPECT_EQ(ParseDouble("1e999", &d), NumberParse::kOutOfRange);
}

}  // namespace
}  // namespace strata
