// HTML report (reports/html_report, reports/html_view): the page embeds the diagnosis JSON unchanged and the
// per-rank view, neither can close its <script> element whatever the names in it hold (an op called
// "</script>"), markers inside inserted text are not replaced, the output is deterministic; the view of a
// synthetic job has ranks × steps matrices with the straggler's own work standing out, and a bounded
// timeline with the culprit and the chain's collective. What the page draws is checked in a browser by
// tests/browser/test_html_report.py. An op table (AR of ../shared/datasets/straggler-whatif, skipped when
// absent: rank 0 is 2.5x slower in forward-compute) is compared by compute time, not by its time outside
// collectives (its step time): rank 0 is the highest in every step, its KS score the largest, and the
// timeline draws its ops beside its stage peers' same ops. A slow stage (ST: stage 3 of 4) is drawn beside
// the ranks of the other stages, and the chain's number is their median. The trace timeline compares the
// straggler's time outside collectives with its peers' median.
#include "reports/html_report.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <regex>
#include <string>

#include "analysis/diagnosis/diagnose.h"
#include "core/robust_stats.h"
#include "importers/job_loader.h"
#include "reports/diagnosis_report.h"
#include "reports/html_view.h"
#include "synth/generator.h"
#include "whatif_test_util.h"

namespace strata {
namespace {

using Json = nlohmann::ordered_json;

/// The text of the <script type="application/json" id="ID"> element.
std::string EmbeddedJson(const std::string& page, const std::string& id) {
  const std::string open = "<script type=\"application/json\" id=\"" + id + "\">";
  const size_t start = page.find(open);
  if (start == std::string::npos) return "";
  const size_t end = page.find("</script>", start);
  return page.substr(start + open.size(), end - start - open.size());
}

TEST(HtmlReport, EmbedsBothDocumentsIntact) {
  Json diagnosis = {{"schema", "strata.diagnosis/1"},
                    {"findings", Json::array({{{"op", "</script><script>alert(1)</script>"}}})},
                    {"notes", Json::array({"@STRATA_VIEW_JSON@ <!-- x"})}};
  Json view = {{"ranks", Json::array({0, 1})}, {"label", "@STRATA_DIAGNOSIS_JSON@"}};
  const std::string page = RenderHtmlReport(diagnosis, view);
  EXPECT_EQ(page.find("<script>alert"), std::string::npos);
  EXPECT_EQ(Json::parse(EmbeddedJson(page, "strata-diagnosis")), diagnosis);
  EXPECT_EQ(Json::parse(EmbeddedJson(page, "strata-view")), view);
  EXPECT_EQ(page.find("@STRATA_"), page.find("@STRATA_VIEW_JSON@ \\u003c!-- x"));  // only inside the note
  EXPECT_EQ(page, RenderHtmlReport(diagnosis, view));
  // Self-contained: nothing fetched from the network.
  EXPECT_FALSE(std::regex_search(page, std::regex("(src|href)=\"(https?:)?//")));
}

TEST(HtmlView, SyntheticStragglerStandsOutAndTimelineIsBounded) {
  const std::string dir = testing::TempDir() + "/html_view_job";
  std::filesystem::remove_all(dir);
  synth::SynthOptions o;
  o.out_dir = dir;
  o.ranks = 32;
  o.steps = 3;
  o.layers = 2;
  o.fault.name = "slow_compute";
  o.fault.rank = 21;
  o.progress = 0;
  ASSERT_TRUE(synth::Generate(o).ok());
  auto job = LoadJob({dir}, {});
  ASSERT_TRUE(job.ok()) << job.error();
  const auto result = diagnosis::Diagnose(job.value().store, {.drawn_facts = true});
  const Json view = BuildReportView(job.value().store, result);
  ASSERT_EQ(view["ranks"].size(), 32u);
  ASSERT_EQ(view["steps"].size(), 3u);
  EXPECT_TRUE(view["stages"].is_null());  // data parallel only: one stage
  size_t idx = 0;
  for (; idx < 32 && view["ranks"][idx] != 21; ++idx) {
  }
  ASSERT_LT(idx, 32u);
  for (size_t s = 0; s < 3; ++s) {
    double others = 0;
    for (size_t r = 0; r < 32; ++r)
      if (r != idx) others = std::max(others, view["busy_ms"][r][s].get<double>());
    EXPECT_GT(view["busy_ms"][idx][s].get<double>(), others) << "step index " << s;
    EXPECT_GE(view["step_ms"][idx][s].get<double>(), view["busy_ms"][idx][s].get<double>());
  }
  const Json& t = view["timeline"];
  ASSERT_TRUE(t.is_object());
  EXPECT_LE(t["rows"].size(), kMaxTimelineRows);
  EXPECT_EQ(t["late_rank"], 21);
  bool culprit = false, chain = false;
  for (const Json& row : t["rows"]) {
    if (row["rank"] == 21) culprit = !row["culprit"].empty();
    chain |= row.contains("chain_call");
  }
  EXPECT_TRUE(culprit);
  EXPECT_TRUE(chain);
  // The comparison: rank 21's time outside collectives in the drawn step against the median of the 31 others.
  const Json& cmp = t["compare"];
  ASSERT_TRUE(cmp.is_object());
  size_t s = 0;
  for (; s < 3 && view["steps"][s] != t["step"]; ++s) {
  }
  ASSERT_LT(s, 3u);
  std::vector<double> others;
  for (size_t r = 0; r < 32; ++r)
    if (r != idx) others.push_back(view["busy_ms"][r][s].get<double>());
  EXPECT_EQ(cmp["peer_count"], 31);
  EXPECT_NEAR(cmp["peers_median_ms"].get<double>(), Median(others), 1e-3);
  EXPECT_NEAR(cmp["late_ms"].get<double>(), view["busy_ms"][idx][s].get<double>(), 1e-3);
  EXPECT_GT(cmp["late_ms"].get<double>(), cmp["peers_median_ms"].get<double>());
  std::filesystem::remove_all(dir);
}

TEST(HtmlView, OpTableComparesComputeOpsAndDrawsPeersSameOps) {
  const TraceStore* store = whatif::testing::LoadDataset("AR");
  if (store == nullptr) GTEST_SKIP() << whatif::testing::DatasetPath("AR") << " is absent (../shared)";
  const auto result = diagnosis::Diagnose(*store, {.drawn_facts = true});
  const Json view = BuildReportView(*store, result);
  ASSERT_EQ(view["ranks"].size(), 16u);
  ASSERT_EQ(view["ranks"][0], 0);
  const size_t steps = view["steps"].size();
  ASSERT_EQ(steps, 44u);
  // The heatmap and the "slowest" count: compute time per step, rank 0 the highest in every step.
  EXPECT_FALSE(view.contains("busy_ms"));  // the step time under another name for an op table
  ASSERT_TRUE(view.contains("compute_ms"));
  const Json& c = view["compute_ms"];
  size_t top = 0;
  for (size_t s = 0; s < steps; ++s) {
    size_t best = 0;
    for (size_t r = 1; r < 16; ++r)
      if (c[r][s].get<double>() > c[best][s].get<double>()) best = r;
    top += best == 0;
    EXPECT_LT(c[0][s].get<double>(), view["step_ms"][0][s].get<double>());
  }
  EXPECT_GE(static_cast<double>(top) / static_cast<double>(steps), 0.9);
  EXPECT_EQ(top, steps);
  // KS on compute op durations: rank 0 stands out.
  ASSERT_TRUE(view["ks"].is_object());
  ASSERT_EQ(view["ks"]["matrix"].size(), 16u);
  const Json& score = view["ks"]["score"];
  for (size_t r = 1; r < 16; ++r) EXPECT_GT(score[0].get<double>(), score[r].get<double>() + 0.3) << "rank index " << r;
  // The timeline: rank 0's ops beside its stage peers' (dp ranks 1..3 of stage 0: ranks 4, 8, 12), no empty row.
  const Json& t = view["timeline"];
  ASSERT_TRUE(t.is_object());
  EXPECT_EQ(t["kind"], "op_table");
  EXPECT_EQ(t["late_rank"], 0);
  EXPECT_EQ(t["op"], "backward-compute");  // the largest excess a step: 15.6 s against forward's 10.5 s
  ASSERT_EQ(t["rows"].size(), 4u);
  std::vector<int> shown;
  for (const Json& row : t["rows"]) {
    shown.push_back(row["rank"].get<int>());
    EXPECT_FALSE(row["compute"].empty()) << row["rank"];
    EXPECT_FALSE(row["collectives"].empty()) << row["rank"];
    EXPECT_FALSE((row["rank"] == 0 ? row["culprit"] : row["same_op"]).empty()) << row["rank"];
    EXPECT_TRUE(row.contains("chain_op")) << row["rank"];
  }
  EXPECT_EQ(shown, (std::vector<int>{0, 4, 8, 12}));
  ASSERT_TRUE(t.contains("chain_op"));
  EXPECT_GT(t["chain_op"]["late_ms"].get<double>(), 2 * t["chain_op"]["peers_median_ms"].get<double>());
}

TEST(HtmlView, SlowStageIsDrawnBesideTheOtherStages) {
  const TraceStore* store = whatif::testing::LoadDataset("ST");
  if (store == nullptr) GTEST_SKIP() << whatif::testing::DatasetPath("ST") << " is absent (../shared)";
  const auto result = diagnosis::Diagnose(*store, {.drawn_facts = true});
  ASSERT_FALSE(result.findings.empty());
  ASSERT_EQ(result.findings.front().stage, 3);  // stage_imbalance on ranks 6 and 7, no single rank
  const Json view = BuildReportView(*store, result);
  const Json& t = view["timeline"];
  ASSERT_TRUE(t.is_object());
  EXPECT_EQ(t["peers"], "the ranks of the other stages");
  std::vector<int> shown;
  std::vector<double> peers;
  for (const Json& row : t["rows"]) {
    shown.push_back(row["rank"].get<int>());
    if (row["rank"] != t["late_rank"] && row.contains("chain_op"))
      peers.push_back(row["chain_op"][1].get<double>() - row["chain_op"][0].get<double>());
  }
  EXPECT_EQ(shown, (std::vector<int>{7, 0, 1, 2, 3, 4, 5}));  // the culprit first, then stages 0..2
  ASSERT_EQ(peers.size(), 6u);
  EXPECT_NEAR(t["chain_op"]["peers_median_ms"].get<double>(), Median(peers), 2e-3);
  EXPECT_GT(t["chain_op"]["late_ms"].get<double>(), t["chain_op"]["peers_median_ms"].get<double>());
}

}  // namespace
}  // namespace strata
