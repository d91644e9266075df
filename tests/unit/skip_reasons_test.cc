// The skip-reason table (core/skip_reasons) and its rendering (reports/skip_report): keys unique and
// well-formed, lookups of keys with a detail, every key a bad input produces is in the table, and every
// output (diagnosis JSON and text, summary JSON and text) shows the reason's severity and description.
#include "core/skip_reasons.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

#include "analysis/job_summary.h"
#include "reports/diagnosis_report.h"
#include "reports/segment_report.h"
#include "reports/skip_report.h"
#include "reports/summary_report.h"
#include "test_util.h"

namespace strata {
namespace {

TEST(SkipReasons, KeysAreUniqueSnakeCaseAndDescribed) {
  std::set<std::string_view> keys;
  for (const SkipReason& r : kSkipReasons) {
    EXPECT_TRUE(keys.insert(r.key).second) << "duplicate key " << r.key;
    for (char c : r.key) EXPECT_TRUE((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_') << r.key;
    EXPECT_GT(r.description.size(), 10u) << r.key;
    EXPECT_EQ(&Reason(r.id), &r);
  }
  EXPECT_EQ(keys.size(), static_cast<size_t>(SkipId::kCount));
}

TEST(SkipReasons, SeverityNames) {
  EXPECT_EQ(SeverityName(SkipSeverity::kInfo), "info");
  EXPECT_EQ(SeverityName(SkipSeverity::kDataLoss), "data_loss");
  EXPECT_EQ(SeverityName(SkipSeverity::kError), "error");
}

TEST(SkipReasons, KeysWithADetailMapBackToTheirRow) {
  EXPECT_EQ(SkipKey(SkipId::kUnsupportedPhase, "P"), "unsupported_phase_P");
  EXPECT_EQ(SkipKey(SkipId::kUnsupportedPhase), "unsupported_phase_other");
  EXPECT_EQ(SkipKey(SkipId::kNegativeDuration, "ignored"), "negative_duration");
  EXPECT_EQ(FindSkipReason("unsupported_phase_P"), &Reason(SkipId::kUnsupportedPhase));
  EXPECT_EQ(FindSkipReason("unreadable_distributedInfo"), &Reason(SkipId::kUnreadableMember));
  EXPECT_EQ(FindSkipReason("negative_duration"), &Reason(SkipId::kNegativeDuration));
  EXPECT_EQ(FindSkipReason("unsupported_phase"), nullptr);   // a detail reason needs its detail
  EXPECT_EQ(FindSkipReason("unsupported_phase_"), nullptr);  // ... a non-empty one
  EXPECT_EQ(FindSkipReason("negative_duration_x"), nullptr);
  EXPECT_EQ(FindSkipReason("no such reason"), nullptr);
}

// A Kineto trace and an op table with one event of (almost) every bad kind: every key they produce is a row
// of the table, so no importer counts a reason the outputs cannot describe.
TEST(SkipReasons, EveryKeyImportersProduceIsInTheTable) {
  const std::string json = R"({"traceEvents": [
{"ph": "X", "name": "a", "pid": 1, "tid": 1, "ts": 1, "dur": -1},
{"ph": "X", "name": "a", "pid": 1, "tid": 1, "ts": 1, "dur": 1e30},
{"ph": "X", "name": "a", "pid": 1, "tid": 1, "ts": 1},
{"ph": "X", "name": "a", "pid": 1, "tid": 1, "ts": "x", "dur": 1},
{"ph": "X", "name": "a", "pid": 1, "tid": 1, "ts": 1, "dur": 999999999999999},
{"ph": "X", "name": "a", "pid": [], "tid": 1, "ts": 1, "dur": 1},
{"ph": "B", "name": "a", "pid": 1, "tid": 1, "ts": 1},
{"ph": "E", "pid": 1, "tid": 2, "ts": 1},
{"ph": "s", "pid": 1, "tid": 2, "ts": 1},
{"ph": "P", "pid": 1, "tid": 2, "ts": 1},
{"name": "no phase"},
17,
{"ph": "X", "name": ")"
                           "\xff"
                           R"(", "pid": 1, "tid": 1, "ts": 1, "dur": 1}
]})";
  auto kineto = testing::ImportKinetoText(json);
  ASSERT_TRUE(kineto.ok()) << kineto.error();
  auto table = testing::ImportOpTableText(
      "rank,step,optype,start_ts,duration\n0,0,fwd,0,1\n0,0,fwd,0,1\nx,0,fwd,0,1\n0,x,fwd,0,1\n0,0,fwd,x,1\n0,0,fwd,0,"
      "x\n"
      "0,0,fwd,0,-1\n0,0,fwd\n0,0,fwd,0,99999999999999999999999\n");
  ASSERT_TRUE(table.ok()) << table.error();
  size_t keys = 0;
  for (const TraceStore* s : {&kineto.value(), &table.value()})
    for (const auto* counts : {&s->inputs[0].skipped, &s->inputs[0].repaired})
      for (const auto& [key, n] : *counts) {
        ++keys;
        EXPECT_NE(FindSkipReason(key), nullptr) << key << " is not in core/skip_reasons.h";
      }
  EXPECT_GE(keys, 18u);  // the inputs above do produce the reasons
}

diagnosis::DiagnosisResult ResultSkipping(const std::string& reason, uint64_t n) {
  diagnosis::DiagnosisResult r;
  r.status = "inconclusive";
  diagnosis::InputSummary in;
  in.path = "rank0.json";
  in.format = InputFormat::kKineto;
  in.events = 98;
  in.skipped[reason] = n;
  r.inputs.push_back(in);
  return r;
}

TEST(SkipReport, DiagnosisJsonDescribesEachReasonOnce) {
  const auto j = DiagnosisToJson(ResultSkipping("negative_duration", 2));
  EXPECT_EQ(j["inputs"][0]["skipped"]["negative_duration"], 2);  // the contract's map, unchanged
  ASSERT_TRUE(j.contains("skip_reasons")) << j.dump();
  EXPECT_EQ(j["skip_reasons"]["negative_duration"]["severity"], "error");
  EXPECT_EQ(j["skip_reasons"]["negative_duration"]["description"],
            std::string(Reason(SkipId::kNegativeDuration).description));
  EXPECT_FALSE(DiagnosisToJson(diagnosis::DiagnosisResult()).contains("skip_reasons"));
}

TEST(SkipReport, DiagnosisTextShowsSeverityAndDescription) {
  const std::string text = DiagnosisToText(ResultSkipping("begin_without_end", 2));
  EXPECT_NE(text.find("skipped events: 2 of 100 (2.00%):\n  begin_without_end 2 (data_loss): a B event never closed"),
            std::string::npos)
      << text;
}

TEST(SkipReport, LinesAreMostSevereFirst) {
  const std::string lines =
      SkipReasonLines({{"duplicate_row", 1}, {"end_without_begin", 3}, {"negative_duration", 2}}, "  ", 100);
  const size_t error = lines.find("negative_duration 2 (error)");
  const size_t loss = lines.find("end_without_begin 3 (data_loss)");
  const size_t info = lines.find("duplicate_row 1 (info)");
  ASSERT_NE(info, std::string::npos) << lines;
  EXPECT_LT(error, loss) << lines;
  EXPECT_LT(loss, info) << lines;
  EXPECT_NE(SkipReasonLines({{"made_up", 1}}, "", 100).find("made_up 1 (error)"), std::string::npos);
}

TEST(SkipReport, SummaryShowsSeverityAndDescription) {
  auto s = testing::ImportKinetoText(R"({"traceEvents": [
{"ph": "X", "name": "a", "pid": 1, "tid": 1, "ts": 1, "dur": 2},
{"ph": "X", "name": "b", "pid": 1, "tid": 1, "ts": 1, "dur": -2},
{"ph": "X", "name": ")"
                                     "\xff"
                                     R"(", "pid": 1, "tid": 1, "ts": 5, "dur": 1}]})");
  ASSERT_TRUE(s.ok()) << s.error();
  const JobSummary summary = Summarize(s.value(), BreakdownOptions());
  const std::string text = SummaryToText(s.value(), summary, SummaryTextOptions());
  EXPECT_NE(text.find("skipped events: 1:\n  negative_duration 1 (error): a slice whose duration is negative"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("repaired events (kept):\n  invalid_utf8_replaced 1 (info)"), std::string::npos) << text;
  const auto j = SummaryToJson(s.value(), summary);
  EXPECT_EQ(j["skip_reasons"]["negative_duration"]["severity"], "error") << j.dump();
  EXPECT_EQ(j["skip_reasons"]["invalid_utf8_replaced"]["severity"], "info") << j.dump();
}

TEST(SkipReport, InspectDescribesDroppedEvents) {
  RecordedSegment seg;
  seg.data.path = "run/host.sseg";
  seg.dropped_events = 7;
  const std::string text = SegmentToText(seg);
  EXPECT_NE(text.find("dropped events:\n  ring_buffer_full 7 (data_loss): recorder events the kernel dropped"),
            std::string::npos)
      << text;
  EXPECT_EQ(SegmentToJson(seg)["skip_reasons"]["ring_buffer_full"]["severity"], "data_loss");
  seg.dropped_events = 0;
  EXPECT_EQ(SegmentToText(seg).find("ring_buffer_full"), std::string::npos);
}

}  // namespace
}  // namespace strata
