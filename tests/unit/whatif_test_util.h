// Helpers for the what-if tests: an in-memory op-table TraceStore builder (times in ms, exact ns) and a
// cached loader of the shared straggler-whatif datasets (tests skip when the datasets are absent).
// Invariant: a built store looks like one the op-table importer makes (one rank per worker, one track per
// (rank, op type), kSliceOpLayout rows with step and op_layout set).
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <utility>

#include "importers/job_loader.h"
#include "store/trace_store.h"
#include "test_paths.h"

namespace strata::whatif::testing {

/// Builds an op-table store row by row. Ranks are created on first use of (dp rank, stage).
class OpTableBuilder {
 public:
  /// Adds one op; `start_ms`/`end_ms` are converted to integer nanoseconds.
  OpTableBuilder& Op(int32_t step, int32_t dp, int32_t stage, const std::string& type, int32_t seq, double start_ms,
                     double end_ms, int32_t chunk = -1, int32_t microbatch = -1) {
    const uint32_t rank = RankIndex(dp, stage);
    const StringId name = store_.strings.intern(type);
    auto [it, fresh] = tracks_.try_emplace({rank, name}, store_.next_track());
    if (fresh) {
      Track t;
      t.rank = rank;
      t.kind = TrackKind::kOpTable;
      t.name = name;
      store_.tracks.push_back(t);
    }
    OpLayout layout;
    layout.seq_id = seq;
    layout.microbatch = static_cast<int16_t>(microbatch);
    layout.chunk = static_cast<int16_t>(chunk);
    const auto args = static_cast<uint32_t>(store_.op_layout.size());
    store_.op_layout.push_back(layout);
    const int64_t start = std::llround(start_ms * 1e6);
    const int64_t end = std::llround(end_ms * 1e6);
    store_.slices.append(start, end - start, name, category_, it->second, kNoCorrelation,
                         kSliceComplete | kSliceOpLayout | kSliceHasCategory, args);
    store_.slices.step.back() = step;
    return *this;
  }

  TraceStore Take() { return std::move(store_); }

 private:
  uint32_t RankIndex(int32_t dp, int32_t stage) {
    auto [it, fresh] = ranks_.try_emplace({dp, stage}, static_cast<uint32_t>(store_.ranks.size()));
    if (fresh) {
      RankInfo r;
      r.rank = static_cast<int32_t>(store_.ranks.size());
      r.rank_source = "column";
      r.dp_rank = dp;
      r.pp_stage = stage;
      store_.ranks.push_back(r);
    }
    return it->second;
  }

  TraceStore store_;
  StringId category_ = store_.strings.intern("op");
  std::map<std::pair<int32_t, int32_t>, uint32_t> ranks_;
  std::map<std::pair<uint32_t, StringId>, TrackId> tracks_;
};

inline std::string DatasetPath(const std::string& name) {
  return std::string(::strata::test_paths::kSharedDir) + "/datasets/straggler-whatif/trace-" + name + ".csv.gz";
}

/// The loaded store of dataset `name` (AR, ST, SE), loaded once per test binary; nullptr when the file is
/// absent. A load error fails the calling test.
inline const TraceStore* LoadDataset(const std::string& name) {
  static std::map<std::string, std::unique_ptr<TraceStore>> cache;
  auto it = cache.find(name);
  if (it != cache.end()) return it->second.get();
  const std::string path = DatasetPath(name);
  if (!std::filesystem::exists(path)) return nullptr;
  auto job = LoadJob({path}, LoadOptions{});
  if (!job.ok()) {
    ADD_FAILURE() << job.error();
    return nullptr;
  }
  auto store = std::make_unique<TraceStore>(std::move(job.value().store));
  const TraceStore* p = store.get();
  cache.emplace(name, std::move(store));
  return p;
}

}  // namespace strata::whatif::testing
