// ParseScaledDecimal / ParseInt64 / ParseDouble: exact scaling, rounding, exponents, errors.
#include "core/decimal.h"

#include <gtest/gtest.h>

#include <limits>

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
