// Rank inference from file names and --rank-map parsing.
#include "importers/rank_inference.h"

#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <string>

namespace strata {
namespace {

TEST(RankFromFileName, CommonPatterns) {
  EXPECT_EQ(RankFromFileName("rank-3.json"), std::optional<int>(3));
  EXPECT_EQ(RankFromFileName("rank3.json"), std::optional<int>(3));
  EXPECT_EQ(RankFromFileName("rank_3.json"), std::optional<int>(3));
  EXPECT_EQ(RankFromFileName("rank.3.json"), std::optional<int>(3));
  EXPECT_EQ(RankFromFileName("worker3.pt.trace.json"), std::optional<int>(3));
  EXPECT_EQ(RankFromFileName("worker_17.json.gz"), std::optional<int>(17));
  EXPECT_EQ(RankFromFileName("RANK-12.json"), std::optional<int>(12));
  EXPECT_EQ(RankFromFileName("Worker-0.json"), std::optional<int>(0));
  EXPECT_EQ(RankFromFileName("sampled_rank-1.json.gz"), std::optional<int>(1));
  EXPECT_EQ(RankFromFileName("rank-34.Jul_15_10_52_41.1074.pt.trace.json.gz"), std::optional<int>(34));
  EXPECT_EQ(RankFromFileName("trace_rank007.json"), std::optional<int>(7));
}

TEST(RankFromFileName, NoRank) {
  EXPECT_EQ(RankFromFileName("ranking_5.json"), std::nullopt);
  EXPECT_EQ(RankFromFileName("prerank3.json"), std::nullopt);  // "rank" continues a longer word
  EXPECT_EQ(RankFromFileName("trace.json"), std::nullopt);
  EXPECT_EQ(RankFromFileName("rank-.json"), std::nullopt);
  EXPECT_EQ(RankFromFileName("rank--3.json"), std::nullopt);
  EXPECT_EQ(RankFromFileName(""), std::nullopt);
  EXPECT_EQ(RankFromFileName("rank"), std::nullopt);
}

TEST(RankFromFileName, DirectoriesAreIgnored) {
  EXPECT_EQ(RankFromFileName("/data/rank-7/trace.json"), std::nullopt);
  EXPECT_EQ(RankFromFileName("/data/rank-7/worker2.json"), std::optional<int>(2));
  EXPECT_EQ(RankFromFileName("runs/worker9/sub/rank_4.json.gz"), std::optional<int>(4));
}

TEST(RankFromFileName, HugeNumbersDoNotOverflow) {
  // Only up to 9 digits are read, so the result always fits an int.
  const auto r = RankFromFileName("rank-99999999999999999999.json");
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(*r, 999999999);
}

TEST(ParseRankMap, GoodSpecs) {
  std::map<std::string, int> map;
  ASSERT_TRUE(ParseRankMap("a.json=0,b.json=1", &map).ok());
  EXPECT_EQ(map, (std::map<std::string, int>{{"a.json", 0}, {"b.json", 1}}));
  map.clear();
  ASSERT_TRUE(ParseRankMap("/x/y=z.json=5,", &map).ok());  // the last '=' separates; trailing comma ok
  EXPECT_EQ(map, (std::map<std::string, int>{{"/x/y=z.json", 5}}));
  map.clear();
  ASSERT_TRUE(ParseRankMap("", &map).ok());
  EXPECT_TRUE(map.empty());
  ASSERT_TRUE(ParseRankMap("t.json=3.0", &map).ok());
  EXPECT_EQ(map.at("t.json"), 3);
}

TEST(ParseRankMap, BadSpecs) {
  for (const char* bad :
       {"a.json", "=3", "a.json=", "a.json=x", "a.json=-1", "a.json=1.5", "a.json=99999999999", "ok.json=1,broken"}) {
    std::map<std::string, int> map;
    const Status st = ParseRankMap(bad, &map);
    ASSERT_FALSE(st.ok()) << "spec '" << bad << "'";
    EXPECT_NE(st.message().find("--rank-map"), std::string::npos) << st.message();
    EXPECT_NE(st.message().find("FILE=RANK"), std::string::npos) << st.message();
  }
  std::map<std::string, int> map;
  const Status st = ParseRankMap("ok.json=1,broken", &map);
  EXPECT_NE(st.message().find("'broken'"), std::string::npos) << st.message();
}

TEST(LookupRankMap, FullPathThenBaseName) {
  const std::map<std::string, int> map = {{"/a/trace.json", 1}, {"trace.json", 2}, {"other.json", 3}};
  EXPECT_EQ(LookupRankMap(map, "/a/trace.json"), std::optional<int>(1));
  EXPECT_EQ(LookupRankMap(map, "/b/trace.json"), std::optional<int>(2));
  EXPECT_EQ(LookupRankMap(map, "/c/other.json"), std::optional<int>(3));
  EXPECT_EQ(LookupRankMap(map, "/c/none.json"), std::nullopt);
}

}  // namespace
}  // namespace strata

namespace strata {
namespace {

TEST(PidFromTensorboardName, HostPidTimestamp) {
  EXPECT_EQ(PidFromTensorboardName("/x/node1_4242.1700000000000.pt.trace.json"), 4242);
  EXPECT_EQ(PidFromTensorboardName("my_host-2_17.1699.pt.trace.json.gz"), 17);  // the host may hold '_'
  EXPECT_FALSE(PidFromTensorboardName("rank-0.json").has_value());
  EXPECT_FALSE(PidFromTensorboardName("node1.1700.pt.trace.json").has_value());      // no pid
  EXPECT_FALSE(PidFromTensorboardName("node1_abc.1700.pt.trace.json").has_value());  // not a number
  EXPECT_FALSE(PidFromTensorboardName("node1_42.stamp.pt.trace.json").has_value());  // no timestamp
  EXPECT_FALSE(PidFromTensorboardName("node1_0.1700.pt.trace.json").has_value());    // pid 0
}

}  // namespace
}  // namespace strata
