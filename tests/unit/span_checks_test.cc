// The importers' one span rule (importers/span_checks): each failure's reason, the order of the checks, and
// the two formats' options (Kineto checks the start whole first; op tables report out-of-range first).
#include "importers/span_checks.h"

#include <gtest/gtest.h>

namespace strata {
namespace {

constexpr SpanRules kKineto{{SkipId::kMissingTimestamp, SkipId::kInvalidTimestamp, SkipId::kTimestampOutOfRange},
                            {SkipId::kMissingDuration, SkipId::kInvalidDuration, SkipId::kDurationOutOfRange},
                            SkipId::kTimestampOutOfRange,
                            false};
constexpr SpanRules kOpTable{{SkipId::kInvalidTimestamp, SkipId::kInvalidTimestamp, SkipId::kIntegerOutOfRange},
                             {SkipId::kInvalidDuration, SkipId::kInvalidDuration, SkipId::kIntegerOutOfRange},
                             SkipId::kIntegerOutOfRange,
                             true};

std::optional<SkipId> Check(std::string_view ts, std::string_view dur, const SpanRules& rules) {
  return CheckSpan(ReadTimeField(ts, 3), ReadTimeField(dur, 3), rules);
}

TEST(SpanChecks, AcceptsAGoodSpan) {
  EXPECT_EQ(Check("10.5", "2", kKineto), std::nullopt);
  const TimeField f = ReadTimeField("10.5", 3);
  EXPECT_EQ(f.ns, 10'500);
}

TEST(SpanChecks, EachFailureHasItsReason) {
  EXPECT_EQ(Check("", "1", kKineto), SkipId::kMissingTimestamp);
  EXPECT_EQ(Check("1", "", kKineto), SkipId::kMissingDuration);
  EXPECT_EQ(Check("x", "1", kKineto), SkipId::kInvalidTimestamp);
  EXPECT_EQ(Check("1", "x", kKineto), SkipId::kInvalidDuration);
  EXPECT_EQ(Check("1e30", "1", kKineto), SkipId::kTimestampOutOfRange);
  EXPECT_EQ(Check("1", "1e30", kKineto), SkipId::kDurationOutOfRange);
  EXPECT_EQ(Check("1", "-1", kKineto), SkipId::kNegativeDuration);
  EXPECT_EQ(Check("1", "604800000001", kKineto), SkipId::kAbsurdDuration);              // a week + 1 µs
  EXPECT_EQ(Check("1", "604800000000", kKineto), std::nullopt);                         // exactly a week
  EXPECT_EQ(Check("9223372036854775", "1000", kKineto), SkipId::kTimestampOutOfRange);  // end past int64
  EXPECT_EQ(Check("9223372036854775", "1000", kOpTable), SkipId::kIntegerOutOfRange);
  EXPECT_EQ(Check("", "1", kOpTable), SkipId::kInvalidTimestamp);  // op tables: empty is invalid
}

TEST(SpanChecks, OrderDiffersByOption) {
  // A start that is not a number and a duration out of range: Kineto names the start, op tables the range.
  EXPECT_EQ(Check("x", "1e30", kKineto), SkipId::kInvalidTimestamp);
  EXPECT_EQ(Check("x", "1e30", kOpTable), SkipId::kIntegerOutOfRange);
  // Field problems come before value problems.
  EXPECT_EQ(Check("x", "-1", kKineto), SkipId::kInvalidTimestamp);
}

TEST(SpanChecks, PairDuration) {
  int64_t dur = -1;
  EXPECT_EQ(CheckPairDuration(10, 25, &dur), std::nullopt);
  EXPECT_EQ(dur, 15);
  EXPECT_EQ(CheckPairDuration(INT64_MIN, INT64_MAX, &dur), SkipId::kDurationOutOfRange);
  EXPECT_EQ(CheckPairDuration(0, kMaxSliceDurationNs + 1, &dur), SkipId::kAbsurdDuration);
}

}  // namespace
}  // namespace strata
