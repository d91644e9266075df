// HTA's view of a slice's time: the microsecond doubles its JSON parser makes of the trace's text, and the
// inward rounding to whole µs it applies when the trace wrote some ts as a JSON float (docs/hta-semantics.md
// §2). Shared by the HTA-compatible metrics (gpu_breakdown) and the run diff (diff/run_diff).
// Invariant: HtaMicros(ns) is the double nearest to ns / 1000 (what a JSON parser reads from that µs text).
#pragma once

#include <cstdint>

namespace strata {

/// The double nearest to ns / 1000, i.e. what a JSON parser makes of the µs text the trace held (when it had
/// at most 3 decimals). Dividing a double by 1000 would round twice: ns values of epoch timestamps exceed
/// 2^53, so the conversion goes through the decimal text, which from_chars rounds correctly.
double HtaMicros(int64_t ns);

/// A slice's start and end in µs as HTA computes them: end = ts + dur in double arithmetic; with `round`
/// (the input had float timestamps) start = ceil(ts) and end = floor(ts + dur).
struct HtaSpan {
  double start = 0;
  double end = 0;
};
HtaSpan HtaSpanOf(int64_t ts_ns, int64_t dur_ns, bool round);

}  // namespace strata
