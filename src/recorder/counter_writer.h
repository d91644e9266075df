// CounterWriter: a recording's host counters (host/host_counters.h), sampled into its segment. Each sample reads
// every counter of the traced processes once and appends one counter row per value; a series the sampler found
// since the last sample gets its "series" meta record first (docs/segment-format.md); the sampler's warnings go
// to the recording's notes.
// Invariants: series ids are the sampler's indices, each described by exactly one "series" record, written in id
// order, by the sample that first gave it a row; every row refers to a described series.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "recorder/host/host_counters.h"
#include "segments/segment_writer.h"

namespace strata::recorder {

class CounterWriter {
 public:
  explicit CounterWriter(HostCounterSampler::Options options = {}) : sampler_(std::move(options)) {}

  /// Samples the counters of `pids` at `now_ns` (CLOCK_MONOTONIC) into `writer`, passing each new warning to
  /// `note`.
  void Sample(uint64_t now_ns, const std::vector<int>& pids, segments::SegmentWriter* writer,
              const std::function<void(const std::string&)>& note);
  /// The same for the network interfaces' byte counters alone (HostCounterSampler::SampleLinks: the namespaces
  /// of the last Sample's pids).
  void SampleLinks(uint64_t now_ns, segments::SegmentWriter* writer,
                   const std::function<void(const std::string&)>& note);

  /// How many series have their "series" record written.
  size_t series_written() const { return series_written_; }

 private:
  /// Writes the new series' records, then the samples' rows, then passes on the sampler's warnings.
  void Write(const std::vector<CounterSample>& samples, segments::SegmentWriter* writer,
             const std::function<void(const std::string&)>& note);

  HostCounterSampler sampler_;
  size_t series_written_ = 0;
};

}  // namespace strata::recorder
