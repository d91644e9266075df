// HTA's idle-time breakdown (see idle_time.h).
#include "analysis/idle_time.h"

#include <algorithm>
#include <map>
#include <optional>
#include <unordered_map>

#include "analysis/runtime_launch.h"

namespace strata {

const char* IdleCategoryName(IdleCategory c) {
  switch (c) {
    case IdleCategory::kHostWait:
      return "host_wait";
    case IdleCategory::kKernelWait:
      return "kernel_wait";
    case IdleCategory::kOther:
      return "other";
  }
  return "other";
}

namespace {

struct StreamRow {
  double start, end;
  std::optional<double> launch_start;  // the correlated CPU row's start
};

IdleCategory Categorize(const StreamRow& row, double prev_end, double delay) {
  if (row.launch_start && *row.launch_start > prev_end) return IdleCategory::kHostWait;
  if (row.start - prev_end < delay) return IdleCategory::kKernelWait;
  return IdleCategory::kOther;
}

StreamIdleTime StreamGaps(int64_t stream, std::vector<StreamRow> rows, double delay) {
  std::sort(rows.begin(), rows.end(), [](const StreamRow& a, const StreamRow& b) {
    return a.start != b.start ? a.start < b.start : a.end < b.end;
  });
  StreamIdleTime out;
  out.stream = stream;
  for (size_t k = 1; k < rows.size(); ++k) {
    const auto c = static_cast<size_t>(Categorize(rows[k], rows[k - 1].end, delay));
    out.idle_us[c] += rows[k].start - rows[k - 1].end;
    ++out.gaps[c];
  }
  return out;
}

}  // namespace

IdleTimeBreakdown ComputeIdleTime(const TraceStore& store, const HtaRows& rows, const IdleTimeOptions& options) {
  const std::unordered_map<int64_t, size_t> cpu = CpuRowsByCorrelation(store, rows);
  std::map<int64_t, std::vector<StreamRow>> by_stream;
  for (const HtaRow& r : rows.kept) {
    if (!r.device) continue;
    StreamRow row{r.start, r.end, std::nullopt};
    const int64_t corr = store.slices.correlation[r.row.value];
    if (const auto it = cpu.find(corr); corr != kNoCorrelation && it != cpu.end())
      row.launch_start = rows.kept[it->second].start;
    by_stream[DeviceStreamOf(store, r.row)].push_back(row);
  }
  IdleTimeBreakdown out;
  for (auto& [stream, stream_rows] : by_stream) {
    out.streams.push_back(StreamGaps(stream, std::move(stream_rows), options.consecutive_kernel_delay_us));
    for (size_t c = 0; c < 3; ++c) out.idle_us[c] += out.streams.back().idle_us[c];
  }
  return out;
}

}  // namespace strata
