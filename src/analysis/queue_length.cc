// HTA's queue length per stream (see queue_length.h).
#include "analysis/queue_length.h"

#include <algorithm>
#include <map>

#include "analysis/runtime_launch.h"

namespace strata {

namespace {

struct QueueChange {
  double ts;
  int delta;  // +1 launch, -1 start
};

StreamQueueLength Series(int64_t stream, std::vector<QueueChange> changes) {
  std::sort(changes.begin(), changes.end(),
            [](const QueueChange& a, const QueueChange& b) { return a.ts != b.ts ? a.ts < b.ts : a.delta > b.delta; });
  StreamQueueLength out;
  out.stream = stream;
  int64_t length = 0;
  double sum = 0;
  for (size_t i = 0; i < changes.size(); ++i) {
    length += changes[i].delta;
    out.series.emplace_back(changes[i].ts, length);
    sum += static_cast<double>(length);
    out.max = i == 0 ? length : std::max(out.max, length);
    if (length >= kFullQueue && i + 1 < changes.size()) out.full_us += changes[i + 1].ts - changes[i].ts;
  }
  if (!changes.empty()) out.mean = sum / static_cast<double>(changes.size());
  return out;
}

}  // namespace

std::vector<StreamQueueLength> ComputeQueueLength(const TraceStore& store, const HtaRows& rows) {
  std::map<int64_t, std::vector<QueueChange>> by_stream;
  for (const LaunchPair& p : PairRuntimeLaunches(store, rows)) {
    auto& changes = by_stream[DeviceStreamOf(store, rows.kept[p.gpu].row)];
    changes.push_back({rows.kept[p.cpu].start, +1});
    changes.push_back({rows.kept[p.gpu].start, -1});
  }
  std::vector<StreamQueueLength> out;
  for (auto& [stream, changes] : by_stream) out.push_back(Series(stream, std::move(changes)));
  return out;
}

}  // namespace strata
