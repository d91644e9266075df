// HTA's idle-time breakdown (get_idle_time_breakdown): why each GPU stream of a rank sat idle between two
// kernels. Per stream, over the rank's device rows (hta_rows.h) sorted by start (ties by end):
//   gap(k) = start(k) - end(k - 1), for every row k but the stream's first (HTA's idle_interval; negative when
//            rows overlap on the stream, and summed as HTA sums it);
//   host wait    when the CPU row with k's correlation (HTA's runtime event: the launch call) started after
//                end(k - 1): the CPU had not enqueued k when the GPU ran out of work;
//   kernel wait  otherwise, when gap(k) < consecutive_kernel_delay: the launch overhead of back-to-back kernels;
//   other        otherwise (waits on events of other streams, or k has no correlated CPU row).
// consecutive_kernel_delay is HTA's default, 30 in the trace's unit: HTA's documentation says 30 ns, but its
// data frames hold the trace's µs, so it compares the gaps with 30 µs (docs/hta-semantics.md §11).
// This idle time is per stream; the temporal breakdown's idle (gpu_breakdown.h) is the rank's time with no
// stream busy, so the two differ when streams overlap.
// Invariant: for every stream, host_wait_us + kernel_wait_us + other_us is the sum of its gaps.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "analysis/hta_rows.h"
#include "store/trace_store.h"

namespace strata {

enum class IdleCategory : uint8_t { kHostWait = 0, kKernelWait = 1, kOther = 2 };
/// "host_wait", "kernel_wait", "other" (HTA's names).
const char* IdleCategoryName(IdleCategory c);

struct IdleTimeOptions {
  double consecutive_kernel_delay_us = 30;  // HTA's consecutive_kernel_delay default (see the header comment)
};

struct StreamIdleTime {
  int64_t stream = 0;
  std::array<double, 3> idle_us{};  // by IdleCategory
  std::array<uint64_t, 3> gaps{};   // number of gaps in each category
  double total_us() const { return idle_us[0] + idle_us[1] + idle_us[2]; }
};

struct IdleTimeBreakdown {
  std::vector<StreamIdleTime> streams;  // by stream id
  std::array<double, 3> idle_us{};      // summed over the streams
  double total_us() const { return idle_us[0] + idle_us[1] + idle_us[2]; }
};

IdleTimeBreakdown ComputeIdleTime(const TraceStore& store, const HtaRows& rows, const IdleTimeOptions& options = {});

}  // namespace strata
