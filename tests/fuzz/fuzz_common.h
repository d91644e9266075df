// Shared helpers of the libFuzzer targets: feeding the fuzz input to ByteSource as a file (a memfd, so
// nothing touches the disk) and checking the invariants every TraceStore must hold.
#pragma once

#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "analysis/job_summary.h"
#include "store/trace_store.h"

namespace strata::fuzz {

#define FUZZ_CHECK(cond)                                                                \
  do {                                                                                  \
    if (!(cond)) {                                                                      \
      std::fprintf(stderr, "%s:%d: invariant failed: %s\n", __FILE__, __LINE__, #cond); \
      std::abort();                                                                     \
    }                                                                                   \
  } while (0)

/// The fuzz input as a file: an anonymous memory file reachable through /proc/self/fd.
class MemFile {
 public:
  MemFile(const uint8_t* data, size_t size) {
    fd_ = memfd_create("strata-fuzz", 0);
    FUZZ_CHECK(fd_ >= 0);
    size_t done = 0;
    while (done < size) {
      const ssize_t n = ::write(fd_, data + done, size - done);
      FUZZ_CHECK(n > 0);
      done += static_cast<size_t>(n);
    }
    path_ = "/proc/self/fd/" + std::to_string(fd_);
  }
  ~MemFile() { ::close(fd_); }
  MemFile(const MemFile&) = delete;
  MemFile& operator=(const MemFile&) = delete;
  const std::string& path() const { return path_; }

 private:
  int fd_ = -1;
  std::string path_;
};

inline constexpr int64_t kMaxDurationNs = 7LL * 24 * 3600 * 1000000000LL;

/// Structural invariants of a store produced by one importer run.
inline void CheckStore(const TraceStore& s) {
  FUZZ_CHECK(s.inputs.size() == 1);
  const size_t n = s.slices.size();
  FUZZ_CHECK(s.slices.dur_ns.size() == n && s.slices.correlation.size() == n && s.slices.name.size() == n &&
             s.slices.category.size() == n && s.slices.track.size() == n && s.slices.args.size() == n &&
             s.slices.step.size() == n && s.slices.flags.size() == n);
  for (size_t i = 0; i < n; ++i) {
    FUZZ_CHECK(s.slices.track[i].value < s.tracks.size());
    FUZZ_CHECK(s.slices.dur_ns[i] >= 0);
    FUZZ_CHECK(s.slices.dur_ns[i] <= kMaxDurationNs);
    int64_t end;
    FUZZ_CHECK(!__builtin_add_overflow(s.slices.ts_ns[i], s.slices.dur_ns[i], &end));
    FUZZ_CHECK(s.slices.name[i].value < s.strings.size());
    FUZZ_CHECK(s.slices.category[i].value < s.strings.size());
    const uint32_t args = s.slices.args[i];
    const uint8_t flags = s.slices.flags[i];
    if (flags & kSliceCollectiveArgs) {
      FUZZ_CHECK(args < s.collective_args.size());
    } else if (flags & kSliceOpLayout) {
      FUZZ_CHECK(args < s.op_layout.size());
    } else {
      FUZZ_CHECK(args == kNoArgs);
    }
    if (flags & kSliceInstant) FUZZ_CHECK(s.slices.dur_ns[i] == 0);
  }
  for (const Track& t : s.tracks) {
    FUZZ_CHECK(t.rank < s.ranks.size());
    FUZZ_CHECK(t.name.value < s.strings.size());
  }
  for (const RankInfo& r : s.ranks) FUZZ_CHECK(r.input < s.inputs.size());
  for (const CollectiveArgs& a : s.collective_args) {
    FUZZ_CHECK(a.collective.value < s.strings.size() && a.group.value < s.strings.size() &&
               a.group_ranks.value < s.strings.size() && a.dtype.value < s.strings.size());
  }
  FUZZ_CHECK(s.flows.track.size() == s.flows.size() && s.flows.category.size() == s.flows.size() &&
             s.flows.phase.size() == s.flows.size() && s.flows.ts_ns.size() == s.flows.size());
  for (size_t i = 0; i < s.flows.size(); ++i) FUZZ_CHECK(s.flows.track[i].value < s.tracks.size());
  FUZZ_CHECK(s.counters.track.size() == s.counters.size() && s.counters.value.size() == s.counters.size());
  for (size_t i = 0; i < s.counters.size(); ++i) FUZZ_CHECK(s.counters.track[i].value < s.tracks.size());
  // Accepted events are counted once per rank and once per category.
  uint64_t rank_events = 0;
  for (const RankInfo& r : s.ranks) {
    uint64_t by_category = 0;
    for (const auto& [cat, count] : r.categories) by_category += count;
    FUZZ_CHECK(by_category == r.events);
    rank_events += r.events;
  }
  FUZZ_CHECK(rank_events == s.inputs[0].events);
  FUZZ_CHECK(n + s.flows.size() <= s.inputs[0].events);
}

/// Runs the analysis over the store (both step rules) and checks its arithmetic invariants.
inline void CheckSummary(const TraceStore& s) {
  for (bool include_last : {false, true}) {
    BreakdownOptions options;
    options.include_last_step = include_last;
    const JobSummary job = Summarize(s, options);
    FUZZ_CHECK(job.ranks.size() == s.ranks.size());
    for (const RankSummary& r : job.ranks) {
      if (!r.gpu) continue;
      const GpuBreakdown& g = *r.gpu;
      FUZZ_CHECK(g.idle_us + g.compute_us + g.non_compute_us == g.kernel_time_us);
      FUZZ_CHECK(g.compute_us >= 0);
      if (g.comm_comp_overlap_pct)
        FUZZ_CHECK(*g.comm_comp_overlap_pct >= 0 && *g.comm_comp_overlap_pct <= 100.0 + 1e-9);
    }
  }
}

}  // namespace strata::fuzz
