// HTA's rows of one rank: which slices HTA's analyses read, with HTA's µs times. Every HTA-compatible
// analysis (the temporal and kernel breakdowns, the idle-time breakdown, kernel launch statistics, queue
// length) starts from these rows, so the step rule and the device-row rule are written once, here:
//  1. rows: complete slices with a category other than "Trace";
//  2. times: HTA's µs doubles, rounded inward to whole µs when the input wrote some ts as a JSON float
//     (hta_time.h);
//  3. step rule: with >= 2 distinct ProfilerStep#N names, keep the non-GPU rows starting before the last
//     step's start (or up to its end with include_last_step) and the GPU rows (stream >= 0, correlation >= 0)
//     whose correlation matches a kept row; otherwise keep every row;
//  4. device rows: kept rows on a stream (stream != -1) other than gpu_user_annotation; on MTIA traces also a
//     memory kernel recorded without a stream that starts inside a ProfilerStep (HTA's fix-up).
// See docs/hta-semantics.md for where each rule comes from.
// Invariant: HtaRows::kept holds each kept slice once: in store order, or when the step rule filtered, its CPU
// rows then its GPU rows, each in store order; start <= end unless the input's duration was negative (HTA does
// not drop those either).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "store/trace_store.h"

namespace strata {

struct HtaRow {
  SliceId row;
  double start = 0;  // µs, HTA's view (rule 2)
  double end = 0;
  bool device = false;  // rule 4
};

struct HtaRows {
  std::vector<HtaRow> kept;
  bool last_step_dropped = false;  // the step rule dropped GPU rows (the last step's)
  bool rounded_to_us = false;      // rule 2 rounded
};

/// The kept rows of one rank (`slice_rows`, read from `input`). nullopt when no row of the rank is on a
/// device stream at all (a CPU-only trace, an op table, a recording without GPU series).
std::optional<HtaRows> KeptHtaRows(const TraceStore& store, const SliceRows& slice_rows, const InputInfo& input,
                                   bool include_last_step);

/// The GPU stream a device row runs on: its track's stream, or for an MTIA memory row without one (rule 4)
/// its thread id, as HTA's fix-up sets it.
int64_t DeviceStreamOf(const TraceStore& store, SliceId row);

}  // namespace strata
