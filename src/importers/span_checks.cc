// The importers' one span rule (see span_checks.h).
#include "importers/span_checks.h"

namespace strata {

TimeField ReadTimeField(std::string_view text, int scale) {
  TimeField f;
  f.text = text;
  if (!text.empty()) f.parse = ParseScaledDecimal(text, scale, &f.ns);
  return f;
}

std::optional<SkipId> CheckTimeField(const TimeField& field, const FieldReasons& reasons) {
  if (field.text.empty()) return reasons.missing;
  switch (field.parse) {
    case NumberParse::kOk:
      return std::nullopt;
    case NumberParse::kNotNumber:
      return reasons.invalid;
    case NumberParse::kOutOfRange:
      return reasons.out_of_range;
  }
  return reasons.invalid;
}

std::optional<SkipId> CheckSpan(const TimeField& start, const TimeField& duration, const SpanRules& rules) {
  if (rules.range_first) {
    if (start.parse == NumberParse::kOutOfRange) return rules.start.out_of_range;
    if (duration.parse == NumberParse::kOutOfRange) return rules.duration.out_of_range;
  }
  if (auto why = CheckTimeField(start, rules.start)) return why;
  if (auto why = CheckTimeField(duration, rules.duration)) return why;
  if (duration.ns < 0) return SkipId::kNegativeDuration;
  if (duration.ns > kMaxSliceDurationNs) return SkipId::kAbsurdDuration;
  if (start.ns > INT64_MAX - duration.ns) return rules.end_out_of_range;  // the end would not fit int64 ns
  return std::nullopt;
}

std::optional<SkipId> CheckPairDuration(int64_t begin_ns, int64_t end_ns, int64_t* dur) {
  if (__builtin_sub_overflow(end_ns, begin_ns, dur)) return SkipId::kDurationOutOfRange;
  if (*dur > kMaxSliceDurationNs) return SkipId::kAbsurdDuration;
  return std::nullopt;
}

}  // namespace strata
