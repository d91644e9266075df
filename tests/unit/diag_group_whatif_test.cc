// The grouped (pipeline / tensor-parallel) pass names its what-if for what it is: it replays nothing and
// subtracts each step's largest per-rank blame ("blame-subtraction", once "group-excess"), and the JSON
// report writes that name.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "analysis/diagnosis/diagnose.h"
#include "importers/job_loader.h"
#include "reports/diagnosis_report.h"
#include "synth/generator.h"
#include "test_util.h"

namespace strata {
namespace {

using testing::TempDir;

TEST(DiagGroupWhatIf, PipelineJobIsBlameSubtraction) {
  TempDir dir;
  synth::SynthOptions o;
  o.out_dir = dir.path();
  o.ranks = 8;
  o.pp = 2;
  o.tp = 2;
  o.steps = 3;
  o.layers = 2;
  o.progress = 0;
  o.fault.name = "slow_compute";
  o.fault.rank = 3;
  ASSERT_TRUE(synth::Generate(o).ok());
  auto job = LoadJob(std::vector<std::string>{dir.path()}, LoadOptions{});
  ASSERT_TRUE(job.ok()) << job.status().message();
  const diagnosis::DiagnosisResult r = diagnosis::Diagnose(job.value().store);
  EXPECT_EQ(r.whatif.model, diagnosis::WhatIfModel::kBlameSubtraction);
  EXPECT_EQ(DiagnosisToJson(r)["whatif"]["model"], "blame-subtraction");
}

}  // namespace
}  // namespace strata
