// HTA's memory bandwidth counters (see memory_bandwidth.h).
#include "analysis/memory_bandwidth.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>

#include "core/robust_stats.h"
#include "model/kernel_type.h"

namespace strata {

namespace {

struct BandwidthChange {
  double us = 0;
  double gbps = 0;   // + at a start, − at an end
  size_t order = 0;  // store order of the row, starts and ends numbered apart
};

void SummarizeKind(MemoryBandwidthKind* k) {
  std::vector<double> above;
  for (const auto& [us, gbps] : k->series)
    if (gbps > 0) above.push_back(gbps);
  k->points = above.size();
  if (above.empty()) return;
  std::sort(above.begin(), above.end());
  const double n = static_cast<double>(above.size());
  k->mean = std::accumulate(above.begin(), above.end(), 0.0) / n;
  if (above.size() >= 2) {
    double ss = 0;
    for (double v : above) ss += (v - k->mean) * (v - k->mean);
    k->std = std::sqrt(ss / (n - 1));
  }
  k->min = above.front();
  k->max = above.back();
  k->p25 = InterpolatedQuantileOfSorted(above, 0.25);
  k->p50 = Median(above);
  k->p75 = InterpolatedQuantileOfSorted(above, 0.75);
}

}  // namespace

std::string MemoryKernelKind(std::string_view name) {
  if (name.substr(0, 6) == "Memset") return "Memset";
  if (name.substr(0, 6) != "Memcpy") return "Memcpy Unknown";
  return std::string(name.substr(0, 11));
}

std::vector<MemoryBandwidthKind> ComputeMemoryBandwidth(const TraceStore& store, const HtaRows& rows) {
  const SliceTable& s = store.slices;
  std::map<std::string, std::vector<BandwidthChange>> changes;
  size_t order = 0;
  for (const HtaRow& r : rows.kept) {
    const uint32_t i = r.row.value;
    if (!r.device || !(s.flags[i] & kSliceMemoryBandwidth) || s.args[i] >= store.memory_bandwidth_gbps.size()) continue;
    const std::string_view name = store.strings.view(s.name[i]);
    if (ClassifyKernel(name) != KernelType::kMemory) continue;
    const double gbps = store.memory_bandwidth_gbps[s.args[i]];
    const double end = r.end - r.start == 0 ? r.start + 1 : r.end;
    auto& kind = changes[MemoryKernelKind(name)];
    kind.push_back({r.start, gbps, order});
    kind.push_back({end, -gbps, order});
    ++order;
  }
  std::vector<MemoryBandwidthKind> out;
  for (auto& [name, c] : changes) {
    std::stable_sort(c.begin(), c.end(), [](const BandwidthChange& a, const BandwidthChange& b) {
      if (a.us != b.us) return a.us < b.us;
      if ((a.gbps < 0) != (b.gbps < 0)) return a.gbps < 0;  // ends first
      return a.order < b.order;
    });
    MemoryBandwidthKind k;
    k.kind = name;
    double sum = 0;
    for (const BandwidthChange& ch : c) k.series.emplace_back(ch.us, sum += ch.gbps);
    SummarizeKind(&k);
    out.push_back(std::move(k));
  }
  return out;
}

}  // namespace strata
