// LatestArrivals (analysis/diagnosis/latest_arrival.h): the instance of a step where a rank arrived latest against
// its peers' median arrival, on the given clock offsets — what the Perfetto export and the HTML timeline draw.
#include <gtest/gtest.h>

#include <algorithm>

#include "analysis/diagnosis/latest_arrival.h"

namespace strata::diagnosis {
namespace {

/// A job whose matched collectives are given as each rank's arrival (start) per instance and
/// step; -1: the rank lacks the instance.
model::JobModel Job(const std::vector<std::pair<int64_t, std::vector<int64_t>>>& instances) {
  model::JobModel job;
  for (const auto& [step, starts] : instances) {
    job.collectives.calls.resize(std::max(job.collectives.calls.size(), starts.size()));
    model::MatchedCollective m;
    m.step = step;
    for (size_t r = 0; r < starts.size(); ++r) {
      if (starts[r] < 0) {
        m.call.push_back(-1);
        continue;
      }
      m.call.push_back(static_cast<int32_t>(job.collectives.calls[r].size()));
      model::CollectiveCall c;
      c.start_ns = starts[r];
      c.end_ns = starts[r] + 1;
      c.step = step;
      job.collectives.calls[r].push_back(c);
      ++m.present;
    }
    job.collectives.matched.push_back(m);
  }
  return job;
}

TEST(LatestArrival, ThePeersMedianNotTheLatestPeerDecides) {
  // Step 7: instance 0, rank 0 at 100 against 0 and 90 (median 45: 55 late; 10 after the latest peer);
  // instance 1, rank 0 at 100 against 60 and 70 (median 65: 35 late; 30 after the latest peer).
  const model::JobModel job = Job({{7, {100, 0, 90}}, {7, {100, 60, 70}}});
  EXPECT_EQ(LatestArrivals(job, 0, {0, 0, 0}), (std::map<int64_t, size_t>{{7, 0}}));
}

TEST(LatestArrival, ArrivalsAreComparedOnTheAlignedClocks) {
  // Four ranks, rank 0 at 100 in both instances of step 7: against 0, 50, 90 (median 50: 50 late), then against
  // 60, 70, 80 (median 70: 30 late).
  const model::JobModel job = Job({{7, {100, 0, 50, 90}}, {7, {100, 60, 70, 80}}});
  EXPECT_EQ(LatestArrivals(job, 0, {0, 0, 0, 0}), (std::map<int64_t, size_t>{{7, 0}}));
  // Rank 1's clock 100 behind (offset −100) puts its calls at 100 and 160: medians 90 and 80, rank 0 late by 10,
  // then 20.
  EXPECT_EQ(LatestArrivals(job, 0, {0, -100, 0, 0}), (std::map<int64_t, size_t>{{7, 1}}));
}

TEST(LatestArrival, OnlyInstancesSharedWithAPeerCountAndEachStepHasItsOwn) {
  // Step 3: rank 0 alone in instance 0 (no peer); step 4: instances 2 and 3, the later one tied: the first kept.
  const model::JobModel job = Job({{3, {500, -1, -1}}, {3, {10, 0, 0}}, {4, {20, 0, 0}}, {4, {20, 0, 0}}});
  EXPECT_EQ(LatestArrivals(job, 0, {}), (std::map<int64_t, size_t>{{3, 1}, {4, 2}}));
  // Rank 1 lacks instance 0 and has every other.
  EXPECT_EQ(LatestArrivals(job, 1, {}), (std::map<int64_t, size_t>{{3, 1}, {4, 2}}));
}

}  // namespace
}  // namespace strata::diagnosis
