// HTML report (reports/html_report, reports/html_view): the page embeds the diagnosis JSON unchanged and the
// per-rank view, neither can close its <script> element whatever the names in it hold (an op called
// "</script>"), markers inside inserted text are not replaced, the output is deterministic; the view of a
// synthetic job has ranks × steps matrices with the straggler's own work standing out, and a bounded
// timeline with the culprit and the chain's collective. What the page draws is checked in a browser by
// tests/browser/test_html_report.py.
#include "reports/html_report.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <regex>
#include <string>

#include "analysis/diagnosis/diagnose.h"
#include "importers/job_loader.h"
#include "reports/diagnosis_report.h"
#include "reports/html_view.h"
#include "synth/generator.h"

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
  const auto result = diagnosis::Diagnose(job.value().store);
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
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace strata
