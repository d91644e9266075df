// RankIndex and RankNumber (core/rank_id.h) and the one conversion of the straggler analysis's rank indices to
// rank numbers (NumberedStragglers, analysis/diagnosis/straggler.h):
//  - neither type converts to the other or from/to an integer implicitly (checked at compile time), so an
//    index cannot be passed where a number is meant;
//  - both compare and hash by value, print (fmt, streams) and serialize (JSON) as their value;
//  - the result's ranks are rank numbers by type (Straggler::rank, Finding::rank and ranks);
//  - NumberedStragglers names each straggler by the number of its index in the job's list (not the index), keeps
//    the analysis's order, rounds as the contract shows, and leaves the analysis as it was.
#include "core/rank_id.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <type_traits>
#include <unordered_set>
#include <vector>

#include "analysis/diagnosis/result.h"
#include "analysis/diagnosis/straggler.h"

namespace strata {
namespace {

static_assert(!std::is_convertible_v<RankIndex, RankNumber>, "an index is not a number");
static_assert(!std::is_convertible_v<RankNumber, RankIndex>, "a number is not an index");
static_assert(!std::is_constructible_v<RankNumber, RankIndex>, "not even explicitly");
static_assert(!std::is_constructible_v<RankIndex, RankNumber>, "not even explicitly");
static_assert(!std::is_convertible_v<size_t, RankIndex>, "an integer becomes an index only explicitly");
static_assert(!std::is_convertible_v<int32_t, RankNumber>, "an integer becomes a number only explicitly");
static_assert(!std::is_convertible_v<RankIndex, size_t>, "an index is read by .value()");
static_assert(!std::is_convertible_v<RankNumber, int32_t>, "a number is read by .value()");
static_assert(!std::is_assignable_v<RankNumber&, RankIndex>, "an index cannot overwrite a number");

static_assert(std::is_same_v<decltype(diagnosis::Straggler::rank), RankNumber>, "a straggler names a number");
static_assert(std::is_same_v<decltype(diagnosis::Finding::rank), std::optional<RankNumber>>, "so does a finding");
static_assert(std::is_same_v<decltype(diagnosis::Finding::ranks), std::vector<RankNumber>>, "and its ranks");

TEST(RankId, PrintsAndSerializesAsItsValue) {
  EXPECT_EQ(fmt::format("rank {}", RankNumber(7)), "rank 7");
  EXPECT_EQ(fmt::format("{:>3}|{}", RankNumber(-1), RankIndex(12)), " -1|12");
  EXPECT_EQ(fmt::format("{}", fmt::join(std::vector<RankNumber>{RankNumber(3), RankNumber(0)}, ", ")), "3, 0");
  std::ostringstream out;
  out << RankNumber(42);
  EXPECT_EQ(out.str(), "42");
  nlohmann::ordered_json j;
  j["rank"] = RankNumber(5);
  j["ranks"] = RankNumbers({2, 9});
  EXPECT_EQ(j.dump(), R"({"rank":5,"ranks":[2,9]})");
}

TEST(RankId, ComparesAndHashesByValue) {
  EXPECT_EQ(RankIndex(3), RankIndex(3));
  EXPECT_NE(RankIndex(3), RankIndex(4));
  EXPECT_LT(RankNumber(-1), RankNumber(0));
  EXPECT_EQ(RankNumber(7).value(), 7);
  const std::unordered_set<RankIndex> seen = {RankIndex(1), RankIndex(2), RankIndex(1)};
  EXPECT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen.count(RankIndex(2)), 1u);
}

TEST(RankId, NumberOfReadsTheJobsList) {
  const std::vector<int32_t> numbers = {10, 11, 12, 13};
  EXPECT_EQ(NumberOf(RankIndex(0), numbers), RankNumber(10));
  EXPECT_EQ(NumberOf(RankIndex(3), numbers), RankNumber(13));
  EXPECT_THROW(NumberOf(RankIndex(4), numbers), std::out_of_range);
}

TEST(RankId, NumberedStragglersNamesEachByItsNumberOnce) {
  diagnosis::StragglerAnalysis sa;
  sa.stragglers.push_back({RankIndex(2), 0.123456, 20.00049, {1, 2}, true});
  sa.stragglers.push_back({RankIndex(0), 0.05, 7.5, {3}, false});
  const std::vector<int32_t> numbers = {40, 41, 42};  // a job whose ranks are not numbered from 0
  const std::vector<diagnosis::Straggler> named = diagnosis::NumberedStragglers(sa, numbers);
  ASSERT_EQ(named.size(), 2u);
  EXPECT_EQ(named[0].rank, RankNumber(42));  // index 2's number, in the analysis's order
  EXPECT_EQ(named[1].rank, RankNumber(40));
  EXPECT_DOUBLE_EQ(named[0].score, 0.1235);
  EXPECT_DOUBLE_EQ(named[0].late_ms_per_step, 20.0);
  EXPECT_EQ(named[0].steps, (std::vector<int64_t>{1, 2}));
  EXPECT_TRUE(named[0].persistent);
  EXPECT_FALSE(named[1].persistent);
  // The analysis keeps its indices (a new value, not a rewrite in place).
  EXPECT_EQ(sa.stragglers[0].rank, RankIndex(2));
  EXPECT_DOUBLE_EQ(sa.stragglers[0].score, 0.123456);
}

}  // namespace
}  // namespace strata
