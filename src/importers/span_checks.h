// The one rule by which importers accept a slice's start time and duration (the Kineto and op-table
// importers had near-copies of it). A field is missing, not a number or out of range; a duration is
// negative or absurd (over a week); a slice's end must fit int64 nanoseconds. What differs between formats
// is passed as options: the reason each failure is counted under, and whether a value out of range is
// reported before a value that is not a number.
// Invariant: a check returns the first failing reason in the documented order, or nothing when the slice
// can be stored; it never changes the values.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "core/decimal.h"
#include "core/skip_reasons.h"

namespace strata {

/// Longest slice accepted: a week. Longer is not a real op (skipped as absurd_duration).
inline constexpr int64_t kMaxSliceDurationNs = 7LL * 24 * 3600 * 1000000000LL;

/// A time field as read: its text (empty when absent), how it parsed, and its value in ns when it did.
struct TimeField {
  std::string_view text;
  NumberParse parse = NumberParse::kNotNumber;
  int64_t ns = 0;
};

/// Parses `text` (a decimal number of units 10^-scale of the unit wanted, e.g. µs with scale 3 for ns).
TimeField ReadTimeField(std::string_view text, int scale);

/// The reason each way a field can fail is counted under.
struct FieldReasons {
  SkipId missing;       // empty text
  SkipId invalid;       // not a number
  SkipId out_of_range;  // beyond int64 after scaling
};

/// What differs between the importers' span checks.
struct SpanRules {
  FieldReasons start, duration;
  SkipId end_out_of_range;  // start + duration beyond int64 ns
  // Report a field out of range before a field that is not a number (op tables: a row with both is
  // integer_out_of_range); otherwise the start is checked whole before the duration (Kineto).
  bool range_first = false;
};

/// Why a field is unusable, or nothing.
std::optional<SkipId> CheckTimeField(const TimeField& field, const FieldReasons& reasons);

/// Why a slice (start, duration) is skipped, or nothing: the fields (in the rules' order), then a negative
/// duration, an absurd one (over kMaxSliceDurationNs), then an end beyond int64 ns.
std::optional<SkipId> CheckSpan(const TimeField& start, const TimeField& duration, const SpanRules& rules);

/// A B/E pair's duration (end - begin) in *dur, or why it is skipped: duration_out_of_range when the
/// difference overflows, absurd_duration when it is over kMaxSliceDurationNs.
std::optional<SkipId> CheckPairDuration(int64_t begin_ns, int64_t end_ns, int64_t* dur);

}  // namespace strata
