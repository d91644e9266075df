// The skip-reason table (core/skip_reasons), the counts by reason (core/skip_counts) and their rendering
// (reports/skip_report): keys unique and well-formed, keys with a detail, scopes, counting and listing by
// key, what importers count, and every output (diagnosis JSON and text, summary JSON and text) showing the
// reason's severity, scope and description.
#include "core/skip_counts.h"

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>
#include <vector>

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
}

TEST(SkipReasons, ScopesSayWhatACountStandsFor) {
  EXPECT_EQ(ScopeName(SkipScope::kEvent), "event");
  EXPECT_EQ(ScopeName(SkipScope::kInputMember), "input_member");
  EXPECT_EQ(ScopeName(SkipScope::kExportItem), "export_item");
  EXPECT_EQ(Reason(SkipId::kUnreadableMember).scope, SkipScope::kInputMember);
  EXPECT_EQ(Reason(SkipId::kNegativeDuration).scope, SkipScope::kEvent);
  EXPECT_EQ(Reason(SkipId::kRingBufferFull).scope, SkipScope::kEvent);
  for (const SkipReason& r : kSkipReasons)  // every reason the export counts, and only those, is an export item
    EXPECT_EQ(r.scope == SkipScope::kExportItem, r.id >= SkipId::kExportFlowUnpaired) << r.key;
}

TEST(SkipCounts, CountsByReasonAndDetail) {
  SkipCounts c;
  EXPECT_TRUE(c.Empty());
  c.Add(SkipId::kNegativeDuration);
  c.Add(SkipId::kNegativeDuration, 2);
  c.Add(SkipId::kUnsupportedPhase, 3, "P");
  c.Add(SkipId::kUnsupportedPhase, 1);  // no detail: "other"
  c.Add(SkipId::kInvalidJson, 0);       // nothing
  EXPECT_EQ(c.Count(SkipId::kNegativeDuration), 3u);
  EXPECT_EQ(c.Count(SkipId::kUnsupportedPhase), 4u);
  EXPECT_EQ(c.Count(SkipId::kUnsupportedPhase, "P"), 3u);
  EXPECT_EQ(c.Count(SkipId::kUnsupportedPhase, "other"), 1u);
  EXPECT_EQ(c.Count(SkipId::kUnsupportedPhase, "B"), 0u);
  EXPECT_EQ(c.Count(SkipId::kInvalidJson), 0u);
  EXPECT_EQ(c.Total(), 7u);
  const std::vector<SkipCounts::Entry> e = c.Entries();  // by key, zero counts left out
  ASSERT_EQ(e.size(), 3u);
  EXPECT_EQ(e[0].key, "negative_duration");
  EXPECT_EQ(e[0].id, SkipId::kNegativeDuration);
  EXPECT_EQ(e[1].key, "unsupported_phase_P");
  EXPECT_EQ(e[2].key, "unsupported_phase_other");
  EXPECT_EQ(e[2].n, 1u);
  const std::map<std::string, uint64_t> expected = {
      {"negative_duration", 3}, {"unsupported_phase_P", 3}, {"unsupported_phase_other", 1}};
  EXPECT_EQ(c.ByKey(), expected);
}

TEST(SkipCounts, MergeAddsEveryCount) {
  SkipCounts a, b;
  a.Add(SkipId::kDuplicateRow, 2);
  a.Add(SkipId::kUnreadableMember, 1, "distributedInfo");
  b.Add(SkipId::kDuplicateRow, 3);
  b.Add(SkipId::kUnreadableMember, 1, "distributedInfo");
  b.Add(SkipId::kUnreadableMember, 1, "deviceProperties");
  a.Merge(b);
  EXPECT_EQ(a.Count(SkipId::kDuplicateRow), 5u);
  EXPECT_EQ(a.Count(SkipId::kUnreadableMember, "distributedInfo"), 2u);
  EXPECT_EQ(a.Count(SkipId::kUnreadableMember), 3u);
  EXPECT_EQ(a.Total(), 8u);
  EXPECT_FALSE(a == b);
  SkipCounts c = b;
  EXPECT_TRUE(c == b);
}

// A Kineto trace and an op table with one event of (almost) every bad kind: they produce the reasons, each
// counted as an event of the input (or, for a repair, kept), never as an item of the export.
TEST(SkipReasons, ImportersCountEventsOfTheirInput) {
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
    for (const SkipCounts* counts : {&s->inputs[0].skipped, &s->inputs[0].repaired})
      for (const SkipCounts::Entry& e : counts->Entries()) {
        ++keys;
        EXPECT_EQ(Reason(e.id).scope, SkipScope::kEvent) << e.key;
      }
  EXPECT_GE(keys, 18u);  // the inputs above do produce the reasons
}

diagnosis::DiagnosisResult ResultSkipping(SkipId reason, uint64_t n) {
  diagnosis::DiagnosisResult r;
  r.status = diagnosis::Verdict::kInconclusive;
  diagnosis::InputSummary in;
  in.path = "rank0.json";
  in.format = InputFormat::kKineto;
  in.events = 98;
  in.skipped.Add(reason, n);
  r.inputs.push_back(in);
  return r;
}

TEST(SkipReport, DiagnosisJsonDescribesEachReasonOnce) {
  const auto j = DiagnosisToJson(ResultSkipping(SkipId::kNegativeDuration, 2));
  EXPECT_EQ(j["inputs"][0]["skipped"]["negative_duration"], 2);  // the contract's map, unchanged
  ASSERT_TRUE(j.contains("skip_reasons")) << j.dump();
  EXPECT_EQ(j["skip_reasons"]["negative_duration"]["severity"], "error");
  EXPECT_EQ(j["skip_reasons"]["negative_duration"]["scope"], "event");
  EXPECT_EQ(j["skip_reasons"]["negative_duration"]["description"],
            std::string(Reason(SkipId::kNegativeDuration).description));
  EXPECT_FALSE(DiagnosisToJson(diagnosis::DiagnosisResult()).contains("skip_reasons"));
}

TEST(SkipReport, DiagnosisTextShowsSeverityAndDescription) {
  const std::string text = DiagnosisToText(ResultSkipping(SkipId::kBeginWithoutEnd, 2));
  EXPECT_NE(text.find("skipped events: 2 of 100 (2.00%):\n  begin_without_end 2 (data_loss): a B event never closed"),
            std::string::npos)
      << text;
}

TEST(SkipReport, LinesAreMostSevereFirst) {
  SkipCounts counts;
  counts.Add(SkipId::kDuplicateRow, 1);
  counts.Add(SkipId::kEndWithoutBegin, 3);
  counts.Add(SkipId::kNegativeDuration, 2);
  const std::string lines = SkipReasonLines(counts, "  ", 100);
  const size_t error = lines.find("negative_duration 2 (error)");
  const size_t loss = lines.find("end_without_begin 3 (data_loss)");
  const size_t info = lines.find("duplicate_row 1 (info)");
  ASSERT_NE(info, std::string::npos) << lines;
  EXPECT_LT(error, loss) << lines;
  EXPECT_LT(loss, info) << lines;
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
