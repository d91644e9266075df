// The one rule for a rank's main process (importers/main_process.h): collective calls first, then calls of
// any probe, then the first seen, then the lowest pid; a strict order.
#include <gtest/gtest.h>

#include "importers/main_process.h"

namespace strata {
namespace {

RecordedSegment Rank0() {
  RecordedSegment seg;
  seg.processes[10] = {10, 1, 0, "python3", "", 500, 0};          // the loop, seen after its helper
  seg.processes[11] = {11, 10, 0, "pt_data_worker", "", 900, 0};  // a DataLoader worker
  seg.processes[12] = {12, 1, 0, "sh", "", 100, 0};               // a helper with the rank's environment
  seg.probes.push_back({"gloo::allreduce", "all_reduce", ProbeKind::kCollective, "libgloo.so"});
  seg.probes.push_back({"read", "read", ProbeKind::kUnknown, "libc.so"});
  return seg;
}

TEST(MainProcessRule, CollectiveCallsBeatOtherCalls) {
  RecordedSegment seg = Rank0();
  for (int i = 0; i < 3; ++i) seg.data.calls.push_back({10, 10, 0, 0, 1});
  for (int i = 0; i < 9; ++i) seg.data.calls.push_back({11, 11, 1, 0, 1});  // more calls, none a collective
  const MainProcessRule rule(seg);
  EXPECT_TRUE(rule.Better(10, 11));
  EXPECT_FALSE(rule.Better(11, 10));
  EXPECT_TRUE(rule.Better(11, 12)) << "then calls of any probe";
  EXPECT_FALSE(rule.Better(10, 10)) << "strict";
}

TEST(MainProcessRule, WithoutCallsTheFirstSeenThenTheLowestPid) {
  RecordedSegment seg = Rank0();
  const MainProcessRule rule(seg);
  EXPECT_TRUE(rule.Better(12, 10));
  EXPECT_TRUE(rule.Better(10, 11));
  seg.processes[12].first_seen_ns = 500;
  const MainProcessRule tie(seg);
  EXPECT_TRUE(tie.Better(10, 12));
  EXPECT_FALSE(tie.Better(12, 10));
}

}  // namespace
}  // namespace strata
