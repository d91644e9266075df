// serve's memory across jobs (agent/node_history.h): a job counts once per node, a naming once per job, the
// suspect rule of thresholds.h, the bound on jobs kept, and the JSON record read back as it was written.
#include <gtest/gtest.h>

#ifdef STRATA_HAVE_RECORDER
#include "agent/node_history.h"
#include "analysis/diagnosis/thresholds.h"

namespace strata::agent {
namespace {

namespace th = diagnosis::thresholds;

// `jobs` jobs on node "n" (rank 0 there), the ones whose index is in `named` naming rank 0.
NodeHistory Jobs(int jobs, const std::vector<int>& named) {
  NodeHistory h;
  for (int j = 0; j < jobs; ++j) {
    const std::string job = "job-" + std::to_string(j);
    h.SeeRank("n", job, 0, j);
    h.SeeRank("other", job, 1, j);
    if (std::find(named.begin(), named.end(), j) != named.end()) h.Named(job, 0, "slow_compute");
  }
  return h;
}

TEST(NodeHistory, CountsEachJobOnceAndEachNamingOnce) {
  NodeHistory h;
  EXPECT_TRUE(h.SeeRank("a", "j1", 0, 10));
  EXPECT_FALSE(h.SeeRank("a", "j1", 1, 11));  // a second rank of the same job on the same node
  EXPECT_EQ(h.Named("j1", 1, "gc_pause"), "a");
  EXPECT_EQ(h.Named("j1", 1, "gc_pause"), "");  // again: nothing changes
  EXPECT_EQ(h.Named("j1", 1, "slow_compute"), "a");
  EXPECT_EQ(h.Named("j1", 7, "gc_pause"), "");  // a rank never seen: no node to blame
  EXPECT_EQ(h.Named("j2", 0, "gc_pause"), "");
  const NodeRecord& a = h.nodes().at("a");
  ASSERT_EQ(a.jobs.size(), 1u);
  EXPECT_EQ(a.jobs[0].first_seen, 10);
  EXPECT_EQ(a.jobs[0].named.size(), 2u);
  EXPECT_FALSE(h.SeeRank("", "j1", 2, 12));  // an entry without its host names no node
}

TEST(NodeHistory, ANodeNamedInMostOfItsRecentJobsIsSuspect) {
  // Half of the last kSuspectNodeRecentJobs: suspect; one fewer: not.
  const int recent = static_cast<int>(th::kSuspectNodeRecentJobs);
  std::vector<int> half;
  for (int j = 0; j < recent; j += 2) half.push_back(j + 4);
  EXPECT_TRUE(Jobs(recent + 4, half).nodes().at("n").Suspect());
  half.pop_back();
  EXPECT_FALSE(Jobs(recent + 4, half).nodes().at("n").Suspect());
  // Named often long ago, not lately: what counts is the recent jobs.
  EXPECT_FALSE(Jobs(recent + 8, {0, 1, 2, 3, 4, 5, 6, 7}).nodes().at("n").Suspect());
  // Too few jobs say nothing, however often named; the other node was never named.
  EXPECT_FALSE(Jobs(static_cast<int>(th::kSuspectNodeMinJobs) - 1, {0, 1}).nodes().at("n").Suspect());
  EXPECT_TRUE(Jobs(static_cast<int>(th::kSuspectNodeMinJobs), {0, 1, 2}).nodes().at("n").Suspect());
  EXPECT_FALSE(Jobs(recent, {0, 1, 2, 3, 4, 5, 6, 7}).nodes().at("other").Suspect());
}

TEST(NodeHistory, KeepsTheLastJobsOnlyAndReadsBackItsRecord) {
  const NodeHistory h = Jobs(static_cast<int>(th::kNodeHistoryJobs) + 5, {20});
  const NodeRecord& n = h.nodes().at("n");
  ASSERT_EQ(n.jobs.size(), th::kNodeHistoryJobs);
  EXPECT_EQ(n.jobs.front().job, "job-5");
  auto back = NodeRecord::FromJson(n.ToJson());
  ASSERT_TRUE(back.ok()) << back.error();
  EXPECT_EQ(back.value().ToJson(), n.ToJson());
  EXPECT_EQ(back.value().RecentJobs(th::kSuspectNodeRecentJobs), n.RecentJobs(th::kSuspectNodeRecentJobs));
  EXPECT_FALSE(NodeRecord::FromJson(nlohmann::json::parse(R"({"host": 3, "jobs": []})")).ok());
  EXPECT_FALSE(NodeRecord::FromJson(nlohmann::json::parse(R"({"host": "h", "jobs": [{"job": 1}]})")).ok());
  // A restored record is what a restarted serve adds to.
  NodeHistory restarted;
  restarted.Restore(back.value());
  EXPECT_TRUE(restarted.SeeRank("n", "job-new", 0, 99));
  EXPECT_EQ(restarted.nodes().at("n").jobs.back().job, "job-new");
  EXPECT_EQ(restarted.nodes().at("n").jobs.size(), th::kNodeHistoryJobs);
}

}  // namespace
}  // namespace strata::agent
#endif  // STRATA_HAVE_RECORDER
