// KinetoStoreBuilder: validates the events of one Kineto / Chrome-trace file (kineto_event.h's RawEvent) and
// appends them to a TraceStore of one rank: complete, instant, begin/end, counter and flow events on their
// (pid, tid, stream) tracks, thread and process names, per-category counts, and every event it cannot use
// counted by reason (core/skip_reasons.h). The importer (kineto_importer.cc) reads and parses; this decides.
// Invariants: every event given to Add is stored or counted in the input's skipped reasons, exactly once; a
// track is one (pid, tid, stream) lane; begin/end events are paired per lane in timestamp order at Finish
// (file order among equal timestamps), so a trace written out of order loses no slice.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "core/skip_reasons.h"
#include "importers/kineto_event.h"
#include "store/trace_store.h"

namespace strata::kineto {

class KinetoStoreBuilder {
 public:
  /// A store for the file `path` with one rank, its rows in `rows`' tables (capacity reused from a previous
  /// import).
  KinetoStoreBuilder(const std::string& path, RowTables&& rows);
  ~KinetoStoreBuilder();
  KinetoStoreBuilder(const KinetoStoreBuilder&) = delete;
  KinetoStoreBuilder& operator=(const KinetoStoreBuilder&) = delete;

  /// Validates one event and appends it (or counts why not).
  void Add(RawEvent& event);
  /// Counts an event that could not be read at all (invalid JSON, not an object).
  void Skip(SkipId reason, std::string_view detail = {});
  /// Counts an event kept after a repair (its UTF-8 replaced, a top-level member unreadable).
  void Repaired(SkipId reason, std::string_view detail = {});
  /// The file's one rank (its number, world size and devices come from top-level members).
  RankInfo& rank();

  /// Pairs the begin/end events, names the tracks, counts categories and says the format (`top_level_object`:
  /// a Kineto trace; else a Chrome or legacy PyTorch array). The larger row tables go to `spare`.
  TraceStore Finish(bool top_level_object, RowTables* spare);

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace strata::kineto
