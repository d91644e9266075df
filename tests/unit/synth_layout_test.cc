// strata synth: layout coordinates, process-group membership and ids, fault plans and argument errors.
#include <gtest/gtest.h>

#include <set>

#include "synth/faults.h"
#include "synth/generator.h"
#include "synth/layout.h"

namespace strata::synth {
namespace {

TEST(SynthLayout, RankCoordinatesRoundTripWithTensorRanksFastest) {
  const Layout l(2, 3, 4);
  EXPECT_EQ(l.world(), 24);
  for (int64_t r = 0; r < l.world(); ++r) EXPECT_EQ(l.RankOf(l.CoordOf(r)), r);
  const Coord c = l.CoordOf(13);  // 13 = (1 * 3 + 0) * 4 + 1
  EXPECT_EQ(c.dp, 1);
  EXPECT_EQ(c.stage, 0);
  EXPECT_EQ(c.tp, 1);
}

TEST(SynthLayout, GroupMembers) {
  const Layout l(2, 2, 2);
  const Coord c = l.CoordOf(5);  // dp 1, stage 0, tp 1
  EXPECT_EQ(l.Members(GroupKind::kTensor, c), (std::vector<int64_t>{4, 5}));
  EXPECT_EQ(l.Members(GroupKind::kData, c), (std::vector<int64_t>{1, 5}));
  EXPECT_EQ(l.Members(GroupKind::kPipePair, c), (std::vector<int64_t>{5, 7}));
}

TEST(SynthLayout, GroupIdsAreUniqueAndSharedByMembers) {
  const Layout l(3, 2, 2);
  std::set<int64_t> ids;
  size_t groups = 0;
  for (int64_t r = 0; r < l.world(); ++r) {
    const Coord c = l.CoordOf(r);
    for (GroupKind k : {GroupKind::kTensor, GroupKind::kData, GroupKind::kPipePair}) {
      if (k == GroupKind::kPipePair && c.stage + 1 >= l.pp()) continue;
      const int64_t id = l.GroupId(k, c);
      for (int64_t m : l.Members(k, c)) {
        if (k == GroupKind::kPipePair) continue;  // the pair is named after its lower stage
        EXPECT_EQ(l.GroupId(k, l.CoordOf(m)), id);
      }
      if (ids.insert(id).second) ++groups;
    }
  }
  // 3*2 tensor groups + 2*2 data groups + 3*1*2 pairs.
  EXPECT_EQ(groups, 6u + 4u + 6u);
  EXPECT_EQ(ids.count(0), 0u);
}

TEST(SynthLayout, ResolveDerivesDataParallelSize) {
  Layout l;
  EXPECT_TRUE(ResolveLayout(16, 0, 2, 2, &l).ok());
  EXPECT_EQ(l.dp(), 4);
  EXPECT_TRUE(ResolveLayout(8, 0, 0, 0, &l).ok());
  EXPECT_EQ(l.dp(), 8);
}

std::string ErrorFor(SynthOptions o) {
  JobConfig cfg;
  return Validate(o, &cfg).message();  // "" when the options are valid
}

TEST(SynthArguments, ErrorsNameTheArgument) {
  SynthOptions o;
  o.out_dir = "/tmp/unused";
  o.ranks = 8;
  EXPECT_EQ(ErrorFor(o), "");

  SynthOptions bad = o;
  bad.dp = 3;
  EXPECT_NE(ErrorFor(bad).find("--dp 3"), std::string::npos) << ErrorFor(bad);
  bad = o;
  bad.pp = 3;
  EXPECT_NE(ErrorFor(bad).find("--ranks 8"), std::string::npos) << ErrorFor(bad);
  bad = o;
  bad.ranks = 1;
  EXPECT_NE(ErrorFor(bad).find("--ranks"), std::string::npos);
  bad = o;
  bad.ranks = 100001;
  EXPECT_NE(ErrorFor(bad).find("--ranks"), std::string::npos);
  bad = o;
  bad.fault.name = "cosmic_rays";
  EXPECT_NE(ErrorFor(bad).find("--fault cosmic_rays"), std::string::npos);
  bad = o;
  bad.fault.name = "slow_compute";
  bad.fault.rank = 8;
  EXPECT_NE(ErrorFor(bad).find("--fault-rank 8"), std::string::npos);
  bad = o;
  bad.fault.name = "stage_imbalance";
  EXPECT_NE(ErrorFor(bad).find("--pp"), std::string::npos);
  bad = o;
  bad.fault.name = "slow_compute";
  bad.fault.steps = "2,99";
  EXPECT_NE(ErrorFor(bad).find("--fault-steps"), std::string::npos);
  bad = o;
  bad.fault.name = "gc_pause";
  bad.fault.magnitude = 0;
  EXPECT_NE(ErrorFor(bad).find("--magnitude"), std::string::npos);
  bad = o;
  bad.out_dir.clear();
  EXPECT_NE(ErrorFor(bad).find("-o"), std::string::npos);
  bad = o;
  bad.layers = 1;
  bad.pp = 2;
  EXPECT_NE(ErrorFor(bad).find("--layers"), std::string::npos);
}

TEST(SynthArguments, UnwritableDirectoryIsAnError) {
  SynthOptions o;
  o.out_dir = "/proc/strata-synth-cannot-be-here";
  o.ranks = 2;
  o.steps = 1;
  const std::string error = Generate(o).message();
  EXPECT_NE(error.find("-o /proc/strata-synth-cannot-be-here"), std::string::npos) << error;
}

TEST(SynthFaults, StepsFromEveryAndList) {
  const Layout l(4, 1, 1);
  FaultRequest req;
  req.name = "slow_compute";
  req.rank = 2;
  req.every = 3;
  FaultPlan p;
  ASSERT_TRUE(ResolveFault(req, l, 1, 6, 1, &p).ok());
  EXPECT_EQ(p.steps, (std::vector<int64_t>{3, 6}));
  EXPECT_EQ(p.Ranks(l), (std::vector<int64_t>{2}));
  EXPECT_TRUE(p.Hits(2, l.CoordOf(2), 3));
  EXPECT_FALSE(p.Hits(2, l.CoordOf(2), 4));
  EXPECT_FALSE(p.Hits(1, l.CoordOf(1), 3));
  req.every = 0;
  req.steps = "5,2";
  ASSERT_TRUE(ResolveFault(req, l, 1, 6, 1, &p).ok());
  EXPECT_EQ(p.steps, (std::vector<int64_t>{2, 5}));
}

TEST(SynthFaults, StageAndJobLevelFaults) {
  const Layout l(2, 2, 1);
  FaultRequest req;
  req.name = "stage_imbalance";
  FaultPlan p;
  ASSERT_TRUE(ResolveFault(req, l, 1, 4, 1, &p).ok());
  EXPECT_EQ(p.stage, 1);
  EXPECT_EQ(p.rank, -1);
  EXPECT_EQ(p.Ranks(l), (std::vector<int64_t>{1, 3}));
  req.name = "data_imbalance";
  ASSERT_TRUE(ResolveFault(req, l, 1, 4, 1, &p).ok());
  EXPECT_TRUE(p.Ranks(l).empty());
  req.rank = 1;
  EXPECT_FALSE(ResolveFault(req, l, 1, 4, 1, &p).ok());
}

}  // namespace
}  // namespace strata::synth
