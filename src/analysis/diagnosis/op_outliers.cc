// Operation outliers (see op_outliers.h).
#include "analysis/diagnosis/op_outliers.h"
#include "store/slice_names.h"

#include <algorithm>
#include <cmath>

#include "analysis/diagnosis/thresholds.h"
#include "core/robust_stats.h"
#include "model/kernel_type.h"

namespace strata::diagnosis {

namespace {

double RobustZOf(const std::vector<double>& values, double x) {
  const double m = Median(values);
  const double mad = std::max({Mad(values), thresholds::kOpMadFloorShare * std::abs(m), thresholds::kOpMadFloorNs});
  return 0.6745 * (x - m) / mad;
}

}  // namespace

std::vector<OpOccurrence> OpsInWindow(const TraceStore& store, const TrackIndex& index, size_t rank, TrackId main_track,
                                      int64_t start, int64_t end) {
  std::vector<OpOccurrence> out;
  std::map<StringId, uint32_t> seen;
  auto scan = [&](TrackId track, bool device) {
    const SliceRows& rows = index.Rows(track);
    const auto first = std::partition_point(rows.begin(), rows.end(),
                                            [&](SliceId row) { return store.slices.ts_ns[row.value] < start; });
    for (size_t i = static_cast<size_t>(first - rows.begin()); i < rows.size(); ++i) {
      const uint32_t row = rows[i].value;
      const int64_t ts = store.slices.ts_ns[row];
      if (ts >= end) break;
      const StringId name = store.slices.name[row];
      if (IsContainerSliceName(store.strings.view(name))) continue;  // the step itself, an on-CPU interval
      const int64_t dur = store.slices.dur_ns[row];
      // Rows are sorted by start, longer first on ties: a child follows its parent directly.
      const bool leaf = i + 1 == rows.size() || store.slices.ts_ns[rows[i + 1].value] >= ts + dur;
      const std::string_view n = store.strings.view(name);
      const bool compute =
          device ? IsComputationKernel(n) : IsHostComputeOp(n, store.strings.view(store.slices.category[row]));
      out.push_back({name, 0, static_cast<double>(dur), static_cast<double>(ts - start), leaf, compute});
    }
  };
  if (main_track != kNoTrack) scan(main_track, false);
  for (TrackId track : index.DeviceTracks(rank)) scan(track, true);
  std::stable_sort(out.begin(), out.end(),
                   [](const OpOccurrence& a, const OpOccurrence& b) { return a.offset_ns < b.offset_ns; });
  for (OpOccurrence& o : out) o.index = seen[o.name]++;
  return out;
}

void OpOutlierCollector::AddStep(const std::vector<std::vector<OpOccurrence>>& per_rank, bool late) {
  // identity -> per-rank (duration, offset); missing = (0, nan)
  std::map<std::pair<StringId, uint32_t>, std::vector<std::pair<double, double>>> table;
  for (size_t r = 0; r < ranks_; ++r) {
    for (const OpOccurrence& o : per_rank[r]) {
      auto& row = table[{o.name, o.index}];
      if (row.empty()) row.assign(ranks_, {0.0, NAN});
      row[r] = {o.dur_ns, o.offset_ns};
    }
  }
  for (auto& [id, row] : table) {
    if (std::isnan(row[straggler_].second) && !late) continue;
    Acc& a = acc_[id];
    const double own = row[straggler_].first;
    if (!late) {
      a.other_step_durs.push_back(own);
      continue;
    }
    std::vector<double> peers, all, offsets;
    for (size_t r = 0; r < ranks_; ++r) {
      all.push_back(row[r].first);
      if (r != straggler_) peers.push_back(row[r].first);
      if (!std::isnan(row[r].second)) offsets.push_back(row[r].second);
    }
    const double peer = Median(peers);
    a.excess += own - peer;
    a.dur += own;
    a.peer += peer;
    ++a.late_steps;
    if (ranks_ >= 3) {
      a.z += RobustZOf(all, own);
      if (!std::isnan(row[straggler_].second) && offsets.size() >= 3)
        a.offset_z += RobustZOf(offsets, row[straggler_].second);
      ++a.z_count;
    }
  }
}

std::vector<OpOutlier> OpOutlierCollector::Top(size_t n) const {
  std::vector<OpOutlier> out;
  for (const auto& [id, a] : acc_) {
    if (a.late_steps == 0) continue;
    const double k = static_cast<double>(a.late_steps);
    OpOutlier o;
    o.name = id.first;
    o.index = id.second;
    o.excess_ms = a.excess / k / 1e6;
    o.duration_ms = a.dur / k / 1e6;
    o.peer_ms = a.peer / k / 1e6;
    if (a.z_count > 0) {
      o.z_across_ranks = a.z / static_cast<double>(a.z_count);
      o.offset_z_across_ranks = a.offset_z / static_cast<double>(a.z_count);
    }
    if (a.other_step_durs.size() >= 3) o.z_across_steps = RobustZOf(a.other_step_durs, a.dur / k);
    if (o.excess_ms > 0) out.push_back(o);
  }
  std::sort(out.begin(), out.end(), [](const OpOutlier& x, const OpOutlier& y) { return x.excess_ms > y.excess_ms; });
  if (out.size() > n) out.resize(n);
  return out;
}

}  // namespace strata::diagnosis
