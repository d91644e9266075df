// The one peer comparison (analysis/diagnosis/peer_difference.h): a rank's window minus its peers' median,
// per part and per op (an op a profile lacks counts 0 there), and its mean over windows.
#include "analysis/diagnosis/peer_difference.h"

#include <gtest/gtest.h>

#include <array>
#include <vector>

namespace strata::diagnosis {
namespace {

WindowProfile Profile(double compute_ms, double busy_ms, std::map<StringId, double> ops_ms) {
  WindowProfile w;
  w.compute_ns = compute_ms * 1e6;
  w.device_busy_ns = busy_ms * 1e6;
  for (auto& [name, ms] : ops_ms) w.op_ns[name] = ms * 1e6;
  return w;
}

TEST(PeerDifference, ExcessOverThePeersMedianWithAbsentOpsAtZero) {
  const StringId mm(1), conv(2), extra(3);
  const WindowProfile own = Profile(30, 12, {{mm, 20}, {extra, 5}});
  const WindowProfile a = Profile(10, 9, {{mm, 8}, {conv, 2}}), b = Profile(12, 10, {{mm, 9}}),
                      c = Profile(50, 11, {{mm, 40}});
  const ProfileExcess e = ExcessOverPeers(own, {&a, &b, &c});
  EXPECT_DOUBLE_EQ(e.compute_ms, 30 - 12);
  EXPECT_DOUBLE_EQ(e.device_busy_ms, 12 - 10);
  EXPECT_DOUBLE_EQ(e.peer_device_busy_ms, 10);
  EXPECT_DOUBLE_EQ(e.op_ms.at(mm), 20 - 9);
  EXPECT_DOUBLE_EQ(e.op_ms.at(extra), 5) << "no peer ran it: its peers' median is 0";
  EXPECT_DOUBLE_EQ(e.op_ms.at(conv), 0 - 0) << "one peer of three ran it: the median is 0";

  ExcessMean mean;
  mean.Add(e);
  mean.Add(ExcessOverPeers(Profile(12, 10, {{mm, 9}}), {&a, &b, &c}));  // a window in which it kept up
  EXPECT_EQ(mean.windows(), 2u);
  EXPECT_DOUBLE_EQ(mean.Mean().compute_ms, (18.0 + 0.0) / 2);
  const auto ops = mean.OpsLargestFirst();
  ASSERT_EQ(ops.size(), 2u) << "only positive mean excesses";
  EXPECT_EQ(ops[0].first, mm);
  EXPECT_DOUBLE_EQ(ops[0].second, 11.0 / 2);
  EXPECT_EQ(ops[1].first, extra);
  EXPECT_TRUE(ExcessMean().OpsLargestFirst().empty());
}

// PeerMedians is the rule every peer comparison uses: part by part, the median of the peers' values (the
// mean of the middle two for an even count), 0 without peers.
TEST(PeerDifference, PeerMediansIsThePeersMedianPartByPart) {
  const std::vector<std::array<double, 3>> peers = {{1, 10, 0}, {3, 40, 0}, {2, 20, 7}, {9, 30, 0}};
  const auto m = PeerMedians<3>(peers, [](const std::array<double, 3>& p) { return p; });
  EXPECT_DOUBLE_EQ(m[0], (2.0 + 3.0) / 2);
  EXPECT_DOUBLE_EQ(m[1], (20.0 + 30.0) / 2);
  EXPECT_DOUBLE_EQ(m[2], 0) << "one peer of four has it";
  const std::vector<std::array<double, 3>> odd(peers.begin(), peers.begin() + 3);
  EXPECT_DOUBLE_EQ((PeerMedians<3>(odd, [](const std::array<double, 3>& p) { return p; })[1]), 20);
  const std::vector<std::array<double, 3>> none;
  EXPECT_EQ((PeerMedians<3>(none, [](const std::array<double, 3>& p) { return p; })), (std::array<double, 3>{}));
}

}  // namespace
}  // namespace strata::diagnosis
