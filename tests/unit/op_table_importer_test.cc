// Op-table CSV importer: the straggler-whatif layout, sorting, steps, layout columns, exact seconds -> ns,
// user column names, header errors and bad rows counted by reason.
#include "importers/op_table_importer.h"

#include <gtest/gtest.h>

#include <string>

#include "test_util.h"

namespace strata {
namespace {

using testing::ImportOpTableText;
using testing::SkippedCount;

const char* kHeader = "dp_rank,stage,rank,step,optype,start_ts,duration,seq_id,mc,mb_id,gmc\n";

TraceStore MustImport(const std::string& csv, const ImportOptions& options = ImportOptions()) {
  auto r = ImportOpTableText(csv, options);
  EXPECT_TRUE(r.ok()) << r.error();
  if (!r.ok()) return TraceStore();
  return std::move(r).value();
}

std::string_view Name(const TraceStore& s, size_t row) { return s.strings.view(s.slices.name[row]); }

TEST(OpTableImporter, StragglerWhatifLayout) {
  const std::string csv = std::string(kHeader) +
                          "1,3,7,16,forward-compute,2.6883304119110107,0.8543476462364197,0,0,0,0\n"
                          "0,0,0,16,backward-compute,4.096957206726074,0.8418064117431641,1,0,1,0\n"
                          "0,1,2,17,forward-send,10.5,0.000001,2,1,3,0\n"
                          "0,0,0,17,backward-compute,11,1,3,0,2,0\n";
  const TraceStore s = MustImport(csv);
  ASSERT_EQ(s.slices.size(), 4u);
  ASSERT_EQ(s.inputs.size(), 1u);
  EXPECT_EQ(s.inputs[0].format, InputFormat::kOpTable);
  EXPECT_EQ(s.inputs[0].events, 4u);
  EXPECT_TRUE(s.inputs[0].skipped.Empty());
  // Ranks sorted by rank whatever the row order.
  ASSERT_EQ(s.ranks.size(), 3u);
  EXPECT_EQ(s.ranks[0].rank, 0);
  EXPECT_EQ(s.ranks[1].rank, 2);
  EXPECT_EQ(s.ranks[2].rank, 7);
  for (const auto& r : s.ranks) EXPECT_EQ(r.rank_source, "column");
  // Layout.
  EXPECT_EQ(s.ranks[2].dp_rank, 1);
  EXPECT_EQ(s.ranks[2].pp_stage, 3);
  EXPECT_EQ(s.ranks[2].tp_rank, -1);  // no tp_rank column
  EXPECT_EQ(s.ranks[1].pp_stage, 1);
  EXPECT_EQ(s.ranks[0].events, 2u);
  EXPECT_EQ(s.ranks[0].categories.at("op"), 2u);
  // Rows keep file order; tracks point at the right (sorted) rank.
  EXPECT_EQ(Name(s, 0), "forward-compute");
  EXPECT_EQ(s.ranks[s.track(s.slices.track[0]).rank].rank, 7);
  EXPECT_EQ(s.ranks[s.track(s.slices.track[1]).rank].rank, 0);
  EXPECT_EQ(s.ranks[s.track(s.slices.track[2]).rank].rank, 2);
  EXPECT_EQ(s.slices.track[1], s.slices.track[3]);  // same rank, same op type
  EXPECT_EQ(s.track(s.slices.track[0]).kind, TrackKind::kOpTable);
  // Seconds -> ns exactly (rounded on the 10th fractional digit).
  EXPECT_EQ(s.slices.ts_ns[0], 2688330412LL);
  EXPECT_EQ(s.slices.dur_ns[0], 854347646LL);
  EXPECT_EQ(s.slices.ts_ns[2], 10500000000LL);
  EXPECT_EQ(s.slices.dur_ns[2], 1000);
  EXPECT_EQ(s.slices.ts_ns[3], 11000000000LL);
  // Steps.
  EXPECT_EQ(s.slices.step[0], 16);
  EXPECT_EQ(s.slices.step[2], 17);
  // Op layout side table.
  ASSERT_TRUE(s.slices.flags[2] & kSliceOpLayout);
  const OpLayout& l = s.op_layout.at(s.slices.args[2]);
  EXPECT_EQ(l.seq_id, 2);
  EXPECT_EQ(l.chunk, 1);
  EXPECT_EQ(l.microbatch, 3);
  EXPECT_EQ(s.strings.view(s.slices.category[0]), "op");
  EXPECT_TRUE(s.slices.flags[0] & kSliceComplete);
  EXPECT_TRUE(s.slices.flags[0] & kSliceHasCategory);
}

TEST(OpTableImporter, GzipCrlfBlankLinesAndQuotes) {
  const std::string csv =
      "\"rank\",step,optype,start_ts,duration\r\n\r\n0,1,\"fwd, with comma\",1.5,0.5\r\n\n1,1,bwd,2,1";
  testing::TempFile f(testing::GzipBytes(csv), ".csv.gz");
  auto src = ByteSource::Open(f.path());
  ASSERT_TRUE(src.ok());
  auto r = ImportOpTable(*src.value(), ImportOptions());
  ASSERT_TRUE(r.ok()) << r.error();
  const TraceStore& s = r.value();
  ASSERT_EQ(s.slices.size(), 2u);
  EXPECT_EQ(Name(s, 0), "fwd, with comma");
  EXPECT_EQ(s.slices.ts_ns[0], 1500000000);
  EXPECT_EQ(Name(s, 1), "bwd");  // last line without a newline
  EXPECT_EQ(s.slices.dur_ns[1], 1000000000);
  EXPECT_EQ(s.ranks[0].dp_rank, -1);
}

TEST(OpTableImporter, CustomColumnNamesAndUnit) {
  ImportOptions options;
  options.op_table.rank = "worker";
  options.op_table.step = "iter";
  options.op_table.op = "name";
  options.op_table.start = "begin_ms";
  options.op_table.duration = "len_ms";
  options.op_table.time_unit_ns = 1e6;
  const TraceStore s = MustImport("len_ms,name,iter,worker,begin_ms\n2.5,allreduce,3,1,100.0000005\n", options);
  ASSERT_EQ(s.slices.size(), 1u);
  EXPECT_EQ(Name(s, 0), "allreduce");
  EXPECT_EQ(s.slices.ts_ns[0], 100000001);  // ms -> ns, rounded on the 7th digit
  EXPECT_EQ(s.slices.dur_ns[0], 2500000);
  EXPECT_EQ(s.slices.step[0], 3);
  EXPECT_EQ(s.ranks.at(0).rank, 1);
}

TEST(OpTableImporter, MissingColumnIsAnErrorNamingItAndListingColumns) {
  std::string path;
  auto r = ImportOpTableText("rank,step,op,start_ts,duration\n0,1,x,1,1\n", ImportOptions(), &path);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().find(path), std::string::npos) << r.error();
  EXPECT_NE(r.error().find("no column 'optype'"), std::string::npos) << r.error();
  EXPECT_NE(r.error().find("'rank', 'step', 'op', 'start_ts', 'duration'"), std::string::npos) << r.error();
  EXPECT_NE(r.error().find("--col-op"), std::string::npos) << r.error();
}

TEST(OpTableImporter, EmptyFileIsAnError) {
  std::string path;
  auto r = ImportOpTableText("\n\n", ImportOptions(), &path);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().find(path), std::string::npos) << r.error();
  EXPECT_NE(r.error().find("no header"), std::string::npos) << r.error();
}

TEST(OpTableImporter, BadRowsAreCountedByReason) {
  const std::string csv = std::string(kHeader) +
                          "0,0,0,1,fwd,1,1,0,0,0,0\n"             // good
                          "0,0,0,1,fwd,1,1,0,0,0\n"               // wrong_column_count
                          "0,0,0,1,fwd,1,1,0,0,0,0,9\n"           // wrong_column_count
                          "0,0,x,1,fwd,1,1,0,0,0,0\n"             // invalid_rank
                          "0,0,-1,1,fwd,1,1,0,0,0,0\n"            // invalid_rank
                          "0,0,1.5,1,fwd,1,1,0,0,0,0\n"           // invalid_rank
                          "0,0,0,s,fwd,1,1,0,0,0,0\n"             // invalid_step
                          "0,0,0,1,fwd,abc,1,0,0,0,0\n"           // invalid_timestamp
                          "0,0,0,1,fwd,,1,0,0,0,0\n"              // invalid_timestamp
                          "0,0,0,1,fwd,1,one,0,0,0,0\n"           // invalid_duration
                          "0,0,0,1,fwd,1,-0.5,0,0,0,0\n"          // negative_duration
                          "0,0,0,1,fwd,1,999999999,0,0,0,0\n"     // absurd_duration (> a week)
                          "0,0,0,1,fwd,99999999999,1,0,0,0,0\n"   // integer_out_of_range (as ns)
                          "0,0,0,1,fwd,9223372036.5,1,0,0,0,0\n"  // end beyond int64
                          "0,0,0,1,fwd,2,3,0,0,0,0\n";            // good
  const TraceStore s = MustImport(csv);
  EXPECT_EQ(s.slices.size(), 2u);
  EXPECT_EQ(SkippedCount(s, "wrong_column_count"), 2u);
  EXPECT_EQ(SkippedCount(s, "invalid_rank"), 3u);
  EXPECT_EQ(SkippedCount(s, "invalid_step"), 1u);
  EXPECT_EQ(SkippedCount(s, "invalid_timestamp"), 2u);
  EXPECT_EQ(SkippedCount(s, "invalid_duration"), 1u);
  EXPECT_EQ(SkippedCount(s, "negative_duration"), 1u);
  EXPECT_EQ(SkippedCount(s, "absurd_duration"), 1u);
  EXPECT_EQ(SkippedCount(s, "integer_out_of_range"), 2u);
  EXPECT_EQ(s.inputs[0].events + testing::TotalSkipped(s), 15u);
}

TEST(OpTableImporter, HeaderOnly) {
  const TraceStore s = MustImport(kHeader);
  EXPECT_EQ(s.slices.size(), 0u);
  EXPECT_TRUE(s.ranks.empty());
}

TEST(OpTableImporter, RealStragglerWhatifFile) {
  const std::string path = testing::SharedDir() + "/datasets/straggler-whatif/trace-AR.csv.gz";
  if (!testing::Exists(path)) GTEST_SKIP() << "dataset absent: " << path;
  auto src = ByteSource::Open(path);
  ASSERT_TRUE(src.ok()) << src.error();
  auto r = ImportOpTable(*src.value(), ImportOptions());
  ASSERT_TRUE(r.ok()) << r.error();
  const TraceStore& s = r.value();
  EXPECT_TRUE(s.inputs[0].skipped.Empty());
  EXPECT_GT(s.slices.size(), 1000u);
  ASSERT_GT(s.ranks.size(), 1u);
  for (size_t i = 1; i < s.ranks.size(); ++i) EXPECT_LT(s.ranks[i - 1].rank, s.ranks[i].rank);
  for (const auto& rank : s.ranks) {
    EXPECT_GE(rank.dp_rank, 0);
    EXPECT_GE(rank.pp_stage, 0);
  }
  // First data row of the file: 0,0,0,16,backward-compute,2.6883304119110107,0.8543476462364197,...
  EXPECT_EQ(s.slices.ts_ns[0], 2688330412LL);
  EXPECT_EQ(s.slices.dur_ns[0], 854347646LL);
  EXPECT_EQ(s.slices.step[0], 16);
}

}  // namespace
}  // namespace strata

namespace strata {
namespace {

// Issue 10: files pandas, Excel and Spark write give the same rows as the plain layout, and bad rows are
// skipped and counted (exact duplicates too) without changing the rows that are good.
constexpr const char* kDialectHeader = "rank,step,optype,start_ts,duration\n";
constexpr const char* kDialectRows = "0,1,forward-compute,1.5,0.25\n1,1,\"forward-compute\",1.75,0.5\n";

TEST(OpTableDialects, BomSemicolonTabAndQuotedFieldsGiveTheSameRows) {
  const TraceStore plain = MustImport(std::string(kDialectHeader) + kDialectRows);
  ASSERT_EQ(plain.slices.size(), 2u);
  auto replace_all = [](std::string s, char from, char to) {
    std::replace(s.begin(), s.end(), from, to);
    return s;
  };
  const std::string base = std::string(kDialectHeader) + kDialectRows;
  for (const std::string& variant :
       {"\xEF\xBB\xBF" + base, replace_all(base, ',', ';'), replace_all(base, ',', '\t'),
        std::string("\"rank\",\"step\",\"optype\",\"start_ts\",\"duration\"\r\n") +
            "0,1,forward-compute,1.5,0.25\r\n\"1\",\"1\",\"forward-compute\",\"1.75\",\"0.5\"\r\n"}) {
    const TraceStore s = MustImport(variant);
    ASSERT_EQ(s.slices.size(), 2u) << variant;
    for (size_t i = 0; i < 2; ++i) {
      EXPECT_EQ(s.slices.ts_ns[i], plain.slices.ts_ns[i]) << variant;
      EXPECT_EQ(s.slices.dur_ns[i], plain.slices.dur_ns[i]) << variant;
      EXPECT_EQ(s.strings.view(s.slices.name[i]), "forward-compute") << variant;
    }
  }
}

TEST(OpTableDialects, DuplicateNanAndRaggedRowsAreSkippedByReason) {
  const std::string text = std::string(kDialectHeader) + kDialectRows +
                           "0,1,forward-compute,1.5,0.25\n"   // an exact copy of the first row
                           "0,2,forward-compute,NaN,0.25\n"   // NaN start
                           "0,2,forward-compute,2.5,nan\n"    // NaN duration
                           "0,2,forward-compute,2.5\n"        // a field short
                           "0,2,forward-compute,2.5,0.5,9\n"  // a field too many
                           "0,2,forward-compute,3.5,0.25\n";
  const TraceStore s = MustImport(text);
  EXPECT_EQ(s.slices.size(), 3u);
  EXPECT_EQ(s.inputs[0].events, 3u);
  EXPECT_EQ(testing::SkippedCount(s, "duplicate_row"), 1u);
  EXPECT_EQ(testing::SkippedCount(s, "invalid_timestamp"), 1u);
  EXPECT_EQ(testing::SkippedCount(s, "invalid_duration"), 1u);
  EXPECT_EQ(testing::SkippedCount(s, "wrong_column_count"), 2u);
  uint64_t rank_events = 0;
  for (const RankInfo& r : s.ranks) rank_events += r.events;
  EXPECT_EQ(rank_events, 3u);
}

}  // namespace
}  // namespace strata
