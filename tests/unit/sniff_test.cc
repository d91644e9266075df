// SniffFormat: decides the importer from the first decompressed bytes.
#include "importers/sniff.h"

#include <gtest/gtest.h>

#include <string>

namespace strata {
namespace {

TEST(Sniff, JsonObject) {
  EXPECT_EQ(SniffFormat(R"({"traceEvents": []})"), SniffedFormat::kChromeJson);
  EXPECT_EQ(SniffFormat("{"), SniffedFormat::kChromeJson);
}

TEST(Sniff, BareArray) { EXPECT_EQ(SniffFormat(R"([{"ph":"X"}])"), SniffedFormat::kChromeJson); }

TEST(Sniff, ByteOrderMark) {
  EXPECT_EQ(SniffFormat("\xEF\xBB\xBF{\"traceEvents\":[]}"), SniffedFormat::kChromeJson);
  EXPECT_EQ(SniffFormat("\xEF\xBB\xBF  \n[]"), SniffedFormat::kChromeJson);
  EXPECT_EQ(SniffFormat("\xEF\xBB\xBF"
                        "rank,step,optype\n"),
            SniffedFormat::kOpTableCsv);
}

TEST(Sniff, LeadingWhitespace) {
  EXPECT_EQ(SniffFormat("   \n\t\r\n  {\"traceEvents\": []}"), SniffedFormat::kChromeJson);
  EXPECT_EQ(SniffFormat("\n\n[\n]"), SniffedFormat::kChromeJson);
}

TEST(Sniff, CsvHeader) {
  EXPECT_EQ(
      SniffFormat("dp_rank,stage,rank,step,optype,start_ts,duration,seq_id,mc,mb_id,gmc\n0,0,0,16,f,1,2,0,0,0,0\n"),
      SniffedFormat::kOpTableCsv);
  EXPECT_EQ(SniffFormat("rank,step\r\n1,2\r\n"), SniffedFormat::kOpTableCsv);
  EXPECT_EQ(SniffFormat("\"rank\",\"start (s)\",dur-ms"), SniffedFormat::kOpTableCsv);  // header without newline yet
}

TEST(Sniff, NotACsvHeader) {
  EXPECT_EQ(SniffFormat("just one column\n1\n"), SniffedFormat::kUnknown);
  EXPECT_EQ(SniffFormat("<html><body>"), SniffedFormat::kUnknown);
  EXPECT_EQ(SniffFormat("key: value\nother: 2\n"), SniffedFormat::kUnknown);  // YAML, not a table
}

TEST(Sniff, SemicolonAndTabHeadersAreTablesToo) {
  // Excel in comma-decimal locales writes ';', many tools write tabs.
  EXPECT_EQ(SniffFormat("a;b;c\n"), SniffedFormat::kOpTableCsv);
  EXPECT_EQ(SniffFormat("rank\tstep\toptype\n0\t1\tx\n"), SniffedFormat::kOpTableCsv);
  EXPECT_EQ(SniffFormat("\xEF\xBB\xBFrank;step\n"), SniffedFormat::kOpTableCsv);
}

TEST(Sniff, BinaryGarbage) {
  EXPECT_EQ(SniffFormat(std::string("\x00\x01\x02\x03,\xff\xfe", 7)), SniffedFormat::kUnknown);
  EXPECT_EQ(SniffFormat("\x1f\x8b\x08\x00"), SniffedFormat::kUnknown);  // gzip magic: ByteSource should have inflated
  EXPECT_EQ(SniffFormat("PK\x03\x04,"), SniffedFormat::kUnknown);
}

TEST(Sniff, Empty) {
  EXPECT_EQ(SniffFormat(""), SniffedFormat::kUnknown);
  EXPECT_EQ(SniffFormat("   \n\t "), SniffedFormat::kUnknown);
  EXPECT_EQ(SniffFormat("\xEF\xBB\xBF"), SniffedFormat::kUnknown);
}

TEST(Sniff, FormatNames) {
  EXPECT_STREQ(FormatName(SniffedFormat::kChromeJson), "chrome-json");
  EXPECT_STREQ(FormatName(SniffedFormat::kOpTableCsv), "op-table-csv");
  EXPECT_STREQ(FormatName(SniffedFormat::kUnknown), "unknown");
}

}  // namespace
}  // namespace strata
