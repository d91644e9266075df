// HTA's view of a slice's time (see hta_time.h).
#include "analysis/hta_time.h"

#include <charconv>
#include <cmath>

namespace strata {

double HtaMicros(int64_t ns) {
  const uint64_t mag = ns < 0 ? 0 - static_cast<uint64_t>(ns) : static_cast<uint64_t>(ns);
  char text[32];
  char* p = text;
  if (ns < 0) *p++ = '-';
  p = std::to_chars(p, text + sizeof(text), mag / 1000).ptr;
  const auto frac = static_cast<unsigned>(mag % 1000);
  *p++ = '.';
  *p++ = static_cast<char>('0' + frac / 100);
  *p++ = static_cast<char>('0' + frac / 10 % 10);
  *p++ = static_cast<char>('0' + frac % 10);
  double value = 0;
  std::from_chars(text, p, value);
  return value;
}

HtaSpan HtaSpanOf(int64_t ts_ns, int64_t dur_ns, bool round) {
  const double ts = HtaMicros(ts_ns);
  const double end = ts + HtaMicros(dur_ns);
  return round ? HtaSpan{std::ceil(ts), std::floor(end)} : HtaSpan{ts, end};
}

}  // namespace strata
