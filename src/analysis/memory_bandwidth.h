// HTA's memory bandwidth counters (get_memory_bw_time_series / get_memory_bw_summary): the bandwidth in use by
// memory copies and sets over time, per kind of copy, from Kineto's args["memory bandwidth (GB/s)"] of the
// rank's device rows (hta_rows.h) that HTA counts as memory kernels (model/kernel_type.h):
//   kind: "Memset" for names starting Memset, the first 11 characters ("Memcpy HtoD", "Memcpy DtoH",
//         "Memcpy DtoD", ...) for names starting Memcpy, else "Memcpy Unknown" (HTA's get_memory_kernel_type);
//   series per kind: +bandwidth at a row's start, −bandwidth at its end (a row of 0 µs lasts 1 µs, as HTA
//         rounds it up), in time order, the running sum after each change; at equal times ends come before
//         starts (a copy that ends as the next begins is not counted twice; HTA's sort leaves ties in no set
//         order), then store order;
//   summary per kind: pandas describe() of the series' points above 0 (count, mean, sample std, min, the
//         25/50/75 % quantiles by linear interpolation, max), as HTA's summary drops the 0 points.
// Rows without the arg (other importers, older Kineto) take no part; a kind with no row is absent.
// Invariant: a kind's series ends at 0 up to rounding (every +bandwidth has its −bandwidth).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "analysis/hta_rows.h"
#include "store/trace_store.h"

namespace strata {

struct MemoryBandwidthKind {
  std::string kind;                               // "Memcpy HtoD", "Memset", ...
  std::vector<std::pair<double, double>> series;  // (µs, GB/s in use after the change)
  size_t points = 0;                              // of the series above 0 (the summary's count)
  double mean = 0, min = 0, p25 = 0, p50 = 0, p75 = 0, max = 0;
  std::optional<double> std;  // sample standard deviation; absent for fewer than 2 points
};

/// Every kind with a row carrying a bandwidth, by kind name; empty when none does.
std::vector<MemoryBandwidthKind> ComputeMemoryBandwidth(const TraceStore& store, const HtaRows& rows);

/// HTA's kind of a memory kernel name (see the header comment).
std::string MemoryKernelKind(std::string_view name);

}  // namespace strata
