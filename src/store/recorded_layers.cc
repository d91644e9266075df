// The part of a recording's layers a span can touch (see recorded_layers.h).
#include "store/recorded_layers.h"

#include <algorithm>
#include <iterator>

namespace strata {
namespace {

template <typename Row>
std::vector<Row> EndingFrom(const std::vector<Row>& rows, uint64_t from) {
  std::vector<Row> out;
  std::copy_if(rows.begin(), rows.end(), std::back_inserter(out), [&](const Row& r) { return r.end >= from; });
  return out;
}

RecordedPoints PointsFrom(const RecordedPoints& points, uint64_t from) {
  auto first = std::lower_bound(points.begin(), points.end(), from,
                                [](const std::pair<uint64_t, double>& p, uint64_t t) { return p.first < t; });
  return RecordedPoints(first, points.end());
}

}  // namespace

RecordedLayers LayersFrom(const RecordedLayers& layers, uint64_t from, uint64_t margin_ns) {
  const uint64_t samples_from = from > margin_ns ? from - margin_ns : 0;
  RecordedLayers out;
  for (const RecordedLayerSegment& seg : layers.segments) {
    RecordedLayerSegment& part = out.segments.emplace_back();
    part.process_names = seg.process_names;
    part.own_namespaces = seg.own_namespaces;
    part.realtime_minus_monotonic_ns = seg.realtime_minus_monotonic_ns;
    part.device_collectives = seg.device_collectives;
    for (const auto& [rank, l] : seg.ranks) {
      RankLayers& p = part.ranks[rank];
      p.training = l.training;
      p.collectives = l.collectives;
      p.runq = EndingFrom(l.runq, from);
      p.dstate = EndingFrom(l.dstate, from);
      p.gcs = EndingFrom(l.gcs, from);
      for (const RankCounterSeries& c : l.counters)
        p.counters.push_back({c.counter, PointsFrom(c.points, samples_from)});
      for (const LinkSeries& s : l.links) p.links.push_back({s.kind, s.interface, PointsFrom(s.points, samples_from)});
    }
  }
  return out;
}

}  // namespace strata
