// KinetoWriter: writes one rank's synthetic trace as PyTorch 2.x profiler JSON (Chrome trace object with
// traceEvents, distributedInfo, deviceProperties, baseTimeNanoseconds), event by event, plain or gzip.
// Host events go to (pid = the process, tid = its main thread); device events to (pid = the device,
// tid = the stream) with args.stream/correlation/device; every launch gets an ac2g flow pair (s on the
// launch, f on the device event). Timestamps are µs with ns fractions, shifted by the rank's clock offset.
// Invariants: memory is one bounded output buffer (flushed at kFlushBytes); the same events give the
// same bytes; after the first write error every call is a no-op and Finish() reports it.
#pragma once

#include <zlib.h>

#include <cstdint>
#include <cstdio>
#include <string>

#include "synth/timeline.h"

namespace strata::synth {

struct RankHeader {
  int64_t rank = 0;
  int64_t world = 0;
  int64_t device = 0;     // local GPU index
  int64_t pid = 0;        // host process id
  int64_t offset_ns = 0;  // clock offset added to every timestamp
};

class KinetoWriter : public RankSink {
 public:
  static constexpr size_t kFlushBytes = 1 << 18;
  static constexpr int64_t kOriginNs = 5'000'000'000'000;  // true-clock job start as written (about 83 min)
  static constexpr int64_t kBaseTimeNs = 1'795'305'600'000'000'000;

  KinetoWriter() = default;
  KinetoWriter(const KinetoWriter&) = delete;
  KinetoWriter& operator=(const KinetoWriter&) = delete;
  ~KinetoWriter() override;

  /// Opens `path` and writes the header; returns an error message or "".
  Status Open(const std::string& path, bool gzip, const RankHeader& header);
  void Emit(const SynthEvent& e) override;
  /// Writes the footer and closes; returns an error message or "".
  Status Finish() override;
  uint64_t bytes_written() const { return bytes_; }

 private:
  void Write(std::string_view s);
  void Flush();
  void Time(int64_t ns);

  std::string path_;
  std::string buf_;
  FILE* file_ = nullptr;
  gzFile gz_ = nullptr;
  RankHeader h_;
  bool first_ = true;
  std::string error_;
  uint64_t bytes_ = 0;
};

}  // namespace strata::synth
