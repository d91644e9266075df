// Replayer: event-by-event replay over all (step, dp rank) instances at once. Inner loops run over the
// contiguous instance dimension, so one replay of a 64-worker job costs a few hundred thousand max/add ops.
#include "analysis/whatif/replay.h"

#include <algorithm>
#include <limits>

namespace strata::whatif {

Replayer::Replayer(const OpGraph& graph, size_t num_steps, size_t num_dp)
    : num_nodes_(graph.nodes().size()), num_steps_(num_steps), num_dp_(num_dp), order_(graph.event_order()) {
  dep_offsets_.assign(1, 0);
  group_of_.reserve(num_nodes_);
  for (uint32_t n = 0; n < num_nodes_; ++n) {
    for (uint32_t d : graph.deps(n)) deps_.push_back(d);
    dep_offsets_.push_back(static_cast<uint32_t>(deps_.size()));
    group_of_.push_back(graph.nodes()[n].group);
  }
  for (const CommGroup& g : graph.groups()) {
    group_members_.push_back(g.members);
    group_dp_sync_.push_back(g.dp_sync);
  }
}

void Replayer::GroupLatestStart(uint32_t group, std::span<const double> start, double* out) const {
  const size_t I = instances();
  const auto& members = group_members_[group];
  const double* first = start.data() + members[0] * I;
  std::copy(first, first + I, out);
  for (size_t k = 1; k < members.size(); ++k) {
    const double* s = start.data() + members[k] * I;
    for (size_t i = 0; i < I; ++i) out[i] = std::max(out[i], s[i]);
  }
  if (group_dp_sync_[group] && num_dp_ > 1) {
    for (size_t step = 0; step < num_steps_; ++step) {
      double* row = out + step * num_dp_;
      const double m = *std::max_element(row, row + num_dp_);
      std::fill(row, row + num_dp_, m);
    }
  }
}

std::vector<double> Replayer::Run(std::span<const double> cost, std::span<const double> delay,
                                  std::vector<double>* start_out, std::vector<double>* end_out) const {
  const size_t I = instances();
  std::vector<double> start(values()), end(values()), latest(group_members_.size() * I);
  const bool has_delay = !delay.empty();
  for (const Event& ev : order_) {
    switch (ev.kind) {
      case Event::kStart: {
        double* s = start.data() + ev.id * I;
        const uint32_t* d = deps_.data() + dep_offsets_[ev.id];
        const uint32_t* d_end = deps_.data() + dep_offsets_[ev.id + 1];
        if (d == d_end) {
          std::fill(s, s + I, 0.0);
        } else {
          const double* e0 = end.data() + *d * I;
          std::copy(e0, e0 + I, s);
          for (++d; d != d_end; ++d) {
            const double* e = end.data() + *d * I;
            for (size_t i = 0; i < I; ++i) s[i] = std::max(s[i], e[i]);
          }
        }
        if (has_delay) {
          const double* l = delay.data() + ev.id * I;
          for (size_t i = 0; i < I; ++i) s[i] += l[i];
        }
        break;
      }
      case Event::kGroup:
        GroupLatestStart(ev.id, start, latest.data() + ev.id * I);
        break;
      case Event::kEnd: {
        const double* c = cost.data() + ev.id * I;
        const uint32_t g = group_of_[ev.id];
        const double* base = g == kNoGroup ? start.data() + ev.id * I : latest.data() + g * I;
        double* e = end.data() + ev.id * I;
        for (size_t i = 0; i < I; ++i) e[i] = base[i] + c[i];
        break;
      }
    }
  }
  // Step time: last end minus first start over all nodes and dp ranks of the step.
  std::vector<double> lo(I, std::numeric_limits<double>::infinity()), hi(I, -std::numeric_limits<double>::infinity());
  for (size_t n = 0; n < num_nodes_; ++n) {
    const double* s = start.data() + n * I;
    const double* e = end.data() + n * I;
    for (size_t i = 0; i < I; ++i) {
      lo[i] = std::min(lo[i], s[i]);
      hi[i] = std::max(hi[i], e[i]);
    }
  }
  std::vector<double> step_time(num_steps_);
  for (size_t step = 0; step < num_steps_; ++step) {
    double first = std::numeric_limits<double>::infinity(), last = -std::numeric_limits<double>::infinity();
    for (size_t d = 0; d < num_dp_; ++d) {
      first = std::min(first, lo[step * num_dp_ + d]);
      last = std::max(last, hi[step * num_dp_ + d]);
    }
    step_time[step] = last - first;
  }
  if (start_out) *start_out = std::move(start);
  if (end_out) *end_out = std::move(end);
  return step_time;
}

RecordedInputs Replayer::Derive(std::span<const double> start, std::span<const double> end) const {
  const size_t I = instances();
  RecordedInputs r;
  r.cost.resize(values());
  r.delay.resize(values());
  std::vector<double> latest(I), ready(I);
  for (uint32_t n = 0; n < num_nodes_; ++n) {
    const double* s = start.data() + n * I;
    const double* e = end.data() + n * I;
    double* c = r.cost.data() + n * I;
    const uint32_t g = group_of_[n];
    if (g == kNoGroup) {
      for (size_t i = 0; i < I; ++i) c[i] = e[i] - s[i];
    } else {
      GroupLatestStart(g, start, latest.data());
      for (size_t i = 0; i < I; ++i) {
        c[i] = e[i] - latest[i];
        if (c[i] < 0) {
          ++r.negative_transfers;
          r.most_negative_transfer = std::min(r.most_negative_transfer, c[i]);
        }
      }
    }
    std::fill(ready.begin(), ready.end(), 0.0);
    for (uint32_t k = dep_offsets_[n]; k < dep_offsets_[n + 1]; ++k) {
      const double* de = end.data() + deps_[k] * I;
      if (k == dep_offsets_[n]) {
        std::copy(de, de + I, ready.begin());
      } else {
        for (size_t i = 0; i < I; ++i) ready[i] = std::max(ready[i], de[i]);
      }
    }
    double* l = r.delay.data() + n * I;
    for (size_t i = 0; i < I; ++i) {
      l[i] = s[i] - ready[i];
      if (l[i] < 0) {
        ++r.negative_delays;
        r.most_negative_delay = std::min(r.most_negative_delay, l[i]);
        l[i] = 0;
      }
    }
  }
  return r;
}

}  // namespace strata::whatif
